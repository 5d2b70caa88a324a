#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
import Foundation
#endif

/// Limits per file.
///
/// Every limit applies to one file: a file larger than `maximumBytes` is skipped, text longer
/// than `maximumTextBytes` is cut, extraction that runs longer than `timeLimit` is abandoned, and
/// an mbox keeps at most `maximumMessages` messages.
public struct ExtractionLimits: Sendable, Equatable {
    /// Files larger than this many bytes are skipped (default 16 MiB).
    ///
    /// The skip reason names the limit and the file's size, e.g. "larger than the 16 MiB limit
    /// (20 MiB)".
    public var maximumBytes: Int
    /// Extracted text is cut at a UTF-8 character boundary after this many bytes (default 4 MiB).
    ///
    /// A cut document has `wasTruncated` set. For an mbox the limit applies to each message's
    /// document.
    public var maximumTextBytes: Int
    /// Seconds one file's extraction may take before it is abandoned (default 2.0).
    ///
    /// Measured with a monotonic clock. Zero or a negative value abandons every extraction that
    /// has work to do; an infinite value or NaN means no limit.
    public var timeLimit: Double
    /// The most messages kept from one mbox (default 100,000).
    ///
    /// Later messages are dropped without a skip: the result holds the first documents.
    public var maximumMessages: Int

    /// Creates limits; every argument has the documented default.
    ///
    /// - Parameters:
    ///   - maximumBytes: files larger than this are skipped.
    ///   - maximumTextBytes: extracted text is cut after this many UTF-8 bytes.
    ///   - timeLimit: seconds an extraction may take.
    ///   - maximumMessages: messages kept per mbox.
    public init(
        maximumBytes: Int = 16 << 20,
        maximumTextBytes: Int = 4 << 20,
        timeLimit: Double = 2.0,
        maximumMessages: Int = 100_000
    ) {
        self.maximumBytes = maximumBytes
        self.maximumTextBytes = maximumTextBytes
        self.timeLimit = timeLimit
        self.maximumMessages = maximumMessages
    }
}

/// A person named in a document (email headers).
///
/// Either part may be missing: `"Ada" <ada@example.com>` has both, `ada@example.com` only an
/// address, and a bare display name only a name.
public struct ExtractedPerson: Sendable, Equatable {
    /// The display name; nil when there is none.
    ///
    /// Quotes are removed, RFC 2047 encoded-words decoded and white space collapsed; a name in a
    /// comment (`ada@example.com (Ada)`) counts too.
    public var name: String?
    /// The email address; nil when there is none.
    ///
    /// Without angle brackets and white space, otherwise as written (case is kept).
    public var address: String?

    /// Creates a person from a display name and an address.
    ///
    /// - Parameters:
    ///   - name: the display name, or nil.
    ///   - address: the email address, or nil.
    public init(name: String?, address: String?) {
        self.name = name
        self.address = address
    }
}

/// One searchable document found in a file.
///
/// Most files give one document; an mbox gives one per message. Email fields (`subject`,
/// `authors`, `recipients`, `date`, `messageID`) are empty for other kinds of file.
public struct ExtractedDocument: Sendable, Equatable {
    /// The document's title; nil when there is none.
    ///
    /// HTML `<title>` (or, lacking one, the first `<h1>`), the first Markdown level-1 heading,
    /// the reStructuredText title, or the email Subject. Plain text and source code have none.
    public var title: String?
    /// The searchable body text.
    ///
    /// UTF-8 with LF line breaks. For HTML the visible text only; for email the chosen body
    /// part without the headers.
    public var text: String
    /// A uniform type identifier such as "public.html".
    ///
    /// The file's type from `TextExtractor.contentType(forFileName:)`, except that each message
    /// of an mbox is "public.email-message".
    public var contentType: String
    /// The email subject; nil for other documents.
    ///
    /// Encoded-words are decoded and folded lines joined.
    public var subject: String?
    /// The email's From addresses.
    ///
    /// Empty for other documents.
    public var authors: [ExtractedPerson]
    /// The email's To and Cc addresses, in that order.
    ///
    /// Empty for other documents.
    public var recipients: [ExtractedPerson]
    /// The email's Date header; nil when missing or unparseable.
    ///
    /// RFC 5322 dates with or without weekday and seconds, two- or four-digit years, and
    /// numeric or named (UT, GMT, EST, PDT, ...) zones.
    public var date: Date?
    /// The email's Message-ID; nil when missing.
    ///
    /// Without angle brackets.
    public var messageID: String?
    /// Which part of the file this document is; nil for a whole file.
    ///
    /// For each message of an mbox its 1-based index as a string ("1", "2", ...).
    public var part: String?
    /// Whether the text was cut.
    ///
    /// True when the text was longer than `ExtractionLimits.maximumTextBytes` and was cut at a
    /// character boundary.
    public var wasTruncated: Bool

    /// Creates a document; only the text and the content type are required.
    ///
    /// - Parameters:
    ///   - title: the document's title.
    ///   - text: the searchable body text.
    ///   - contentType: a uniform type identifier.
    ///   - subject: the email subject.
    ///   - authors: the email's From addresses.
    ///   - recipients: the email's To and Cc addresses.
    ///   - date: the email's date.
    ///   - messageID: the email's Message-ID.
    ///   - part: the message index within an mbox.
    ///   - wasTruncated: whether the text was cut.
    public init(
        title: String? = nil,
        text: String,
        contentType: String,
        subject: String? = nil,
        authors: [ExtractedPerson] = [],
        recipients: [ExtractedPerson] = [],
        date: Date? = nil,
        messageID: String? = nil,
        part: String? = nil,
        wasTruncated: Bool = false
    ) {
        self.title = title
        self.text = text
        self.contentType = contentType
        self.subject = subject
        self.authors = authors
        self.recipients = recipients
        self.date = date
        self.messageID = messageID
        self.part = part
        self.wasTruncated = wasTruncated
    }
}

/// What extraction made of a file.
///
/// Skip reasons are short English phrases that name the kind of problem, sizes, limits or
/// encodings; they never quote the file's content.
public enum ExtractionResult: Sendable, Equatable {
    /// The documents found in the file.
    ///
    /// One for most files (an empty file gives one empty document), one per message for an mbox
    /// (none for an empty mbox).
    case documents([ExtractedDocument])
    /// The file was not extracted.
    ///
    /// The reason is a short English phrase: "binary content", "larger than the 16 MiB limit
    /// (20 MiB)", "extraction took longer than the 2 s limit", or "not valid text in any
    /// supported encoding".
    case skipped(reason: String)
}
