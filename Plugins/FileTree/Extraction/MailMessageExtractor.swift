/// Turns the raw bytes of one email message into a document.
///
/// Headers give the subject (also the title), the people (From; To and Cc), the date and the
/// Message-ID; the body text comes from `MailBodyText`. Headers are not repeated in the text.
enum MailMessageExtractor {
    /// The uniform type identifier of one email message.
    static let contentType = "public.email-message"

    /// The document for the message in `bytes`.
    ///
    /// - Parameters:
    ///   - bytes: the raw message (headers and body), in any mix of charsets.
    ///   - part: the message's 1-based index in an mbox, or nil for a whole file.
    ///   - limits: the limits for the text length.
    ///   - deadline: when to give up.
    static func document(
        _ bytes: [UInt8], part: String?, limits: ExtractionLimits, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> ExtractedDocument {
        let headers = try MailHeaderBlock.parse(bytes, 0..<bytes.count, deadline: deadline)
        var text = try MailBodyText.text(bytes, headers: headers, end: bytes.count, deadline: deadline)
        let truncated = ExtractionTranscoding.truncate(&text, to: limits.maximumTextBytes)
        let subject = headers.text("subject")
        return ExtractedDocument(
            title: subject,
            text: ExtractionBytes.string(text),
            contentType: contentType,
            subject: subject,
            authors: people(headers, ["from"]),
            recipients: people(headers, ["to", "cc"]),
            date: headers.value("date").flatMap(MailDate.parse),
            messageID: messageID(headers.value("message-id")),
            part: part,
            wasTruncated: truncated)
    }

    /// The people in every field with one of `names`, in field-name order.
    private static func people(_ headers: MailHeaderBlock, _ names: [String]) -> [ExtractedPerson] {
        names.flatMap { name in headers.values(name).flatMap(MailAddresses.parse) }
    }

    /// A Message-ID without its angle brackets; nil when empty.
    static func messageID(_ raw: [UInt8]?) -> String? {
        guard let raw else { return nil }
        var value = raw[...]
        if let open = value.firstIndex(of: UInt8(ascii: "<")) {
            value = value[(open + 1)...]
            if let close = value.firstIndex(of: UInt8(ascii: ">")) { value = value[..<close] }
        }
        return ExtractionBytes.trimmedString(ExtractionTranscoding.utf8OrWindows1252(Array(value)))
    }
}
