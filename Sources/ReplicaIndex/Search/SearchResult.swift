public import Foundation
public import ReplicaCore

/// How a result was found: by its words, by its meaning (semantic search), or both.
public enum SearchMatch: String, Sendable, Hashable {
    /// Found by its words (the full-text index).
    case lexical
    /// Found by its meaning (semantic search) only.
    case semantic
    /// Found both by its words and by its meaning.
    case both
}

/// One item found by a search, with where it came from.
public struct SearchResult: Sendable {
    /// The account whose index holds the item.
    public var account: AccountID
    /// The named index that holds it.
    public var indexName: String
    /// The item as stored. Its `textContent` is left out: ask hydration for the full text.
    public var item: SearchableItem
    /// Relevance from 0 to 1, larger is better; it means the same in every index and account of one
    /// search (see `IndexReader.search`), not across different queries. A listing without words scores 0.
    public var score: Double
    /// A short excerpt around the matched words, each wrapped in `[` and `]`; `nil` without words.
    public var snippet: String?
    /// Who made the item and from what version.
    public var origin: ItemOrigin
    /// When the item was last written to the index.
    public var indexedAt: Date
    /// Whether the words, the meaning, or both found it.
    public var match: SearchMatch
    /// How engaged the person is with the item, from its user activities (``Engagement``), 0 to 1;
    /// already counted in ``score``.
    public var engagement: Double = 0

    /// Creates a result; its ``engagement`` starts at 0.
    public init(
        account: AccountID, indexName: String, item: SearchableItem, score: Double, snippet: String?,
        origin: ItemOrigin, indexedAt: Date, match: SearchMatch = .lexical, engagement: Double = 0
    ) {
        self.match = match
        self.engagement = engagement
        self.account = account
        self.indexName = indexName
        self.item = item
        self.score = score
        self.snippet = snippet
        self.origin = origin
        self.indexedAt = indexedAt
    }

    /// The title to show: the item's `title`, else its `displayName`, else its `subject`.
    public var title: String? { item.attributeSet.title ?? item.attributeSet.displayName ?? item.attributeSet.subject }
}

extension SearchResult {
    /// The result as `replica search --json` prints it.
    public var json: JSON {
        let attributes = item.attributeSet
        return .object(omittingNil: [
            ("account", .string(account.rawValue)),
            ("uniqueIdentifier", .string(item.uniqueIdentifier.rawValue)),
            ("domainIdentifier", item.domainIdentifier.map { .string($0.rawValue) }),
            ("score", .number((score * 1000).rounded() / 1000)),
            ("matched", .string(match.rawValue)),
            ("title", title.map(JSON.string)),
            ("snippet", snippet.map(JSON.string)),
            ("contentType", attributes.contentType.map { .string($0.rawValue) }),
            ("contentModificationDate", attributes.contentModificationDate.map { .string(ISO8601.string(from: $0)) }),
            ("contentCreationDate", attributes.contentCreationDate.map { .string(ISO8601.string(from: $0)) }),
            ("index", .string(indexName)),
            ("owner", .string(origin.owner.rawValue)),
            ("version", origin.version.map(JSON.string)),
            ("indexed", .string(ISO8601.string(from: indexedAt))),
            ("entity", item.entity?.json),
        ])
    }
}
