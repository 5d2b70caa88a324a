package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

extension PostgresIndexWriter {
    // MARK: Enrichment

    /// Queues the item `id` for the enrichment pass (it was just written and asks for enrichment).
    package func queueEnrichment(_ id: Int64) throws {
        try execute(
            """
            INSERT INTO replica.enrichment(account, index_name, item) VALUES ($1, $2, $3)
            ON CONFLICT (account, index_name, item) DO UPDATE SET pending = true
            """, [.int(id)])
    }

    /// Whether the item `id` is still the version written at `indexed`: work done on a copy read earlier
    /// (vectors, enrichment) is stored only if the item did not change or go meanwhile.
    func isStill(_ id: Int64, indexedAt indexed: Double) throws -> Bool {
        try execute(
            "SELECT 1 FROM replica.items WHERE account = $1 AND index_name = $2 AND id = $3 AND indexed = $4",
            [.int(id), .double(indexed)]
        ).rowCount > 0
    }

    /// Stores an item's enrichment and merges its results into the item (as its own owner made it),
    /// unless the item changed or went since it was read.
    ///
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
        try execute(
            """
            UPDATE replica.enrichment SET pending = false, input = $4, summary = coalesce($5, summary),
                priority = coalesce($6::boolean, priority), skipped = $7, attempts = 0, next_attempt = NULL, error = NULL
            WHERE account = $1 AND index_name = $2 AND item = $3
            """,
            [
                .int(pending.rowID), .text(input), PostgresValue(summary), priority.map(PostgresValue.bool) ?? .null,
                PostgresValue(skipped.isEmpty ? nil : skipped.joined(separator: ",")),
            ])
        return merged
    }

    /// Notes that enriching an item failed: it stays pending and is tried again at `retry`.
    package func recordEnrichmentFailure(_ pending: PendingEnrichment, error: String, retry: Date) throws {
        try execute(
            """
            UPDATE replica.enrichment SET attempts = attempts + 1, next_attempt = $4, error = $5
            WHERE account = $1 AND index_name = $2 AND item = $3
            """, [.int(pending.rowID), .double(retry.timeIntervalSince1970), .text(error)])
    }

    /// Forgets an item that no longer asks for enrichment.
    package func dropEnrichment(_ pending: PendingEnrichment) throws {
        try execute(
            "DELETE FROM replica.enrichment WHERE account = $1 AND index_name = $2 AND item = $3", [.int(pending.rowID)]
        )
    }

    // MARK: Vectors

    /// Drops the vectors of an item whose text was just replaced: the new text is embedded again (and
    /// search answers by its words meanwhile); `vectors_version` moves when there were any.
    func dropVectorsOfChangedText(_ id: Int64) throws {
        try execute(
            """
            WITH embedded AS (
                DELETE FROM replica.embedded WHERE account = $1 AND index_name = $2 AND item = $3 RETURNING item
            ), vectors AS (
                DELETE FROM replica.vectors WHERE account = $1 AND index_name = $2 AND item IN (SELECT item FROM embedded)
            ), version AS (
                \(Self.bumpVectorsVersion(by: "embedded"))
            )
            SELECT count(*) FROM embedded
            """, [.int(id)])
    }

    /// Stores an item's vectors under `model`, unless the item changed (or went) since it was read.
    ///
    /// - Returns: whether they were stored.
    @discardableResult
    package func setVectors(_ vectors: [[Float]], for pending: PendingEmbedding, model: String) throws -> Bool {
        guard try isStill(pending.rowID, indexedAt: pending.indexed) else { return false }
        try execute(
            "DELETE FROM replica.vectors WHERE account = $1 AND index_name = $2 AND item = $3", [.int(pending.rowID)])
        for (passage, vector) in vectors.enumerated() {
            try execute(
                "INSERT INTO replica.vectors(account, index_name, item, passage, vector) VALUES ($1, $2, $3, $4, $5)",
                [.int(pending.rowID), .int(Int64(passage)), .bytes(VectorCoding.encode(vector))])
        }
        try execute(
            """
            INSERT INTO replica.embedded(account, index_name, item, model, indexed) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (account, index_name, item) DO UPDATE SET model = excluded.model, indexed = excluded.indexed
            """, [.int(pending.rowID), .text(model), .double(pending.indexed)])
        try execute(
            """
            INSERT INTO replica.meta AS meta (account, index_name, key, value) VALUES ($1, $2, 'vectors_version', '1')
            ON CONFLICT (account, index_name, key) DO UPDATE SET value = (meta.value::bigint + 1)::text
            """)
        return true
    }
}
