package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite

extension SQLiteIndexReader {
    /// Up to `limit` items waiting for enrichment whose retry time has come, oldest first.
    package func pendingEnrichment(limit: Int) throws -> [PendingEnrichment] {
        try connection.cached(
            """
            SELECT \(Self.itemColumns), items.body, items.id, enrichment.input, enrichment.summary, enrichment.priority,
                enrichment.attempts
            FROM enrichment JOIN items ON items.id = enrichment.item
            WHERE enrichment.pending = 1 AND (enrichment.next_attempt IS NULL OR enrichment.next_attempt <= ?1)
                AND items.expires > ?1
            ORDER BY enrichment.item LIMIT ?2
            """
        ).rows([.real(now.timeIntervalSince1970), .integer(Int64(limit))]) { row in
            let (item, origin, indexed) = try Self.decodeItem(row, textContent: row.optionalText(10))
            return PendingEnrichment(
                rowID: row.int64(11), item: item, origin: origin, indexed: indexed.timeIntervalSince1970,
                input: row.optionalText(12), summary: row.optionalText(13),
                priority: row.optionalInt64(14).map { $0 != 0 }, attempts: row.int(15))
        }
    }

    /// The messages of a thread (one domain) created no later than `date`, oldest first, at most `limit`
    /// (the latest), with their text.
    package func thread(domain: DomainIdentifier, upTo date: Date?, limit: Int) throws -> [SearchableItem] {
        let items = try connection.cached(
            """
            SELECT \(Self.itemColumns), items.body FROM items
            WHERE items.domain = ?1 AND items.expires > ?2 AND (?3 IS NULL OR coalesce(items.created, items.indexed) <= ?3)
            ORDER BY coalesce(items.created, items.indexed) DESC, items.id DESC LIMIT ?4
            """
        ).rows([
            .text(domain.rawValue), .real(now.timeIntervalSince1970), SQLValue(date?.timeIntervalSince1970),
            .integer(Int64(limit)),
        ]) { row in
            try Self.decodeItem(row, textContent: row.optionalText(10)).0
        }
        return items.reversed()
    }

    /// The enrichment counts of this index.
    package func enrichmentCounts() throws -> EnrichmentCounts {
        var counts = EnrichmentCounts()
        try connection.cached(
            """
            SELECT pending, attempts > 0, input IS NOT NULL AND (summary IS NOT NULL OR priority IS NOT NULL), skipped, count(*)
            FROM enrichment GROUP BY 1, 2, 3, 4
            """
        ).each { row in
            let number = row.int(4)
            if row.int(0) != 0 {
                counts.pending += number
                if row.int(1) != 0 { counts.failing += number }
            } else if row.int(2) != 0 {
                counts.enriched += number
            }
            if row.int(0) == 0, let reasons = row.optionalText(3) {
                for reason in reasons.split(separator: ",") { counts.skipped[String(reason), default: 0] += number }
            }
            return true
        }
        return counts
    }
}

extension SQLiteIndexWriter {
    /// Queues the items row `id` for the enrichment pass (it was just written and asks for enrichment).
    package func queueEnrichment(_ id: Int64) throws {
        try connection.cached("INSERT INTO enrichment(item) VALUES (?) ON CONFLICT(item) DO UPDATE SET pending = 1")
            .run([.integer(id)])
    }

    /// Stores an item's enrichment and merges its results into the item (as its own owner made it),
    /// unless the item changed or went since it was read.
    ///
    /// - Parameters:
    ///   - summary, priority: the results to write into `textContentSummary` and `isPriority` (`nil`
    ///     leaves that attribute as it is).
    ///   - skipped: the reasons an option was not applied, or `nil`.
    /// - Returns: the item as merged, or `nil` when it changed since it was read (it stays pending).
    package func applyEnrichment(
        to pending: PendingEnrichment, input: String, summary: String?, priority: Bool?,
        skipped: [String]
    ) throws -> SearchableItem? {
        guard try isStill(pending.rowID, indexedAt: pending.indexed) else { return nil }
        guard let merged = try mergeEnrichmentResults(into: pending, summary: summary, priority: priority) else {
            return nil
        }
        // After the merge, which queued the item again.
        try connection.cached(
            """
            UPDATE enrichment SET pending = 0, input = ?2, summary = coalesce(?3, summary), priority = coalesce(?4, priority),
                skipped = ?5, attempts = 0, next_attempt = NULL, error = NULL
            WHERE item = ?1
            """
        ).run([
            .integer(pending.rowID), .text(input), SQLValue(summary), SQLValue(priority.map { $0 ? Int64(1) : 0 }),
            SQLValue(skipped.isEmpty ? nil : skipped.joined(separator: ",")),
        ])
        return merged
    }

    /// Notes that enriching an item failed: it stays pending and is tried again at `retry`.
    package func recordEnrichmentFailure(_ pending: PendingEnrichment, error: String, retry: Date) throws {
        try connection.cached(
            "UPDATE enrichment SET attempts = attempts + 1, next_attempt = ?2, error = ?3 WHERE item = ?1"
        )
        .run([.integer(pending.rowID), .real(retry.timeIntervalSince1970), .text(error)])
    }

    /// Forgets an item that no longer asks for enrichment.
    package func dropEnrichment(_ pending: PendingEnrichment) throws {
        try connection.cached("DELETE FROM enrichment WHERE item = ?").run([.integer(pending.rowID)])
    }
}
