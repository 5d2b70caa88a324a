/// A small, fast, hand-written HTML tag stripper (no parser, no tree).
///
/// One pass over UTF-8 bytes: script and style contents, comments, CDATA sections, processing
/// instructions and doctypes are dropped; block-level tags become line breaks (paragraph-like
/// ones a blank line), `<br>` a line break, table cells spaces, other tags vanish; character references are decoded; white space is tidied by
/// `HTMLTextWriter`. Tag names are case-insensitive and quoted attribute values may contain `>`
/// or `<`. Unterminated tags, comments or quotes simply run to the end of the input.
struct HTMLTextStripper {
    /// The visible text and the title of a document.
    struct Result {
        /// The text, UTF-8.
        var text: [UInt8]
        /// The `<title>` (or, lacking one, the first `<h1>`), white space collapsed; nil when none.
        var title: [UInt8]?
    }

    /// What a tag does to the text.
    enum TagKind {
        case line, paragraph, newline, preformatted, cell, rawText, title, heading1, svg
    }

    /// Strips the UTF-8 HTML in `bytes`.
    static func strip(_ bytes: [UInt8], deadline: ExtractionDeadline) throws(ExtractionTimeout) -> Result {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ExtractionTimeout) -> Result in
            var stripper = HTMLTextStripper(input: buffer)
            return try stripper.run(deadline: deadline)
        }
    }

    private let input: UnsafeBufferPointer<UInt8>
    private let count: Int
    private var writer: HTMLTextWriter
    private var title: [UInt8]?
    private var heading: [UInt8]?
    /// Where the text of the first `<h1>` starts in the writer's bytes while inside it, else -1.
    private var headingStart = -1
    /// `<title>` elements inside inline SVG are tooltips, not the document's title.
    private var svgDepth = 0
    /// How many `<pre>` elements are open: their line breaks are kept.
    private var preformattedDepth = 0

    private init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        self.count = input.count
        self.writer = HTMLTextWriter(capacity: input.count / 2)
    }

    private mutating func run(deadline: ExtractionDeadline) throws(ExtractionTimeout) -> Result {
        var index = 0
        var ticker = ExtractionTicker()
        while index < count {
            try ticker.tick(index, deadline)
            let byte = input[index]
            if byte == UInt8(ascii: "<") {
                index = markup(at: index)
            } else if byte == UInt8(ascii: "&") {
                if let (value, end) = HTMLEntities.decode(input, at: index) {
                    writer.append(scalar: value)
                    index = end
                } else {
                    writer.append(byte)
                    index += 1
                }
            } else {
                // A run of plain text, bounded so that the deadline is still checked.
                let runEnd = min(count, index + ExtractionDeadline.stride)
                while index < runEnd {
                    let byte = input[index]
                    if byte == UInt8(ascii: "<") || byte == UInt8(ascii: "&") { break }
                    writer.append(byte)
                    index += 1
                }
            }
        }
        if headingStart >= 0 { closeHeading() }
        let text = writer.finish()
        let chosen = title ?? heading
        return Result(text: text, title: chosen?.isEmpty == false ? chosen : nil)
    }

    /// Handles the markup starting at the `<` at `start`; returns the index after it.
    private mutating func markup(at start: Int) -> Int {
        let next = start + 1
        guard next < count else {
            writer.append(UInt8(ascii: "<"))
            return count
        }
        let first = input[next]
        if first == UInt8(ascii: "!") {
            if ExtractionBytes.hasPrefix(Self.commentOpen, in: input, at: start) {
                return after(Self.commentClose, from: start + Self.commentOpen.count)
            }
            if ExtractionBytes.hasPrefix(Self.cdataOpen, in: input, at: start, ignoringCase: true) {
                return after(Self.cdataClose, from: start + Self.cdataOpen.count)
            }
            return afterByte(UInt8(ascii: ">"), from: next)
        }
        if first == UInt8(ascii: "?") {
            return afterByte(UInt8(ascii: ">"), from: next)
        }
        let isEndTag = first == UInt8(ascii: "/")
        let nameStart = isEndTag ? next + 1 : next
        guard nameStart < count, ExtractionBytes.isLetter(input[nameStart]) else {
            // "</>" and "</ ..." are dropped up to the next ">"; a lone "<" is text.
            if isEndTag { return afterByte(UInt8(ascii: ">"), from: nameStart) }
            writer.append(UInt8(ascii: "<"))
            return next
        }
        var key: UInt64 = 0
        var length = 0
        var index = nameStart
        while index < count {
            let code = Self.tagNameCode(input[index])
            if code == 0 { break }
            key = key << 6 | code
            length += 1
            index += 1
        }
        let tagEnd = endOfTag(from: index)
        guard length <= 10, let kind = Self.tagKinds[key] else { return tagEnd }
        let selfClosing =
            tagEnd <= count && tagEnd >= 2 && input[tagEnd - 1] == UInt8(ascii: ">")
            && input[tagEnd - 2] == UInt8(ascii: "/")
        switch kind {
        case .line:
            writer.lineBreak()
        case .paragraph:
            writer.paragraphBreak()
        case .newline:
            writer.newline()
        case .preformatted:
            writer.paragraphBreak()
            if isEndTag {
                preformattedDepth = max(0, preformattedDepth - 1)
            } else if !selfClosing {
                preformattedDepth += 1
            }
            writer.preservesNewlines = preformattedDepth > 0
        case .cell:
            writer.space()
        case .heading1:
            writer.paragraphBreak()
            if isEndTag {
                if headingStart >= 0 { closeHeading() }
            } else if heading == nil, headingStart < 0, !selfClosing {
                headingStart = writer.bytes.count
            }
        case .svg:
            if isEndTag { svgDepth = max(0, svgDepth - 1) } else if !selfClosing { svgDepth += 1 }
        case .rawText, .title:
            guard !isEndTag, !selfClosing else { return tagEnd }
            let closing =
                key == Self.titleKey ? Self.titleClose : key == Self.styleKey ? Self.styleClose : Self.scriptClose
            let closeStart = closingTag(closing, from: tagEnd)
            if kind == .title, title == nil, svgDepth == 0 {
                title = decodedLine(tagEnd..<closeStart)
            }
            return closeStart < count ? endOfTag(from: closeStart + closing.count) : count
        }
        return tagEnd
    }

    /// Records the text written since the first `<h1>` opened as the heading.
    private mutating func closeHeading() {
        let line = ExtractionBytes.collapsedLine(Array(writer.bytes[headingStart...]))
        if !line.isEmpty { heading = line }
        headingStart = -1
    }

    /// The index just past the `>` that ends a tag whose name ends before `from`, skipping quoted
    /// attribute values; the end of input when there is no `>`.
    private func endOfTag(from: Int) -> Int {
        var index = from
        while index < count {
            let byte = input[index]
            if byte == UInt8(ascii: ">") { return index + 1 }
            index += 1
            if byte == UInt8(ascii: "=") {
                while index < count, ExtractionBytes.isWhitespace(input[index]) { index += 1 }
                if index < count, input[index] == UInt8(ascii: "\"") || input[index] == UInt8(ascii: "'") {
                    guard
                        let close = ExtractionBytes.firstIndex(of: input[index], in: input, from: index + 1, to: count)
                    else { return count }
                    index = close + 1
                }
            }
        }
        return count
    }

    /// The start of the closing tag (`closing` is e.g. "</script", lowercase) from `from` that is
    /// followed by white space, `/` or `>`; the end of input when there is none.
    private func closingTag(_ closing: [UInt8], from: Int) -> Int {
        var index = from
        while let found = ExtractionBytes.firstIndex(of: closing, in: input, from: index, to: count, ignoringCase: true)
        {
            let after = found + closing.count
            if after >= count { return found }
            let byte = input[after]
            if byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || ExtractionBytes.isWhitespace(byte) {
                return found
            }
            index = found + 1
        }
        return count
    }

    /// The index just past the next `needle` from `from`, or the end of input.
    private func after(_ needle: [UInt8], from: Int) -> Int {
        guard let found = ExtractionBytes.firstIndex(of: needle, in: input, from: from, to: count) else { return count }
        return found + needle.count
    }

    /// The index just past the next `byte` from `from`, or the end of input.
    private func afterByte(_ byte: UInt8, from: Int) -> Int {
        guard let found = ExtractionBytes.firstIndex(of: byte, in: input, from: from, to: count) else { return count }
        return found + 1
    }

    /// The text in `range` with character references decoded and white space collapsed.
    private func decodedLine(_ range: Range<Int>) -> [UInt8] {
        var line = HTMLTextWriter(capacity: range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            if input[index] == UInt8(ascii: "&"), let (value, end) = HTMLEntities.decode(input, at: index),
                end <= range.upperBound
            {
                line.append(scalar: value)
                index = end
            } else {
                line.append(input[index])
                index += 1
            }
        }
        return line.finish()
    }

    private static let commentOpen = Array("<!--".utf8)
    private static let commentClose = Array("-->".utf8)
    private static let cdataOpen = Array("<![cdata[".utf8)
    private static let cdataClose = Array("]]>".utf8)
    private static let scriptClose = Array("</script".utf8)
    private static let styleClose = Array("</style".utf8)
    private static let titleClose = Array("</title".utf8)
    private static let titleKey = packTagName("title")
    private static let styleKey = packTagName("style")

    /// Six bits per tag name character, lowercased: letters, digits, `-`, `:`, `_`, `.`; 0 ends
    /// the name.
    @inline(__always)
    static func tagNameCode(_ byte: UInt8) -> UInt64 {
        switch byte {
        case 0x61...0x7A: UInt64(byte - 0x61 + 1)
        case 0x41...0x5A: UInt64(byte - 0x41 + 1)
        case 0x30...0x39: UInt64(byte - 0x30 + 27)
        case UInt8(ascii: "-"): 37
        case UInt8(ascii: ":"): 38
        case UInt8(ascii: "_"): 39
        case UInt8(ascii: "."): 40
        default: 0
        }
    }

    /// The packed key of a lowercase tag name of at most ten characters.
    static func packTagName(_ name: String) -> UInt64 {
        name.utf8.reduce(0) { $0 << 6 | tagNameCode($1) }
    }

    /// The tags that affect the text; all others vanish.
    static let tagKinds: [UInt64: TagKind] = {
        var table: [UInt64: TagKind] = [:]
        for name in [
            "p", "h2", "h3", "h4", "h5", "h6", "table", "section", "article",
            "blockquote", "ul", "ol", "dl", "hr", "header", "footer", "nav", "aside",
            "main", "figure", "form", "fieldset", "address", "details", "dialog",
            "center", "menu", "hgroup", "body",
        ] {
            table[packTagName(name)] = .paragraph
        }
        for name in [
            "div", "li", "tr", "dt", "dd", "caption", "figcaption", "legend", "summary",
            "thead", "tbody", "tfoot", "option", "html", "head", "noscript", "select",
            "label", "button", "iframe", "object", "video", "audio", "canvas",
        ] {
            table[packTagName(name)] = .line
        }
        for name in ["pre", "textarea", "listing", "xmp"] {
            table[packTagName(name)] = .preformatted
        }
        table[packTagName("br")] = .newline
        table[packTagName("td")] = .cell
        table[packTagName("th")] = .cell
        table[packTagName("h1")] = .heading1
        table[packTagName("script")] = .rawText
        table[packTagName("style")] = .rawText
        table[packTagName("title")] = .title
        table[packTagName("svg")] = .svg
        return table
    }()
}
