/// Undoes MIME content transfer encodings: base64 and quoted-printable.
///
/// Both are lenient: base64 ignores white space and any other stray characters and accepts
/// missing padding; quoted-printable keeps a malformed `=` as it is.
enum MailTransferDecoding {
    /// Sextet values of base64 characters; 0xFF for everything else.
    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        // The URL-safe alphabet, which some mailers use.
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes base64 text.
    ///
    /// `=` ends a group early, so that concatenated base64 blocks decode too.
    static func base64(_ input: [UInt8], deadline: ExtractionDeadline) throws(ExtractionTimeout) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var accumulator: UInt32 = 0
        var sextets = 0
        var ticker = ExtractionTicker()
        for index in 0..<input.count {
            try ticker.tick(index, deadline)
            let byte = input[index]
            let value = base64Values[Int(byte)]
            if value == 0xFF {
                if byte == UInt8(ascii: "=") {
                    flush(&accumulator, &sextets, into: &output)
                }
                continue
            }
            accumulator = accumulator << 6 | UInt32(value)
            sextets += 1
            if sextets == 4 {
                output.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                output.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                output.append(UInt8(truncatingIfNeeded: accumulator))
                accumulator = 0
                sextets = 0
            }
        }
        flush(&accumulator, &sextets, into: &output)
        return output
    }

    /// Decodes base64 header text (no deadline: header values are short).
    static func base64(_ input: [UInt8]) -> [UInt8] {
        (try? base64(input, deadline: .unlimited)) ?? []
    }

    /// Emits the bytes of an incomplete final group.
    private static func flush(_ accumulator: inout UInt32, _ sextets: inout Int, into output: inout [UInt8]) {
        switch sextets {
        case 2:
            output.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            output.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            output.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            break
        }
        accumulator = 0
        sextets = 0
    }

    /// Decodes quoted-printable text: `=XX` is a byte, `=` at the end of a line (optionally after
    /// spaces or tabs) is a soft line break; with `underscoreIsSpace` (RFC 2047 Q encoding) `_` is
    /// a space.
    static func quotedPrintable(
        _ input: [UInt8], underscoreIsSpace: Bool, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var ticker = ExtractionTicker()
        var index = 0
        while index < input.count {
            try ticker.tick(index, deadline)
            let byte = input[index]
            if byte == UInt8(ascii: "=") {
                if index + 2 < input.count,
                    let high = ExtractionBytes.hexValue(input[index + 1]),
                    let low = ExtractionBytes.hexValue(input[index + 2])
                {
                    output.append(high << 4 | low)
                    index += 3
                    continue
                }
                var next = index + 1
                while next < input.count, input[next] == ExtractionBytes.space || input[next] == ExtractionBytes.tab {
                    next += 1
                }
                if next == input.count {
                    index = next
                    continue
                }
                if input[next] == ExtractionBytes.newline {
                    index = next + 1
                    continue
                }
                if input[next] == ExtractionBytes.carriageReturn {
                    index = next + 1
                    if index < input.count, input[index] == ExtractionBytes.newline { index += 1 }
                    continue
                }
                output.append(byte)
            } else if underscoreIsSpace, byte == UInt8(ascii: "_") {
                output.append(ExtractionBytes.space)
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    /// Decodes quoted-printable header text (no deadline: header values are short).
    static func quotedPrintable(_ input: [UInt8], underscoreIsSpace: Bool) -> [UInt8] {
        (try? quotedPrintable(input, underscoreIsSpace: underscoreIsSpace, deadline: .unlimited)) ?? []
    }
}
