/// Finds the titles of Markdown and reStructuredText documents.
///
/// Both scan the UTF-8 text line by line (line breaks already normalized to LF) and stop at the
/// first title; the text itself is left as it is.
enum MarkupTitles {
    /// The first level-1 Markdown heading: an ATX heading `# Title` (closing `#`s stripped) or a
    /// Setext heading (a paragraph line followed by a line of `=`). Headings inside fenced code
    /// blocks do not count. Nil when there is none.
    static func markdownTitle(_ text: [UInt8], deadline: ExtractionDeadline) throws(ExtractionTimeout) -> String? {
        try text.withUnsafeBufferPointer { (input) throws(ExtractionTimeout) -> String? in
            var fence: (byte: UInt8, length: Int)?
            var previous: Range<Int>?
            var ticker = ExtractionTicker()
            var lineStart = 0
            while lineStart < input.count {
                try ticker.tick(lineStart, deadline)
                let lineEnd =
                    ExtractionBytes.firstIndex(of: ExtractionBytes.newline, in: input, from: lineStart, to: input.count)
                    ?? input.count
                defer { lineStart = lineEnd + 1 }
                var start = lineStart
                while start < lineEnd, start - lineStart < 4, input[start] == ExtractionBytes.space { start += 1 }
                let indented = start - lineStart >= 4 || (start < lineEnd && input[start] == ExtractionBytes.tab)
                let run = start < lineEnd ? repeatCount(input, at: start, end: lineEnd) : 0
                if let open = fence {
                    if !indented, run >= open.length, input[start] == open.byte,
                        isBlank(input, start + run, lineEnd)
                    {
                        fence = nil
                    }
                    continue
                }
                if start == lineEnd || isBlank(input, start, lineEnd) {
                    previous = nil
                    continue
                }
                // Indented code, or a lazy continuation of the previous paragraph line.
                if indented { continue }
                let byte = input[start]
                if byte == UInt8(ascii: "`") || byte == UInt8(ascii: "~"), run >= 3 {
                    fence = (byte, run)
                    previous = nil
                    continue
                }
                if byte == UInt8(ascii: "#"), run <= 6,
                    start + run == lineEnd || input[start + run] == ExtractionBytes.space
                        || input[start + run] == ExtractionBytes.tab
                {
                    if run == 1, let title = atxContent(input, start + 1, lineEnd) { return title }
                    previous = nil
                    continue
                }
                if byte == UInt8(ascii: "="), let paragraph = previous, isBlank(input, start + run, lineEnd) {
                    return ExtractionBytes.trimmedString(ExtractionBytes.collapsedLine(Array(input[paragraph])))
                }
                previous = start..<lineEnd
            }
            return nil
        }
    }

    /// The first reStructuredText section title: a non-empty line followed by a line made only of
    /// one of `= - ~ ^ * # "` (or the rarer `+ ' ` _`), at least as long as the title; an overline
    /// of the same character above the title is allowed (and then the title may be indented).
    /// `.` and `:` are left out because `..` and `::` lines are comments and literal-block
    /// markers far more often than adornments. Nil when there is none.
    static func restructuredTextTitle(_ text: [UInt8], deadline: ExtractionDeadline) throws(ExtractionTimeout)
        -> String?
    {
        try text.withUnsafeBufferPointer { (input) throws(ExtractionTimeout) -> String? in
            var beforePrevious: Range<Int>?
            var previous: Range<Int>?
            var ticker = ExtractionTicker()
            var lineStart = 0
            while lineStart < input.count {
                try ticker.tick(lineStart, deadline)
                let lineEnd =
                    ExtractionBytes.firstIndex(of: ExtractionBytes.newline, in: input, from: lineStart, to: input.count)
                    ?? input.count
                let line = lineStart..<lineEnd
                lineStart = lineEnd + 1
                if let titleLine = previous, let underline = adornment(input, line),
                    adornment(input, titleLine) == nil
                {
                    let overline = beforePrevious.flatMap { adornment(input, $0) }
                    let indented = ExtractionBytes.isWhitespace(input[titleLine.lowerBound])
                    let title = trimmed(input, titleLine)
                    if !title.isEmpty, !indented || overline?.byte == underline.byte,
                        scalarCount(input, title) <= underline.length
                    {
                        return String(decoding: input[title], as: UTF8.self)
                    }
                }
                beforePrevious = previous
                previous = isBlank(input, line.lowerBound, line.upperBound) ? nil : line
            }
            return nil
        }
    }

    /// The adornment character and length of a line made only of one repeated punctuation
    /// character (trailing white space allowed), or nil.
    private static func adornment(_ input: UnsafeBufferPointer<UInt8>, _ line: Range<Int>) -> (
        byte: UInt8, length: Int
    )? {
        guard !line.isEmpty else { return nil }
        let byte = input[line.lowerBound]
        switch byte {
        case UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "~"), UInt8(ascii: "^"),
            UInt8(ascii: "*"), UInt8(ascii: "#"), UInt8(ascii: "\""), UInt8(ascii: "+"),
            UInt8(ascii: "'"), UInt8(ascii: "`"), UInt8(ascii: "_"):
            let run = repeatCount(input, at: line.lowerBound, end: line.upperBound)
            return isBlank(input, line.lowerBound + run, line.upperBound) ? (byte, run) : nil
        default:
            return nil
        }
    }

    /// The text of an ATX heading after its opening `#`, without the closing `#` sequence; nil
    /// when empty.
    private static func atxContent(_ input: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        var range = trimmed(input, start..<end)
        var upper = range.upperBound
        while upper > range.lowerBound, input[upper - 1] == UInt8(ascii: "#") { upper -= 1 }
        if upper == range.lowerBound || ExtractionBytes.isWhitespace(input[upper - 1]) {
            range = trimmed(input, range.lowerBound..<upper)
        }
        return range.isEmpty ? nil : String(decoding: input[range], as: UTF8.self)
    }

    /// How many times the byte at `at` repeats from there.
    private static func repeatCount(_ input: UnsafeBufferPointer<UInt8>, at: Int, end: Int) -> Int {
        var index = at
        while index < end, input[index] == input[at] { index += 1 }
        return index - at
    }

    /// Whether `input[start..<end]` is only white space.
    private static func isBlank(_ input: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        var index = start
        while index < end {
            if !ExtractionBytes.isWhitespace(input[index]) { return false }
            index += 1
        }
        return true
    }

    /// `range` without leading and trailing white space.
    private static func trimmed(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, ExtractionBytes.isWhitespace(input[lower]) { lower += 1 }
        while upper > lower, ExtractionBytes.isWhitespace(input[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    /// The number of Unicode scalars in UTF-8 `input[range]`.
    private static func scalarCount(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int {
        var count = 0
        for index in range where input[index] & 0xC0 != 0x80 { count += 1 }
        return count
    }
}
