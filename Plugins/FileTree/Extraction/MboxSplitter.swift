/// Splits an mbox file into its messages.
///
/// A message starts at every line beginning with `From ` (the envelope line, which is not part
/// of the message): the file's first line or any line after a line break. Text before the first
/// envelope line counts as a message when it is not blank, so a lone message without an
/// envelope still works. Within a message, one level of `>From ` quoting is removed (mboxrd:
/// `>From ` becomes `From `, `>>From ` becomes `>From `).
enum MboxSplitter {
    /// The byte ranges of at most `maximum` messages, envelope lines excluded.
    static func messageRanges(
        _ bytes: [UInt8], maximum: Int, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [Range<Int>] {
        try bytes.withUnsafeBufferPointer { (input) throws(ExtractionTimeout) -> [Range<Int>] in
            var ranges: [Range<Int>] = []
            guard maximum > 0 else { return ranges }
            // The current message starts here; before the first envelope line it is a preamble,
            // kept only when it is not blank.
            var messageStart = 0
            var hasEnvelope = false
            func finish(_ range: Range<Int>) {
                if hasEnvelope || !isBlank(input, range) { ranges.append(range) }
            }
            var ticker = ExtractionTicker()
            var lineStart = 0
            while lineStart < input.count {
                try ticker.tick(lineStart, deadline)
                let newline = ExtractionBytes.firstIndex(
                    of: ExtractionBytes.newline, in: input, from: lineStart, to: input.count)
                let next = newline.map { $0 + 1 } ?? input.count
                if ExtractionBytes.hasPrefix(envelope, in: input, at: lineStart) {
                    finish(messageStart..<messageEnd(input, messageStart, lineStart))
                    if ranges.count == maximum { return ranges }
                    messageStart = next
                    hasEnvelope = true
                }
                lineStart = next
            }
            finish(messageStart..<input.count)
            return ranges
        }
    }

    /// The raw message bytes in `range` with one level of `>From ` quoting removed.
    static func unescapedMessage(
        _ bytes: [UInt8], _ range: Range<Int>, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(range.count)
        var atLineStart = true
        var index = range.lowerBound
        var ticker = ExtractionTicker()
        while index < range.upperBound {
            try ticker.tick(index, deadline)
            let byte = bytes[index]
            if atLineStart, byte == UInt8(ascii: ">") {
                var quotes = index
                while quotes < range.upperBound, bytes[quotes] == UInt8(ascii: ">") { quotes += 1 }
                if range.upperBound - quotes >= envelope.count,
                    bytes[quotes..<(quotes + envelope.count)].elementsEqual(envelope)
                {
                    index += 1  // drop one ">"
                }
            }
            let current = bytes[index]
            output.append(current)
            atLineStart = current == ExtractionBytes.newline
            index += 1
        }
        return output
    }

    private static let envelope = Array("From ".utf8)

    /// The end of a message followed by an envelope line at `next`: the line break before it
    /// separates messages.
    private static func messageEnd(_ input: UnsafeBufferPointer<UInt8>, _ start: Int, _ next: Int) -> Int {
        var end = next
        if end > start, input[end - 1] == ExtractionBytes.newline { end -= 1 }
        if end > start, input[end - 1] == ExtractionBytes.carriageReturn { end -= 1 }
        return end
    }

    /// Whether `input[range]` is only white space.
    private static func isBlank(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        for index in range where !ExtractionBytes.isWhitespace(input[index]) { return false }
        return true
    }
}
