public import Foundation

/// One message of a conversation as an enricher sees it: who wrote it, to whom, when, and its text.
public struct ThreadMessage: Sendable, Hashable {
    /// The item the message is.
    public var identifier: ItemIdentifier
    /// Names and handles of its authors (display names and email addresses or phone numbers).
    public var authors: [String]
    /// Names and handles of its recipients, direct and copied.
    public var recipients: [String]
    /// Names and handles of its direct (To:) recipients, when the item says which they are.
    public var primaryRecipients: [String]
    /// When it was written (the item's content creation date).
    public var date: Date?
    /// Its subject or title, if any.
    public var subject: String?
    /// Its text: a message's text content (mail's, or else its HTML content as text), or a recording's
    /// transcript.
    public var text: String

    /// Creates a message from the item it is and its text; the rest is optional.
    public init(
        identifier: ItemIdentifier, authors: [String] = [], recipients: [String] = [],
        primaryRecipients: [String] = [], date: Date? = nil, subject: String? = nil, text: String
    ) {
        self.identifier = identifier
        self.authors = authors
        self.recipients = recipients
        self.primaryRecipients = primaryRecipients
        self.date = date
        self.subject = subject
        self.text = text
    }
}

/// A conversation: the messages of one domain (the thread), oldest first, up to the message enriched.
public struct MessageThread: Sendable, Hashable {
    /// The domain that names the thread.
    public var domain: DomainIdentifier
    /// The messages, oldest first; the last is the one being enriched.
    public var messages: [ThreadMessage]
    /// Handles and names of the account's own person ("me"), for telling what was sent to them directly
    /// and what they wrote; empty when the host did not say.
    public var me: [String]

    /// Creates a thread from its domain and its messages, oldest first, and the account's own person.
    public init(domain: DomainIdentifier, messages: [ThreadMessage], me: [String] = []) {
        self.domain = domain
        self.messages = messages
        self.me = me
    }

    /// The message being enriched.
    public var current: ThreadMessage? { messages.last }
}

/// Writes a short summary of a conversation (Core Spotlight's `textContentSummary`).
///
/// Implementations must not fetch anything from the network unless the host chose such an
/// implementation; the built-in ``ExtractiveSummarizer`` runs locally.
public protocol Summarizer: Sendable {
    /// Names the summarizer and its version; a change of identifier summarizes again.
    var identifier: String { get }
    /// A summary of `thread` as of its last message, in plain text.
    func summarize(_ thread: MessageThread) async throws -> String
}

/// Decides whether a message deserves attention (Core Spotlight's `isPriority`).
public protocol PriorityClassifier: Sendable {
    /// Names the classifier and its version; a change of identifier classifies again.
    var identifier: String { get }
    /// Whether the thread's last message is a priority for the account's person.
    func isPriority(_ thread: MessageThread) async throws -> Bool
}
