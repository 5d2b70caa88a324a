/// Decides how a file's bytes are text: binary detection and encoding detection.
///
/// The order is: a UTF-16 byte order mark wins; otherwise a NUL byte in the first 8 KiB means
/// binary; otherwise valid UTF-8 (an optional BOM is dropped, and a character cut off by the end
/// of a prefix is tolerated); otherwise mostly printable bytes are Windows-1252; otherwise the
/// bytes are not text.
enum ExtractionTextDecoding {
    /// What the bytes of a file are.
    enum Classification: Equatable {
        /// UTF-16 with a byte order mark.
        case utf16(bigEndian: Bool)
        /// UTF-8: the text is `bytes[start..<end]` (skipping a BOM and an incomplete last character).
        case utf8(start: Int, end: Int)
        /// A single-byte encoding, read as Windows-1252.
        case windows1252
        /// Binary data.
        case binary
        /// Not text in any supported encoding.
        case notText
    }

    /// How many leading bytes are searched for a NUL.
    static let binaryProbeLength = 8 << 10

    /// Classifies `bytes`.
    static func classify(
        _ bytes: UnsafeBufferPointer<UInt8>, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> Classification {
        let count = bytes.count
        if count >= 2 {
            if bytes[0] == 0xFF, bytes[1] == 0xFE { return .utf16(bigEndian: false) }
            if bytes[0] == 0xFE, bytes[1] == 0xFF { return .utf16(bigEndian: true) }
        }
        if ExtractionBytes.firstIndex(of: 0, in: bytes, from: 0, to: min(count, binaryProbeLength)) != nil {
            return .binary
        }
        let start = count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
        if let end = try validUTF8End(bytes, from: start, deadline: deadline) {
            return .utf8(start: start, end: end)
        }
        return try isMostlyPrintable(bytes, deadline: deadline) ? .windows1252 : .notText
    }

    /// The end of the valid UTF-8 in `bytes[from...]`: `bytes.count` when all of it is valid,
    /// the start of an incomplete last character when only that is wrong, nil otherwise.
    static func validUTF8End(
        _ bytes: UnsafeBufferPointer<UInt8>, from: Int, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> Int? {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var index = from
        var ticker = ExtractionTicker()
        while index < count {
            try ticker.tick(index, deadline)
            // ASCII fast path: eight bytes at a time.
            if index + 8 <= count {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                if word & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                    continue
                }
            }
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var secondLow: UInt8 = 0x80
            var secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                secondLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                secondHigh = 0x9F
            case 0xF0:
                length = 4
                secondLow = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                secondHigh = 0x8F
            default: return nil
            }
            if index + length > count {
                // A character cut off by the end of the bytes (a prefix of a larger file).
                for offset in 1..<(count - index) where bytes[index + offset] & 0xC0 != 0x80 {
                    return nil
                }
                return index
            }
            let second = bytes[index + 1]
            if second < secondLow || second > secondHigh { return nil }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 {
                return nil
            }
            index += length
        }
        return count
    }

    /// Whether fewer than 10% of the bytes are control characters (other than tab, LF, CR, FF)
    /// or code points that Windows-1252 leaves undefined.
    static func isMostlyPrintable(
        _ bytes: UnsafeBufferPointer<UInt8>, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> Bool {
        var controls = 0
        var ticker = ExtractionTicker()
        var index = 0
        while index < bytes.count {
            try ticker.tick(index, deadline)
            let end = min(bytes.count, index + ExtractionDeadline.stride)
            while index < end {
                let byte = bytes[index]
                if byte < 0x20 {
                    if byte != 0x09, byte != 0x0A, byte != 0x0C, byte != 0x0D { controls += 1 }
                } else if byte == 0x7F || byte == 0x81 || byte == 0x8D || byte == 0x8F
                    || byte == 0x90 || byte == 0x9D
                {
                    controls += 1
                }
                index += 1
            }
        }
        return controls * 10 < bytes.count || bytes.isEmpty
    }

    /// Whether `bytes` as a whole are valid UTF-8 (no deadline: for short header and part text).
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            // An unlimited deadline never throws.
            (try? validUTF8End(buffer, from: 0, deadline: .unlimited)) == buffer.count
        }
    }
}
