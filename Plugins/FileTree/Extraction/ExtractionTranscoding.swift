/// Converts text bytes to normalized UTF-8: Windows-1252 and UTF-16 to UTF-8, line breaks to LF,
/// and cutting at a character boundary.
enum ExtractionTranscoding {
    /// The code points of Windows-1252 bytes 0x80–0x9F; undefined bytes keep their Latin-1 value.
    static let windows1252High: [UInt32] = [
        0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
        0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
    ]

    /// The code point of one Windows-1252 byte.
    @inline(__always)
    static func windows1252Scalar(_ byte: UInt8) -> UInt32 {
        byte >= 0x80 && byte < 0xA0 ? windows1252High[Int(byte - 0x80)] : UInt32(byte)
    }

    /// Windows-1252 bytes as UTF-8.
    static func windows1252ToUTF8(
        _ bytes: UnsafeBufferPointer<UInt8>, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 8)
        var ticker = ExtractionTicker()
        for index in 0..<bytes.count {
            try ticker.tick(index, deadline)
            let byte = bytes[index]
            if byte < 0x80 {
                output.append(byte)
            } else {
                ExtractionBytes.appendUTF8(windows1252Scalar(byte), to: &output)
            }
        }
        return output
    }

    /// Short Windows-1252 text (header values, email parts already bounded) as UTF-8.
    static func windows1252ToUTF8(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { buffer in
            (try? windows1252ToUTF8(buffer, deadline: .unlimited)) ?? []
        }
    }

    /// `bytes` unchanged when they are valid UTF-8, otherwise read as Windows-1252.
    static func utf8OrWindows1252(_ bytes: [UInt8]) -> [UInt8] {
        ExtractionTextDecoding.isValidUTF8(bytes) ? bytes : windows1252ToUTF8(bytes)
    }

    /// UTF-16 bytes after a two-byte byte order mark as UTF-8; unpaired surrogates and an odd last
    /// byte become U+FFFD.
    static func utf16ToUTF8(
        _ bytes: UnsafeBufferPointer<UInt8>, bigEndian: Bool, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var ticker = ExtractionTicker()
        var index = 2
        @inline(__always) func unit(_ at: Int) -> UInt32 {
            bigEndian
                ? UInt32(bytes[at]) << 8 | UInt32(bytes[at + 1])
                : UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at])
        }
        while index + 1 < bytes.count {
            try ticker.tick(index, deadline)
            let first = unit(index)
            index += 2
            if first >= 0xD800, first < 0xDC00 {
                if index + 1 < bytes.count {
                    let second = unit(index)
                    if second >= 0xDC00, second < 0xE000 {
                        index += 2
                        ExtractionBytes.appendUTF8(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00), to: &output)
                        continue
                    }
                }
                ExtractionBytes.appendUTF8(0xFFFD, to: &output)
            } else {
                // Lone low surrogates are replaced by appendUTF8.
                ExtractionBytes.appendUTF8(first, to: &output)
            }
        }
        if index < bytes.count { ExtractionBytes.appendUTF8(0xFFFD, to: &output) }
        return output
    }

    /// `bytes` with CRLF and lone CR line breaks turned into LF.
    static func normalizingNewlines(
        _ bytes: [UInt8], deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ExtractionTimeout) -> [UInt8] in
            guard
                var index = ExtractionBytes.firstIndex(
                    of: ExtractionBytes.carriageReturn, in: buffer, from: 0, to: buffer.count)
            else { return bytes }
            var output = Array(buffer[0..<index])
            output.reserveCapacity(buffer.count)
            var ticker = ExtractionTicker()
            while index < buffer.count {
                try ticker.tick(index, deadline)
                let byte = buffer[index]
                if byte == ExtractionBytes.carriageReturn {
                    output.append(ExtractionBytes.newline)
                    if index + 1 < buffer.count, buffer[index + 1] == ExtractionBytes.newline { index += 1 }
                } else {
                    output.append(byte)
                }
                index += 1
            }
            return output
        }
    }

    /// Cuts UTF-8 `bytes` to at most `limit` bytes at a character boundary; returns whether it cut.
    static func truncate(_ bytes: inout [UInt8], to limit: Int) -> Bool {
        guard bytes.count > max(limit, 0) else { return false }
        var cut = max(limit, 0)
        // Step back over continuation bytes so that the cut falls before a lead byte.
        while cut > 0, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        bytes.removeSubrange(cut...)
        return true
    }
}
