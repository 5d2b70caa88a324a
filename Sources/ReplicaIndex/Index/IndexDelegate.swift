import Foundation
import ReplicaCore

/// The owner of an index's items, which the index asks to index them again.
///
/// The index asks to reindex everything when it was created fresh, found corrupt and rebuilt empty, or
/// rebuilt for any other reason; it asks for some identifiers when their stored copies could not be
/// read back. A request counts as done when the method returns without throwing; until then it is kept
/// in the index and asked again the next time a delegate is set.
///
/// For example:
/// ```swift
/// final class NotesIndexer: IndexDelegate {
///     func reindexAllItems(in index: SearchableIndex) async throws {
///         try await index.indexItems([])   // every item of the app, from its own storage
///     }
///     func reindexItems(withIdentifiers identifiers: [ItemIdentifier], in index: SearchableIndex) async throws {
///         _ = identifiers                  // look these up in the app's storage and index them again
///     }
/// }
/// try await index.setDelegate(NotesIndexer())
/// ```
public protocol IndexDelegate: AnyObject, Sendable {
    /// Index every item again; the index holds nothing of the owner's (it is new, or was rebuilt).
    func reindexAllItems(in index: SearchableIndex) async throws

    /// Index these items again (or delete them, if they are gone).
    func reindexItems(withIdentifiers identifiers: [ItemIdentifier], in index: SearchableIndex) async throws

    /// Items that replica changed after they were indexed: enrichment wrote a summary
    /// (`textContentSummary`) or a priority (`isPriority`), as Core Spotlight's `searchableItemsDidUpdate`
    /// reports. Optional; the default does nothing.
    func searchableItemsDidUpdate(_ updates: [ItemUpdate], in index: SearchableIndex) async
}

extension IndexDelegate {
    /// Does nothing.
    public func searchableItemsDidUpdate(_ updates: [ItemUpdate], in index: SearchableIndex) async {}
}

/// An item replica changed after it was indexed, and which attributes changed.
public struct ItemUpdate: Sendable, Hashable {
    /// The item as it is now stored, its text content included.
    public var item: SearchableItem
    /// The attributes that changed.
    public var changedAttributes: [AttributeKey]

    /// Creates an update from the item as now stored and the attributes that changed.
    public init(item: SearchableItem, changedAttributes: [AttributeKey]) {
        self.item = item
        self.changedAttributes = changedAttributes
    }
}

/// Something a store noticed that its host may want to log.
public struct StoreEvent: Sendable, CustomStringConvertible {
    /// What kind of thing happened.
    public struct Kind: RawRepresentable, Hashable, Sendable {
        /// The kind's name, such as `indexRebuilt`.
        public let rawValue: String
        /// Creates a kind from its name.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// An index file was found damaged and rebuilt empty; its owner is asked to reindex.
        public static let indexRebuilt = Kind(rawValue: "indexRebuilt")
        /// A sign-out that an earlier process left halfway was completed.
        public static let signOutCompleted = Kind(rawValue: "signOutCompleted")
        /// Stored items that could not be read back were dropped and their owner asked to reindex them.
        public static let itemsUnreadable = Kind(rawValue: "itemsUnreadable")
        /// The search tool left results out because hydration did not pass them (gone, unreadable by the
        /// account, stale, or their owner did not answer). The model is never told; the host's log is.
        public static let resultsWithheld = Kind(rawValue: "resultsWithheld")
        /// Changes could not be applied to an index before a search (the search tool's catch-up); the answer
        /// may miss them, and hydration still drops anything stale.
        public static let catchUpFailed = Kind(rawValue: "catchUpFailed")
        /// The embedding model failed or is missing: search answers by the words alone.
        public static let embeddingFailed = Kind(rawValue: "embeddingFailed")
        /// An enricher (summarizer or priority classifier) failed on an item; it is tried again later.
        public static let enrichmentFailed = Kind(rawValue: "enrichmentFailed")
        /// Items could not be deleted, nor their deletion queued to be retried (a full disk, say).
        public static let deletionFailed = Kind(rawValue: "deletionFailed")
        /// The read database (a standby) is passed over, its reads sent to the database: it is stale (its
        /// replay paused, or behind past its maximum lag) or cannot be used (unreachable, a wrong URL or
        /// password, not a standby of the database). Said once per reason.
        public static let standbyPassedOver = Kind(rawValue: "standbyPassedOver")
    }

    /// What kind of thing happened.
    public var kind: Kind
    /// The account it concerns, if any.
    public var account: AccountID?
    /// The index it concerns, if any.
    public var indexName: String?
    /// A sentence for a log line; never quotes indexed content.
    public var message: String

    /// The event's message.
    public var description: String { message }

    /// Creates an event.
    public init(kind: Kind, account: AccountID?, indexName: String?, message: String) {
        self.kind = kind
        self.account = account
        self.indexName = indexName
        self.message = message
    }
}
