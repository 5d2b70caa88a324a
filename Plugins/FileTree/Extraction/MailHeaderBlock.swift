/// The header fields of an email message or MIME part (RFC 5322).
///
/// Folded lines (continuations starting with a space or tab) are unfolded, names are compared
/// case-insensitively, and the block ends at the first empty line, or at the first line that is
/// neither a header nor a continuation (that line then starts the body). A leading mbox envelope
/// line (`From sender date`) is skipped.
struct MailHeaderBlock {
    /// The fields in order: lowercase name and raw (undecoded, untrimmed) value bytes.
    private(set) var fields: [(name: String, value: [UInt8])] = []
    /// The index in the parsed bytes where the body starts.
    private(set) var bodyStart: Int

    /// Parses the header block at the start of `bytes[range]`.
    static func parse(
        _ bytes: [UInt8], _ range: Range<Int>, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> MailHeaderBlock {
        try bytes.withUnsafeBufferPointer { (input) throws(ExtractionTimeout) -> MailHeaderBlock in
            var block = MailHeaderBlock(bodyStart: range.upperBound)
            var lineStart = range.lowerBound
            if ExtractionBytes.hasPrefix(envelopePrefix, in: input, at: lineStart) {
                let end = ExtractionBytes.firstIndex(
                    of: ExtractionBytes.newline, in: input, from: lineStart, to: range.upperBound)
                lineStart = end.map { $0 + 1 } ?? range.upperBound
            }
            var ticker = ExtractionTicker()
            while lineStart < range.upperBound {
                try ticker.tick(lineStart, deadline)
                let newline = ExtractionBytes.firstIndex(
                    of: ExtractionBytes.newline, in: input, from: lineStart, to: range.upperBound)
                let next = newline.map { $0 + 1 } ?? range.upperBound
                var contentEnd = newline ?? range.upperBound
                if contentEnd > lineStart, input[contentEnd - 1] == ExtractionBytes.carriageReturn { contentEnd -= 1 }
                if contentEnd == lineStart {
                    block.bodyStart = next
                    return block
                }
                let first = input[lineStart]
                if first == ExtractionBytes.space || first == ExtractionBytes.tab {
                    if !block.fields.isEmpty {
                        block.fields[block.fields.count - 1].value.append(contentsOf: input[lineStart..<contentEnd])
                        lineStart = next
                        continue
                    }
                    block.bodyStart = lineStart
                    return block
                }
                guard
                    let colon = ExtractionBytes.firstIndex(
                        of: UInt8(ascii: ":"), in: input, from: lineStart, to: contentEnd),
                    let name = fieldName(input, lineStart..<colon)
                else {
                    block.bodyStart = lineStart
                    return block
                }
                block.fields.append((name, Array(input[(colon + 1)..<contentEnd])))
                lineStart = next
            }
            block.bodyStart = range.upperBound
            return block
        }
    }

    private init(bodyStart: Int) {
        self.bodyStart = bodyStart
    }

    private static let envelopePrefix = Array("From ".utf8)

    /// The lowercase field name in `range` (printable ASCII, trailing white space allowed), or nil.
    private static func fieldName(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String? {
        var upper = range.upperBound
        while upper > range.lowerBound, ExtractionBytes.isWhitespace(input[upper - 1]) { upper -= 1 }
        guard upper > range.lowerBound else { return nil }
        var name: [UInt8] = []
        name.reserveCapacity(upper - range.lowerBound)
        for index in range.lowerBound..<upper {
            let byte = input[index]
            guard byte > 0x20, byte < 0x7F else { return nil }
            name.append(ExtractionBytes.lowercased(byte))
        }
        return String(decoding: name, as: UTF8.self)
    }

    /// The trimmed raw value of the first field called `name` (lowercase), or nil.
    func value(_ name: String) -> [UInt8]? {
        fields.first { $0.name == name }.map { ExtractionBytes.trimmed($0.value) }
    }

    /// The trimmed raw values of every field called `name` (lowercase).
    func values(_ name: String) -> [[UInt8]] {
        fields.filter { $0.name == name }.map { ExtractionBytes.trimmed($0.value) }
    }

    /// The decoded text of the first field called `name`: raw bytes read as UTF-8 (or
    /// Windows-1252), RFC 2047 encoded-words decoded, white space collapsed; nil when missing or
    /// empty.
    func text(_ name: String) -> String? {
        guard let raw = value(name) else { return nil }
        let decoded = MailEncodedWords.decode(ExtractionTranscoding.utf8OrWindows1252(raw))
        return ExtractionBytes.trimmedString(ExtractionBytes.collapsedLine(decoded))
    }
}
