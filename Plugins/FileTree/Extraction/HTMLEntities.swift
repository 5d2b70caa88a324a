/// HTML character references: the HTML 4 named entities plus `&apos;`, and decimal and hex
/// numeric references.
///
/// Names are case-sensitive (`&Eacute;` is not `&eacute;`) and need their closing semicolon.
/// Numeric references may omit it; code points that are not valid scalars become U+FFFD, and
/// 0x80–0x9F are read as Windows-1252 as browsers do.
enum HTMLEntities {
    /// The entity names for U+00A0 through U+00FF, in code point order.
    private static let latin1Names = [
        "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect",
        "uml", "copy", "ordf", "laquo", "not", "shy", "reg", "macr",
        "deg", "plusmn", "sup2", "sup3", "acute", "micro", "para", "middot",
        "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
        "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil",
        "Egrave", "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml",
        "ETH", "Ntilde", "Ograve", "Oacute", "Ocirc", "Otilde", "Ouml", "times",
        "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN", "szlig",
        "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil",
        "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml",
        "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml", "divide",
        "oslash", "ugrave", "uacute", "ucirc", "uuml", "yacute", "thorn", "yuml",
    ]

    /// Greek capital letters from U+0391 (U+03A2 is unassigned and skipped by the empty name).
    private static let greekCapitalNames = [
        "Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta", "Eta", "Theta", "Iota", "Kappa",
        "Lambda", "Mu", "Nu", "Xi", "Omicron", "Pi", "Rho", "", "Sigma", "Tau", "Upsilon", "Phi",
        "Chi", "Psi", "Omega",
    ]

    /// Greek small letters from U+03B1.
    private static let greekSmallNames = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigmaf", "sigma", "tau", "upsilon",
        "phi", "chi", "psi", "omega",
    ]

    /// The remaining named entities.
    private static let otherEntities: [(String, UInt32)] = [
        ("quot", 0x22), ("amp", 0x26), ("apos", 0x27), ("lt", 0x3C), ("gt", 0x3E),
        ("OElig", 0x152), ("oelig", 0x153), ("Scaron", 0x160), ("scaron", 0x161),
        ("Yuml", 0x178), ("fnof", 0x192), ("circ", 0x2C6), ("tilde", 0x2DC),
        ("thetasym", 0x3D1), ("upsih", 0x3D2), ("piv", 0x3D6),
        ("ensp", 0x2002), ("emsp", 0x2003), ("thinsp", 0x2009), ("zwnj", 0x200C),
        ("zwj", 0x200D), ("lrm", 0x200E), ("rlm", 0x200F), ("ndash", 0x2013),
        ("mdash", 0x2014), ("lsquo", 0x2018), ("rsquo", 0x2019), ("sbquo", 0x201A),
        ("ldquo", 0x201C), ("rdquo", 0x201D), ("bdquo", 0x201E), ("dagger", 0x2020),
        ("Dagger", 0x2021), ("bull", 0x2022), ("hellip", 0x2026), ("permil", 0x2030),
        ("prime", 0x2032), ("Prime", 0x2033), ("lsaquo", 0x2039), ("rsaquo", 0x203A),
        ("oline", 0x203E), ("frasl", 0x2044), ("euro", 0x20AC), ("image", 0x2111),
        ("weierp", 0x2118), ("real", 0x211C), ("trade", 0x2122), ("alefsym", 0x2135),
        ("larr", 0x2190), ("uarr", 0x2191), ("rarr", 0x2192), ("darr", 0x2193),
        ("harr", 0x2194), ("crarr", 0x21B5), ("lArr", 0x21D0), ("uArr", 0x21D1),
        ("rArr", 0x21D2), ("dArr", 0x21D3), ("hArr", 0x21D4), ("forall", 0x2200),
        ("part", 0x2202), ("exist", 0x2203), ("empty", 0x2205), ("nabla", 0x2207),
        ("isin", 0x2208), ("notin", 0x2209), ("ni", 0x220B), ("prod", 0x220F),
        ("sum", 0x2211), ("minus", 0x2212), ("lowast", 0x2217), ("radic", 0x221A),
        ("prop", 0x221D), ("infin", 0x221E), ("ang", 0x2220), ("and", 0x2227),
        ("or", 0x2228), ("cap", 0x2229), ("cup", 0x222A), ("int", 0x222B),
        ("there4", 0x2234), ("sim", 0x223C), ("cong", 0x2245), ("asymp", 0x2248),
        ("ne", 0x2260), ("equiv", 0x2261), ("le", 0x2264), ("ge", 0x2265),
        ("sub", 0x2282), ("sup", 0x2283), ("nsub", 0x2284), ("sube", 0x2286),
        ("supe", 0x2287), ("oplus", 0x2295), ("otimes", 0x2297), ("perp", 0x22A5),
        ("sdot", 0x22C5), ("lceil", 0x2308), ("rceil", 0x2309), ("lfloor", 0x230A),
        ("rfloor", 0x230B), ("lang", 0x27E8), ("rang", 0x27E9), ("loz", 0x25CA),
        ("spades", 0x2660), ("clubs", 0x2663), ("hearts", 0x2665), ("diams", 0x2666),
    ]

    /// Every named entity, keyed by its packed name.
    static let named: [UInt64: UInt32] = {
        var table: [UInt64: UInt32] = [:]
        func add(_ name: String, _ value: UInt32) {
            guard !name.isEmpty, let key = pack(Array(name.utf8)) else { return }
            table[key] = value
        }
        for (offset, name) in latin1Names.enumerated() { add(name, 0xA0 + UInt32(offset)) }
        for (offset, name) in greekCapitalNames.enumerated() { add(name, 0x391 + UInt32(offset)) }
        for (offset, name) in greekSmallNames.enumerated() { add(name, 0x3B1 + UInt32(offset)) }
        for (name, value) in otherEntities { add(name, value) }
        return table
    }()

    /// The longest entity name that can be packed.
    static let maximumNameLength = 10

    /// Six bits per name character (letters case-sensitive, digits), so up to ten characters fit
    /// in a UInt64; nil for other characters or longer names.
    @inline(__always)
    static func packCharacter(_ byte: UInt8) -> UInt64? {
        switch byte {
        case 0x61...0x7A: UInt64(byte - 0x61 + 1)
        case 0x41...0x5A: UInt64(byte - 0x41 + 27)
        case 0x30...0x39: UInt64(byte - 0x30 + 53)
        default: nil
        }
    }

    /// A packed entity name, or nil when it has other characters or is too long.
    static func pack(_ name: [UInt8]) -> UInt64? {
        guard name.count <= maximumNameLength else { return nil }
        var key: UInt64 = 0
        for byte in name {
            guard let code = packCharacter(byte) else { return nil }
            key = key << 6 | code
        }
        return key
    }

    /// Decodes the character reference starting at the `&` at `start`.
    ///
    /// Returns the code point and the index just past the reference, or nil when the text is not
    /// a reference (the `&` is then literal text).
    static func decode(_ input: UnsafeBufferPointer<UInt8>, at start: Int) -> (value: UInt32, end: Int)? {
        let count = input.count
        var index = start + 1
        guard index < count else { return nil }
        if input[index] == UInt8(ascii: "#") {
            index += 1
            var hex = false
            if index < count, input[index] | 0x20 == UInt8(ascii: "x") {
                hex = true
                index += 1
            }
            let digitsStart = index
            var value: UInt32 = 0
            while index < count {
                let digit: UInt8?
                if hex {
                    digit = ExtractionBytes.hexValue(input[index])
                } else {
                    digit = ExtractionBytes.isDigit(input[index]) ? input[index] - 0x30 : nil
                }
                guard let digit else { break }
                // Saturate above the Unicode range; the value is replaced below anyway.
                value = value > 0x10FFFF ? value : value * (hex ? 16 : 10) + UInt32(digit)
                index += 1
            }
            guard index > digitsStart else { return nil }
            if index < count, input[index] == UInt8(ascii: ";") { index += 1 }
            switch value {
            case 0, 0xD800...0xDFFF, 0x110000...: value = 0xFFFD
            case 0x80...0x9F: value = ExtractionTranscoding.windows1252Scalar(UInt8(value))
            default: break
            }
            return (value, index)
        }
        var key: UInt64 = 0
        let nameStart = index
        while index < count, index - nameStart < maximumNameLength, let code = packCharacter(input[index]) {
            key = key << 6 | code
            index += 1
        }
        guard index > nameStart, index < count, input[index] == UInt8(ascii: ";"),
            let value = named[key]
        else { return nil }
        return (value, index + 1)
    }
}
