public import Foundation
public import ReplicaCore

/// An item read back whole, as its index holds it: every attribute (the text content included), where
/// it lives, who made it and when it was written.
///
/// For example:
/// ```swift
/// let stored = try await index.fetchItems(withIdentifiers: ["note:alice:42"])
/// print(stored.first?.item.attributeSet.textContent ?? "gone")
/// ```
public struct StoredItem: Sendable {
    /// The account whose index holds the item.
    public var account: AccountID
    /// The named index that holds it.
    public var indexName: String
    /// The item with every stored attribute, its expiration date included.
    public var item: SearchableItem
    /// Who made the item and from what version.
    public var origin: ItemOrigin
    /// When the item was last written to the index.
    public var indexedAt: Date

    /// Creates a stored item from its parts.
    public init(account: AccountID, indexName: String, item: SearchableItem, origin: ItemOrigin, indexedAt: Date) {
        self.account = account
        self.indexName = indexName
        self.item = item
        self.origin = origin
        self.indexedAt = indexedAt
    }

    /// The language the item's words are stemmed for in the index (issue 45): the first of its
    /// `language` attribute's BCP 47 tags that Snowball stems, else the language CLD2 is sure its text
    /// is in, else English; `nil` for a language without stems (Chinese, Japanese, Vietnamese…). Found
    /// from the item as the writer found it (the same analyzer, the same text), on both backends.
    public var wordsLanguage: String? {
        TextColumns(item.attributeSet).language
    }

    /// The item as `replica get --json` prints it: `uniqueIdentifier`, `domainIdentifier`, `account`,
    /// `index`, `owner`, `version`, `indexed`, `expirationDate`, `wordsLanguage` (the language its words
    /// are stemmed for, when they are), `attributes` (every stored attribute by
    /// its Core Spotlight key, replica's own bookkeeping left out), `updateListenerOptions` and `entity`
    /// when there are any.
    public var json: JSON {
        .object(omittingNil: [
            ("uniqueIdentifier", .string(item.uniqueIdentifier.rawValue)),
            ("domainIdentifier", item.domainIdentifier.map { .string($0.rawValue) }),
            ("account", .string(account.rawValue)),
            ("index", .string(indexName)),
            ("owner", .string(origin.owner.rawValue)),
            ("version", origin.version.map(JSON.string)),
            ("indexed", .string(ISO8601.string(from: indexedAt))),
            ("expirationDate", item.expirationDate.map { .string(ISO8601.string(from: $0)) }),
            ("wordsLanguage", wordsLanguage.map(JSON.string)),
            ("attributes", item.attributeSet.json(excluding: Set(item.attributeSet.keys.filter(\.isInternal)))),
            ("updateListenerOptions", item.updateListenerOptions.isEmpty ? nil : .array(item.updateListenerOptions.namesList.map(JSON.string))),
            ("entity", item.entity?.json),
        ])
    }
}
