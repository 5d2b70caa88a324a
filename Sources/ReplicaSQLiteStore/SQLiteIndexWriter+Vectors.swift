import CVectorKernels
import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import Synchronization

extension SQLiteIndexWriter {
    /// Whether the items row `id` is still the version written at `indexed`: work done on a copy read
    /// earlier (vectors, enrichment) is stored only if the item did not change or go meanwhile.
    func isStill(_ id: Int64, indexedAt indexed: Double) throws -> Bool {
        try connection.cached("SELECT 1 FROM items WHERE id = ? AND indexed = ?").firstRow(
            [.integer(id), .real(indexed)], { _ in true }) == true
    }

    /// Drops the vectors of an item whose text was just replaced: the new text is embedded again (and
    /// search answers by its words meanwhile). Done here rather than by a trigger on `items`, which
    /// made every text-changing update four to five times slower (index migration 0009).
    func dropVectorsOfChangedText(_ id: Int64) throws {
        guard
            try connection.cached("SELECT 1 FROM embedded WHERE item = ?").firstRow([.integer(id)], { _ in true })
                == true
        else { return }
        try connection.cached("DELETE FROM vectors WHERE item = ?").run([.integer(id)])
        try connection.cached("DELETE FROM embedded WHERE item = ?").run([.integer(id)])
        try connection.cached(
            """
            INSERT INTO meta(key, value) VALUES ('vectors_version', '1')
            ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
            """
        ).run()
    }

    /// Stores an item's vectors under `model`, unless the item changed (or went) since it was read.
    ///
    /// - Returns: whether they were stored.
    @discardableResult
    package func setVectors(_ vectors: [[Float]], for pending: PendingEmbedding, model: String) throws -> Bool {
        guard try isStill(pending.rowID, indexedAt: pending.indexed) else { return false }
        try connection.cached("DELETE FROM vectors WHERE item = ?").run([.integer(pending.rowID)])
        let insert = try connection.cached("INSERT INTO vectors(item, passage, vector) VALUES (?, ?, ?)")
        for (passage, vector) in vectors.enumerated() {
            try insert.run([.integer(pending.rowID), .integer(Int64(passage)), .blob(VectorCoding.encode(vector))])
        }
        try connection.cached(
            "INSERT INTO embedded(item, model, indexed) VALUES (?1, ?2, ?3) ON CONFLICT(item) DO UPDATE SET model = ?2, indexed = ?3"
        )
        .run([.integer(pending.rowID), .text(model), .real(pending.indexed)])
        try connection.cached(
            """
            INSERT INTO meta(key, value) VALUES ('vectors_version', '1')
            ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
            """
        ).run()
        return true
    }
}

extension SQLiteIndexReader {
    /// Items with no vectors from `model` yet, oldest first.
    package func pendingEmbeddings(model: String, limit: Int) throws -> [PendingEmbedding] {
        try connection.cached(
            """
            SELECT items.id, items.indexed, items.title, items.description, items.body FROM items
            LEFT JOIN embedded ON embedded.item = items.id AND embedded.model = ?
            WHERE embedded.item IS NULL AND items.expires > ? ORDER BY items.id LIMIT ?
            """
        ).rows([.text(model), .real(now.timeIntervalSince1970), .integer(Int64(limit))]) { row in
            PendingEmbedding(
                rowID: row.int64(0), indexed: row.double(1),
                text: PendingEmbedding.text(title: row.text(2), description: row.text(3), body: row.text(4)))
        }
    }

    /// How many items have vectors from `model`, how many passages they hold, and how many wait.
    package func embeddingCounts(model: String) throws -> (items: Int, passages: Int, backlog: Int) {
        let items = try embeddedCount(model: model)
        // This one reads every vector (they are stored in the rows it counts): for `replica status`,
        // never for a pass that only needs the backlog.
        let passages =
            try connection.scalarInt(
                "SELECT count(*) FROM vectors JOIN embedded ON embedded.item = vectors.item WHERE embedded.model = ?",
                [.text(model)]) ?? 0
        return (items, passages, try count() - items)
    }

    /// How many items wait for vectors from `model`.
    package func embeddingBacklog(model: String) throws -> Int {
        try count() - embeddedCount(model: model)
    }

    package func holdsVectors(model: String) throws -> Bool {
        try connection.cached("SELECT 1 FROM embedded WHERE model = ? LIMIT 1").firstRow([.text(model)], { _ in true })
            == true
    }

    /// The live items with vectors from `model`: the embedded items less the expired ones among them,
    /// found through the partial index (as ``count()`` does); the join with every item cost 30 ms at
    /// 100,000 items.
    private func embeddedCount(model: String) throws -> Int {
        let embedded = try connection.scalarInt("SELECT count(*) FROM embedded WHERE model = ?", [.text(model)]) ?? 0
        let expired =
            try connection.scalarInt(
                """
                SELECT count(*) FROM items JOIN embedded ON embedded.item = items.id WHERE \(Self.hasExpired) AND embedded.model = ?
                """, [.real(now.timeIntervalSince1970), .text(model)]) ?? 0
        return embedded - expired
    }

    /// The items closest in meaning to `query` among those that pass the query's filters: each scored by
    /// its best passage's cosine, best first. The vectors come from `cache` when there is one (read again
    /// only when they changed), else from the file.
    ///
    /// - Parameters:
    ///   - limit: the most items returned.
    ///   - floor: items below it are left out before sorting (most of an index, for a question).
    package func nearest(
        to query: [Float], model: String, filters: SearchQuery, limit: Int,
        floor: MeaningFloor
    ) throws -> [(rowID: Int64, cosine: Double)] {
        guard limit > 0 else { return [] }
        let matrix = try vectorCache?.matrix(self, model: model) ?? VectorMatrix.read(self, model: model)
        // Which items may be returned: those that pass the filters, or, without filters, all but the
        // expired ones.
        let allowed = try rowIDs(passing: filters)
        let expired =
            allowed != nil
            ? []
            : Set(
                try connection.cached("SELECT id FROM items WHERE \(Self.hasExpired)").rows([
                    .real(now.timeIntervalSince1970)
                ]) { $0.int64(0) })
        return matrix.nearest(to: query, limit: limit, floor: floor) { item in
            if let allowed { allowed.contains(item) } else { !expired.contains(item) }
        }
    }

    /// The cosine of each of `rowIDs`' best passage with `query`, for the items that have vectors.
    package func cosines(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Double] {
        let matrix = try vectorCache?.matrix(self, model: model) ?? VectorMatrix.read(self, model: model)
        return matrix.bestCosines(of: rowIDs, to: query)
    }

    package func bestPassages(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Int] {
        let matrix = try vectorCache?.matrix(self, model: model) ?? VectorMatrix.read(self, model: model)
        return matrix.bestPassages(of: rowIDs, to: query)
    }

    /// Found items for row ids (semantic matches that the words did not find), in the order given.
    package func foundItems(_ rowIDs: [Int64]) throws -> [(item: FoundItem, rowID: Int64)] {
        let statement = try connection.cached(
            "SELECT \(Self.itemColumns), substr(items.body, 1, 240) FROM items WHERE items.id = ?")
        return try rowIDs.compactMap { rowID in
            try statement.firstRow([.integer(rowID)]) { row -> (item: FoundItem, rowID: Int64)? in
                guard let (item, origin, indexed) = try? Self.decodeItem(row) else { return nil }
                // The start of the body, its whitespace runs squeezed: no word matched to show around.
                let excerpt = row.optionalText(10).map { text in
                    text.split(whereSeparator: \.isWhitespace).joined(separator: " ") + (text.count >= 240 ? "…" : "")
                }
                return (FoundItem(item: item, score: 0, snippet: excerpt, origin: origin, indexedAt: indexed), rowID)
            } ?? nil
        }
    }
}
