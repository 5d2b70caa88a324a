/// Decodes RFC 2047 encoded-words (`=?UTF-8?B?...?=`, `=?ISO-8859-1?Q?...?=`) in header text.
///
/// White space between two adjacent encoded-words is dropped; the decoded bytes of adjacent
/// words in the same charset are joined before conversion, so a character split across two
/// words survives. Text that merely looks like an encoded-word but is malformed is kept as is.
enum MailEncodedWords {
    /// `text` (UTF-8) with its encoded-words decoded, as UTF-8.
    static func decode(_ text: [UInt8]) -> [UInt8] {
        guard text.count >= 8, text.contains(UInt8(ascii: "?")) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var pending: [UInt8] = []
        var pendingCharset = ""
        func flush() {
            if !pending.isEmpty { output.append(contentsOf: MailCharset.toUTF8(pending, charset: pendingCharset)) }
            pending.removeAll(keepingCapacity: true)
        }
        var index = 0
        var afterWord = false
        while index < text.count {
            if let word = encodedWord(text, at: index) {
                if word.charset != pendingCharset { flush() }
                pendingCharset = word.charset
                pending.append(contentsOf: word.bytes)
                index = word.end
                afterWord = true
                continue
            }
            if afterWord, ExtractionBytes.isWhitespace(text[index]) {
                var next = index
                while next < text.count, ExtractionBytes.isWhitespace(text[next]) { next += 1 }
                if encodedWord(text, at: next) != nil {
                    index = next
                    continue
                }
            }
            flush()
            afterWord = false
            output.append(text[index])
            index += 1
        }
        flush()
        return output
    }

    /// The longest encoded-word payload accepted (RFC 2047 allows 75 characters in all).
    private static let maximumPayload = 1024

    /// The encoded-word starting at `start`: its lowercase charset (language suffix removed), its
    /// decoded bytes and the index after it; nil when there is none.
    private static func encodedWord(_ text: [UInt8], at start: Int) -> (charset: String, bytes: [UInt8], end: Int)? {
        guard start + 1 < text.count, text[start] == UInt8(ascii: "="), text[start + 1] == UInt8(ascii: "?") else {
            return nil
        }
        let question = UInt8(ascii: "?")
        var index = start + 2
        let charsetStart = index
        while index < text.count, text[index] != question {
            if ExtractionBytes.isWhitespace(text[index]) || index - charsetStart > 64 { return nil }
            index += 1
        }
        guard index + 2 < text.count, index > charsetStart, text[index + 2] == question else { return nil }
        let encoding = text[index + 1] | 0x20
        guard encoding == UInt8(ascii: "b") || encoding == UInt8(ascii: "q") else { return nil }
        var charset = Array(text[charsetStart..<index]).map(ExtractionBytes.lowercased)
        if let star = charset.firstIndex(of: UInt8(ascii: "*")) { charset.removeSubrange(star...) }
        let payloadStart = index + 3
        index = payloadStart
        while index + 1 < text.count, !(text[index] == question && text[index + 1] == UInt8(ascii: "=")) {
            // RFC 2047 words are at most 75 characters; the generous cap keeps scanning linear.
            if ExtractionBytes.isWhitespace(text[index]) || index - payloadStart > maximumPayload { return nil }
            index += 1
        }
        guard index + 1 < text.count else { return nil }
        let payload = Array(text[payloadStart..<index])
        let bytes =
            encoding == UInt8(ascii: "b")
            ? MailTransferDecoding.base64(payload)
            : MailTransferDecoding.quotedPrintable(payload, underscoreIsSpace: true)
        return (String(decoding: charset, as: UTF8.self), bytes, index + 2)
    }
}

/// Converts text in a declared charset to UTF-8.
///
/// UTF-8 and US-ASCII are checked and fall back to Windows-1252; ISO-8859-1, Latin-1 and
/// Windows-1252 are read as Windows-1252 (as browsers do); ISO-8859-15 has its eight
/// differences applied; any other charset is tried as UTF-8, then Windows-1252.
enum MailCharset {
    /// `bytes` in `charset` as UTF-8.
    static func toUTF8(_ bytes: [UInt8], charset: String?) -> [UInt8] {
        let name = charset.map { $0.lowercased().trimmingSpaces() } ?? ""
        switch name {
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819",
            "windows-1252", "cp1252", "x-cp1252", "win-1252":
            return ExtractionTranscoding.windows1252ToUTF8(bytes)
        case "iso-8859-15", "iso8859-15", "iso_8859-15", "latin9", "latin-9":
            return latin9ToUTF8(bytes)
        default:
            return ExtractionTranscoding.utf8OrWindows1252(bytes)
        }
    }

    /// ISO-8859-15 bytes as UTF-8.
    private static func latin9ToUTF8(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 8)
        for byte in bytes {
            let value: UInt32 =
                switch byte {
                case 0xA4: 0x20AC
                case 0xA6: 0x0160
                case 0xA8: 0x0161
                case 0xB4: 0x017D
                case 0xB8: 0x017E
                case 0xBC: 0x0152
                case 0xBD: 0x0153
                case 0xBE: 0x0178
                default: ExtractionTranscoding.windows1252Scalar(byte)
                }
            ExtractionBytes.appendUTF8(value, to: &output)
        }
        return output
    }
}

extension String {
    /// The string without leading and trailing spaces and quotes.
    fileprivate func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\"" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\"" { scalars.removeLast() }
        return String(scalars)
    }
}
