import Foundation
import ReplicaCore

/// An item that asked for enrichment and was written since the enrichment pass last looked at it.
package struct PendingEnrichment: Sendable {
    package var rowID: Int64
    /// The item with its text content.
    package var item: SearchableItem
    package var origin: ItemOrigin
    /// The item's `indexed` time when it was read: results are stored only if it is still that version.
    package var indexed: Double
    /// What the stored results were made from, and the results, from an earlier pass.
    package var input: String?
    package var summary: String?
    package var priority: Bool?
    package var attempts: Int

    /// Makes a pending item as a reader found it.
    package init(
        rowID: Int64, item: SearchableItem, origin: ItemOrigin, indexed: Double, input: String?, summary: String?,
        priority: Bool?, attempts: Int
    ) {
        self.rowID = rowID
        self.item = item
        self.origin = origin
        self.indexed = indexed
        self.input = input
        self.summary = summary
        self.priority = priority
        self.attempts = attempts
    }
}

/// How many of an index's items asked for enrichment, by what happened to them.
package struct EnrichmentCounts: Sendable, Equatable {
    package var enriched = 0
    package var pending = 0
    package var failing = 0
    /// Items not (fully) enriched, by reason code (`summarization.tooShort`, `priority.type`, …).
    package var skipped: [String: Int] = [:]

    /// No items counted yet.
    package init() {}
}
