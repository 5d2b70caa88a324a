/// Finds and decodes the readable body of an email message (MIME, RFC 2045–2046).
///
/// A message without a Content-Type, or with any `text/*` type, is its own body. In a
/// `multipart/*` message the parts are walked depth first (so multipart/alternative inside
/// multipart/mixed works) and the first `text/plain` part wins, else the first `text/html` part
/// (stripped of its markup). Parts marked `Content-Disposition: attachment` and non-text parts
/// are ignored. The chosen part's transfer encoding (base64, quoted-printable) and charset are
/// undone, and its line breaks normalized to LF.
enum MailBodyText {
    /// How deep multiparts may nest before deeper parts are ignored.
    static let maximumDepth = 32

    /// A part that could be the body.
    private struct Candidate {
        let headers: MailHeaderBlock
        let body: Range<Int>
        let isHTML: Bool
    }

    /// The body text (UTF-8) of the message whose headers are `headers` and whose body is
    /// `bytes[headers.bodyStart..<end]`.
    static func text(
        _ bytes: [UInt8], headers: MailHeaderBlock, end: Int, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [UInt8] {
        var plain: Candidate?
        var html: Candidate?
        try collect(
            bytes, headers: headers, body: headers.bodyStart..<end, depth: 0, plain: &plain, html: &html,
            deadline: deadline)
        guard let chosen = plain ?? html else { return [] }
        var content = Array(bytes[chosen.body])
        let transferEncoding = MailStructuredValue(
            chosen.headers.value("content-transfer-encoding"), defaultValue: "7bit"
        ).value
        switch transferEncoding {
        case "base64": content = try MailTransferDecoding.base64(content, deadline: deadline)
        case "quoted-printable":
            content = try MailTransferDecoding.quotedPrintable(content, underscoreIsSpace: false, deadline: deadline)
        default: break
        }
        let contentType = MailStructuredValue(chosen.headers.value("content-type"), defaultValue: "text/plain")
        content = MailCharset.toUTF8(content, charset: contentType.parameters["charset"])
        if chosen.isHTML {
            content = try HTMLTextStripper.strip(content, deadline: deadline).text
        } else {
            content = try ExtractionTranscoding.normalizingNewlines(content, deadline: deadline)
        }
        return ExtractionBytes.trimmed(content)
    }

    /// Walks one entity, recording the first plain-text and the first HTML candidate.
    private static func collect(
        _ bytes: [UInt8], headers: MailHeaderBlock, body: Range<Int>, depth: Int,
        plain: inout Candidate?, html: inout Candidate?, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) {
        guard plain == nil else { return }
        let contentType = MailStructuredValue(headers.value("content-type"), defaultValue: "text/plain")
        let type = contentType.value
        if depth > 0 {
            let disposition = MailStructuredValue(headers.value("content-disposition"), defaultValue: "inline")
            if disposition.value == "attachment" { return }
        }
        if type.hasPrefix("multipart/"), let boundary = contentType.parameters["boundary"], !boundary.isEmpty {
            guard depth < maximumDepth else { return }
            for part in try parts(bytes, body, boundary: Array(boundary.utf8), deadline: deadline) {
                let partHeaders = try MailHeaderBlock.parse(bytes, part, deadline: deadline)
                try collect(
                    bytes, headers: partHeaders, body: partHeaders.bodyStart..<part.upperBound, depth: depth + 1,
                    plain: &plain, html: &html, deadline: deadline)
                if plain != nil { return }
            }
            return
        }
        if type == "text/html" || type == "application/xhtml+xml" {
            if html == nil { html = Candidate(headers: headers, body: body, isHTML: true) }
        } else if type == "text/plain" || (depth == 0 && (type.hasPrefix("text/") || type.hasPrefix("multipart/"))) {
            // At the top, any text type (and a multipart without a boundary) is read as plain text.
            plain = Candidate(headers: headers, body: body, isHTML: false)
        }
    }

    /// The ranges of the parts of a multipart body: the content between delimiter lines
    /// (`--boundary`), excluding the line break before each delimiter. A missing closing
    /// delimiter (`--boundary--`) ends the last part at the end of the body.
    static func parts(
        _ bytes: [UInt8], _ body: Range<Int>, boundary: [UInt8], deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [Range<Int>] {
        let delimiter = Array("--".utf8) + boundary
        return try bytes.withUnsafeBufferPointer { (input) throws(ExtractionTimeout) -> [Range<Int>] in
            var parts: [Range<Int>] = []
            var partStart: Int?
            var lineStart = body.lowerBound
            var ticker = ExtractionTicker()
            while lineStart < body.upperBound {
                try ticker.tick(lineStart, deadline)
                let newline = ExtractionBytes.firstIndex(
                    of: ExtractionBytes.newline, in: input, from: lineStart, to: body.upperBound)
                let next = newline.map { $0 + 1 } ?? body.upperBound
                if ExtractionBytes.hasPrefix(delimiter, in: input, at: lineStart),
                    lineStart + delimiter.count <= body.upperBound
                {
                    let afterDelimiter = lineStart + delimiter.count
                    let lineEnd = newline ?? body.upperBound
                    let isClose =
                        afterDelimiter + 1 < lineEnd && input[afterDelimiter] == UInt8(ascii: "-")
                        && input[afterDelimiter + 1] == UInt8(ascii: "-")
                    let restStart = isClose ? afterDelimiter + 2 : afterDelimiter
                    var restIsBlank = true
                    for index in restStart..<lineEnd where !ExtractionBytes.isWhitespace(input[index]) {
                        restIsBlank = false
                        break
                    }
                    if restIsBlank {
                        if let start = partStart { parts.append(start..<contentEnd(input, start, lineStart)) }
                        if isClose { return parts }
                        partStart = next
                    }
                }
                lineStart = next
            }
            if let start = partStart, start < body.upperBound { parts.append(start..<body.upperBound) }
            return parts
        }
    }

    /// The end of a part's content that is followed by a delimiter line at `delimiterStart`: the
    /// line break before the delimiter belongs to the delimiter.
    private static func contentEnd(_ input: UnsafeBufferPointer<UInt8>, _ start: Int, _ delimiterStart: Int) -> Int {
        var end = delimiterStart
        if end > start, input[end - 1] == ExtractionBytes.newline { end -= 1 }
        if end > start, input[end - 1] == ExtractionBytes.carriageReturn { end -= 1 }
        return end
    }
}
