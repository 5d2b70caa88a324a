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
    /// The language the index stems an item's words for when CLD2 cannot tell the language of its text:
    /// the one most of the index's items are in, else English.
    public var languageWhenUnknown: String

    /// Creates a stored item from its parts.
    public init(
        account: AccountID, indexName: String, item: SearchableItem, origin: ItemOrigin, indexedAt: Date,
        languageWhenUnknown: String = "en"
    ) {
        self.account = account
        self.indexName = indexName
        self.item = item
        self.origin = origin
        self.indexedAt = indexedAt
        self.languageWhenUnknown = languageWhenUnknown
    }

    /// The language the item's words are stemmed for in the index (issue 45): the first of its
    /// `language` attribute's BCP 47 tags that Snowball stems, else the language CLD2 is sure its text
    /// is in, else ``languageWhenUnknown``; `nil` for a language without stems (Chinese, Japanese,
    /// Thai…). Found from the item as the writer found it (the same analyzer, the same text), on
    /// both backends; for a text too short to tell, by the index's items now: one written while most
    /// of them were in another language keeps that one's stems until it is written again.
    public var wordsLanguage: String? {
        let text = TextColumns(item.attributeSet)
        return text.languageIsKnown ? text.language : languageWhenUnknown
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
            (
                "updateListenerOptions",
                item.updateListenerOptions.isEmpty ? nil : .array(item.updateListenerOptions.namesList.map(JSON.string))
            ),
            ("entity", item.entity?.json),
        ])
    }
}
