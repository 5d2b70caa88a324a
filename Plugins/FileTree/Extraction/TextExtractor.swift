/// Extracts searchable documents from files: plain text and source code, Markdown,
/// reStructuredText, HTML, email messages and mbox files.
///
/// Extraction is a pure function of the file name (for the type), the bytes and the limits. It
/// works on UTF-8 bytes throughout, checks a monotonic deadline inside every loop that scales
/// with the input, and never puts file content into skip reasons.
public enum TextExtractor {
    /// The content type for a file name.
    ///
    /// Decided by extension (case-insensitive), or for a few well-known names without one
    /// (README, LICENSE, COPYING, Makefile, Dockerfile, CHANGELOG, Kconfig, mbox, ...). Unknown
    /// extensions give "public.plain-text"; known binary extensions give a binary type such as
    /// "public.png" or "public.data". A path is reduced to its last component.
    public static func contentType(forFileName name: String) -> String {
        ExtractionFileFormat(fileName: name).contentType
    }

    /// Extracts the documents of a file from its bytes.
    ///
    /// `fileName` is the file's name (for its type). The size limit applies to `bytes.count`;
    /// use `extract(fileName:bytes:byteCount:limits:)` when `bytes` is only a prefix of the file.
    public static func extract(
        fileName: String, bytes: [UInt8], limits: ExtractionLimits = ExtractionLimits()
    ) -> ExtractionResult {
        extract(fileName: fileName, bytes: bytes, byteCount: bytes.count, limits: limits)
    }

    /// Extracts the documents of a file from its bytes, given the file's size on disk.
    ///
    /// `byteCount` is the file's size on disk, used for the size limit since `bytes` may be a
    /// prefix of the file (the larger of the two counts is used). A character cut off at the end
    /// of a prefix is dropped rather than making the text invalid.
    public static func extract(
        fileName: String, bytes: [UInt8], byteCount: Int, limits: ExtractionLimits = ExtractionLimits()
    ) -> ExtractionResult {
        let size = max(byteCount, bytes.count)
        if size > limits.maximumBytes {
            return .skipped(reason: ExtractionSkipReason.tooLarge(size: size, limit: limits.maximumBytes))
        }
        let format = ExtractionFileFormat(fileName: fileName)
        if format.reader == .binary { return .skipped(reason: ExtractionSkipReason.binary) }
        let deadline = ExtractionDeadline(seconds: limits.timeLimit)
        do {
            return try extract(bytes, format: format, limits: limits, deadline: deadline)
        } catch {
            return .skipped(reason: ExtractionSkipReason.tooSlow(limit: limits.timeLimit))
        }
    }

    /// Decodes the bytes and hands them to the reader for the format.
    private static func extract(
        _ bytes: [UInt8], format: ExtractionFileFormat, limits: ExtractionLimits, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> ExtractionResult {
        let classification = try bytes.withUnsafeBufferPointer { (buffer) throws(ExtractionTimeout) in
            try ExtractionTextDecoding.classify(buffer, deadline: deadline)
        }
        let isMail = format.reader == .email || format.reader == .mbox
        let text: [UInt8]
        switch classification {
        case .binary:
            return .skipped(reason: ExtractionSkipReason.binary)
        case .notText:
            return .skipped(reason: ExtractionSkipReason.notText)
        case .utf16(let bigEndian):
            text = try bytes.withUnsafeBufferPointer { (buffer) throws(ExtractionTimeout) in
                try ExtractionTranscoding.utf16ToUTF8(buffer, bigEndian: bigEndian, deadline: deadline)
            }
        case .utf8(let start, let end):
            text = start == 0 && end == bytes.count ? bytes : Array(bytes[start..<end])
        case .windows1252 where isMail:
            // Email parts declare their own charsets; undeclared 8-bit text falls back to
            // Windows-1252 part by part.
            text = bytes
        case .windows1252:
            text = try bytes.withUnsafeBufferPointer { (buffer) throws(ExtractionTimeout) in
                try ExtractionTranscoding.windows1252ToUTF8(buffer, deadline: deadline)
            }
        }
        switch format.reader {
        case .email:
            return .documents([try MailMessageExtractor.document(text, part: nil, limits: limits, deadline: deadline)])
        case .mbox:
            return .documents(try mailbox(text, limits: limits, deadline: deadline))
        case .html:
            let stripped = try HTMLTextStripper.strip(text, deadline: deadline)
            return .documents([
                document(stripped.text, title: stripped.title.map(ExtractionBytes.string), format, limits)
            ])
        case .markdown:
            let normalized = try ExtractionTranscoding.normalizingNewlines(text, deadline: deadline)
            let title = try MarkupTitles.markdownTitle(normalized, deadline: deadline)
            return .documents([document(normalized, title: title, format, limits)])
        case .restructuredText:
            let normalized = try ExtractionTranscoding.normalizingNewlines(text, deadline: deadline)
            let title = try MarkupTitles.restructuredTextTitle(normalized, deadline: deadline)
            return .documents([document(normalized, title: title, format, limits)])
        case .plainText, .binary:
            let normalized = try ExtractionTranscoding.normalizingNewlines(text, deadline: deadline)
            return .documents([document(normalized, title: nil, format, limits)])
        }
    }

    /// One document per message of an mbox, numbered from "1".
    private static func mailbox(
        _ bytes: [UInt8], limits: ExtractionLimits, deadline: ExtractionDeadline
    ) throws(ExtractionTimeout) -> [ExtractedDocument] {
        let ranges = try MboxSplitter.messageRanges(bytes, maximum: limits.maximumMessages, deadline: deadline)
        var documents: [ExtractedDocument] = []
        documents.reserveCapacity(ranges.count)
        for (offset, range) in ranges.enumerated() {
            try deadline.check()
            let message = try MboxSplitter.unescapedMessage(bytes, range, deadline: deadline)
            documents.append(
                try MailMessageExtractor.document(message, part: String(offset + 1), limits: limits, deadline: deadline)
            )
        }
        return documents
    }

    /// A whole-file document from UTF-8 text, cut at the text limit.
    private static func document(
        _ text: [UInt8], title: String?, _ format: ExtractionFileFormat, _ limits: ExtractionLimits
    ) -> ExtractedDocument {
        var text = text
        let truncated = ExtractionTranscoding.truncate(&text, to: limits.maximumTextBytes)
        return ExtractedDocument(
            title: title, text: ExtractionBytes.string(text), contentType: format.contentType,
            wasTruncated: truncated)
    }
}
