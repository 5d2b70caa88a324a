/// Small helpers for working on UTF-8 and ASCII bytes.
///
/// Extraction works on `[UInt8]` rather than `String` so that hot loops never iterate
/// `Character`s; these helpers are the shared vocabulary (ASCII classes, trimming, searching,
/// UTF-8 encoding) and are namespaced so they cannot clash with other code in the module.
enum ExtractionBytes {
    static let tab: UInt8 = 0x09
    static let newline: UInt8 = 0x0A
    static let formFeed: UInt8 = 0x0C
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20

    /// Whether `byte` is ASCII horizontal or vertical white space (space, tab, CR, LF, FF, VT).
    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == space || (byte >= tab && byte <= carriageReturn)
    }

    /// Whether `byte` is an ASCII letter.
    @inline(__always)
    static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A
    }

    /// Whether `byte` is an ASCII digit.
    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= 0x30 && byte <= 0x39
    }

    /// The ASCII lowercase form of `byte`; other bytes are returned unchanged.
    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// The range of `bytes[range]` without leading and trailing white space.
    static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// `bytes` without leading and trailing white space.
    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes[trimmed(bytes, 0..<bytes.count)])
    }

    /// The first index of `byte` in `bytes[from..<to]`, or nil.
    @inline(__always)
    static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        var index = from
        while index < to {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// The first index where `needle` occurs in `bytes[from..<to]`, or nil.
    ///
    /// With `ignoringCase`, ASCII letters in `bytes` match the lowercase letters of `needle`
    /// (so `needle` must be lowercase).
    static func firstIndex(
        of needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int,
        ignoringCase: Bool = false
    ) -> Int? {
        guard let first = needle.first, to - from >= needle.count else { return nil }
        let last = to - needle.count
        let upperFirst = ignoringCase && isLetter(first) ? first & ~0x20 : first
        var index = from
        while index <= last {
            let byte = bytes[index]
            if byte == first || byte == upperFirst {
                var offset = 1
                while offset < needle.count {
                    let candidate = bytes[index + offset]
                    let folded = ignoringCase ? lowercased(candidate) : candidate
                    if folded != needle[offset] { break }
                    offset += 1
                }
                if offset == needle.count { return index }
            }
            index += 1
        }
        return nil
    }

    /// Whether `bytes[at...]` starts with `prefix` (ASCII case-insensitively when asked; `prefix`
    /// must then be lowercase).
    static func hasPrefix(
        _ prefix: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, at: Int, ignoringCase: Bool = false
    ) -> Bool {
        guard at >= 0, bytes.count - at >= prefix.count else { return false }
        for offset in 0..<prefix.count {
            let byte = bytes[at + offset]
            if (ignoringCase ? lowercased(byte) : byte) != prefix[offset] { return false }
        }
        return true
    }

    /// Appends the UTF-8 encoding of a Unicode scalar value; invalid values become U+FFFD.
    @inline(__always)
    static func appendUTF8(_ value: UInt32, to output: inout [UInt8]) {
        var value = value
        if value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF) { value = 0xFFFD }
        if value < 0x80 {
            output.append(UInt8(value))
        } else if value < 0x800 {
            output.append(UInt8(0xC0 | (value >> 6)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        } else if value < 0x10000 {
            output.append(UInt8(0xE0 | (value >> 12)))
            output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        } else {
            output.append(UInt8(0xF0 | (value >> 18)))
            output.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (value & 0x3F)))
        }
    }

    /// A string from UTF-8 bytes (invalid sequences, which callers avoid, become U+FFFD).
    static func string(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// A string from UTF-8 `bytes` without leading and trailing white space, or nil when nothing
    /// is left.
    static func trimmedString(_ bytes: [UInt8]) -> String? {
        let range = trimmed(bytes, 0..<bytes.count)
        return range.isEmpty ? nil : String(decoding: bytes[range], as: UTF8.self)
    }

    /// `bytes` with every run of white space (including line breaks) replaced by one space and
    /// the ends trimmed: the form used for titles.
    static func collapsedLine(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pendingSpace = false
        for byte in bytes {
            if isWhitespace(byte) {
                pendingSpace = !output.isEmpty
            } else {
                if pendingSpace { output.append(space) }
                pendingSpace = false
                output.append(byte)
            }
        }
        return output
    }
}
