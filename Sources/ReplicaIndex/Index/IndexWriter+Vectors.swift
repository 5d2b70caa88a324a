import CVectorKernels
import Foundation
import ReplicaCore
import ReplicaSQLite
import Synchronization

/// An item whose text waits to be embedded.
package struct PendingEmbedding: Sendable {
    package var rowID: Int64
    /// The item's `indexed` time when it was read: vectors are stored only if the item is still that
    /// version when they are written.
    package var indexed: Double
    /// Title, description and body, one after another.
    package var text: String

    /// Makes a pending item as a reader found it.
    package init(rowID: Int64, indexed: Double, text: String) {
        self.rowID = rowID
        self.indexed = indexed
        self.text = text
    }

    /// The text a model reads of an item: its title, description and body, those it has, a line each.
    /// Where its passages begin (``Embedder/passageStart(_:in:)``) is counted in this text too.
    package static func text(title: String?, description: String?, body: String?) -> String {
        [title, description, body].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
    }
}

/// Vectors as stored: a float32 scale, then one signed byte per dimension.
package enum VectorCoding {
    /// The stored form of `vector`, whose values must be finite numbers (`SearchableIndex.checkVectors`
    /// refuses others before anything is written; here a value that is not one becomes 0 rather than a
    /// crash).
    package static func encode(_ vector: [Float]) -> [UInt8] {
        let largest = vector.reduce(0) { $1.isFinite ? max($0, abs($1)) : $0 }
        let scale = largest > 0 ? largest / 127 : 1
        var bytes = withUnsafeBytes(of: scale.bitPattern.littleEndian) { Array($0) }
        bytes.reserveCapacity(4 + vector.count)
        for value in vector {
            let scaled = value.isFinite ? (value / scale).rounded() : 0
            bytes.append(UInt8(bitPattern: Int8(clamping: Int(scaled))))
        }
        return bytes
    }
}

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
    ///   - floor: items below this cosine are left out before sorting (most of an index, for a question).
    package func nearest(
        to query: [Float], model: String, filters: SearchQuery, limit: Int,
        floor: Double
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

/// An index's vectors of one model as one int8 matrix, a row per passage, for a scan by dot products.
package struct VectorMatrix: Sendable {
    package var version: String
    package var model: String
    package var items: [Int64] = []
    package var scales: [Float] = []
    package var values: [Int8] = []
    package var dimensions = 0
    /// Each item's first row.
    package var firstRow: [Int64: Int] = [:]

    /// Reads every vector of `model` from the index.
    static func read(_ reader: SQLiteIndexReader, model: String) throws -> VectorMatrix {
        var matrix = VectorMatrix(version: try reader.meta("vectors_version") ?? "0", model: model)
        // Sized from the count of embedded items (a one-shot search reads 100,000 rows here), which the
        // small `embedded` table gives at once; counting the passages would read every vector twice.
        // Items with several passages grow the arrays a little past it.
        let expected =
            try reader.connection.scalarInt("SELECT count(*) FROM embedded WHERE model = ?", [.text(model)]) ?? 0
        matrix.items.reserveCapacity(expected)
        matrix.scales.reserveCapacity(expected)
        matrix.firstRow.reserveCapacity(expected)
        try reader.connection.cached(
            """
            SELECT vectors.item, vectors.vector FROM vectors JOIN embedded ON embedded.item = vectors.item AND embedded.model = ?
            ORDER BY vectors.item, vectors.passage
            """
        ).each([.text(model)]) { row in
            row.withBlob(1) { blob in
                guard blob.count > 4 else { return }
                if matrix.dimensions == 0 {
                    matrix.dimensions = blob.count - 4
                    matrix.values.reserveCapacity(expected * matrix.dimensions)
                }
                guard blob.count - 4 == matrix.dimensions else { return }
                let item = row.int64(0)
                if matrix.items.last != item { matrix.firstRow[item] = matrix.items.count }
                matrix.items.append(item)
                matrix.scales.append(Float(bitPattern: UInt32(littleEndian: blob.loadUnaligned(as: UInt32.self))))
                matrix.values.append(
                    contentsOf: UnsafeBufferPointer(
                        start: (blob.baseAddress! + 4).assumingMemoryBound(to: Int8.self),
                        count: matrix.dimensions))
            }
            return true
        }
        return matrix
    }

    /// The items closest in meaning to `query`, each scored by its best passage's cosine, best first: at
    /// most `limit`, none below `floor`, only those `admits` lets through.
    package func nearest(to query: [Float], limit: Int, floor: Double, admits: (Int64) -> Bool) -> [(
        rowID: Int64, cosine: Double
    )] {
        let scores = dots(query)
        // Rows are in item order, an item's passages together: its score is the best of its run.
        let threshold = Float(floor)
        // The best `limit`, best first, kept as they come: sorting every item (all of them, by meaning
        // alone) cost more than the scan at 100,000 items.
        var found: [(rowID: Int64, cosine: Float)] = []
        found.reserveCapacity(limit + 1)
        var row = 0
        while row < items.count {
            let item = items[row]
            var best = scores[row]
            row += 1
            while row < items.count && items[row] == item {
                best = max(best, scores[row])
                row += 1
            }
            guard best >= threshold else { continue }
            if found.count == limit, let weakest = found.last, best <= weakest.cosine { continue }
            guard admits(item) else { continue }
            var low = 0
            var high = found.count
            while low < high {
                let middle = (low + high) / 2
                if found[middle].cosine >= best { low = middle + 1 } else { high = middle }
            }
            found.insert((item, best), at: low)
            if found.count > limit { found.removeLast() }
        }
        return found.map { ($0.rowID, Double($0.cosine)) }
    }

    /// The cosine of each of `rowIDs`' best passage with `query`, for the items that have vectors.
    package func bestCosines(of rowIDs: [Int64], to query: [Float]) -> [Int64: Double] {
        best(of: rowIDs, to: query).mapValues { Double($0.cosine) }
    }

    /// The number (from 0) of each of `rowIDs`' best passage with `query`, for the items that have vectors.
    package func bestPassages(of rowIDs: [Int64], to query: [Float]) -> [Int64: Int] {
        best(of: rowIDs, to: query).mapValues(\.passage)
    }

    /// Each of `rowIDs`' best passage with `query` and its cosine, for the items that have vectors (the
    /// first of equal ones).
    private func best(of rowIDs: [Int64], to query: [Float]) -> [Int64: (passage: Int, cosine: Float)] {
        var best: [Int64: (passage: Int, cosine: Float)] = [:]
        for item in rowIDs {
            guard let first = firstRow[item] else { continue }
            var found = (passage: 0, cosine: -Float.infinity)
            var row = first
            while row < items.count && items[row] == item {
                let cosine = dot(query, row: row)
                if cosine > found.cosine { found = (row - first, cosine) }
                row += 1
            }
            best[item] = found
        }
        return best
    }

    /// The dot product of `query` with one row.
    package func dot(_ query: [Float], row: Int) -> Float {
        guard dimensions == query.count, dimensions > 0 else { return 0 }
        var result: Float = 0
        query.withUnsafeBufferPointer { q in
            values.withUnsafeBufferPointer { v in
                scales.withUnsafeBufferPointer { s in
                    replica_scaled_dots(
                        q.baseAddress!, v.baseAddress! + row * dimensions, s.baseAddress! + row, 1, dimensions, &result)
                }
            }
        }
        return result
    }

    /// The dot product of `query` with every row; a matrix of 200,000 rows or more is split across the
    /// processors (the scan of 100,000 rows takes about 2.3 ms on one core here with AVX2, 14 ms with
    /// SSE2 alone: below that size, waking a second thread on a busy machine costs more than it saves).
    package func dots(_ query: [Float]) -> [Float] {
        guard dimensions == query.count, dimensions > 0 else { return [Float](repeating: 0, count: items.count) }
        var result = [Float](repeating: 0, count: items.count)
        let d = dimensions
        let rows = items.count
        let parts = rows >= 200_000 ? max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4)) : 1
        query.withUnsafeBufferPointer { q in
            values.withUnsafeBufferPointer { v in
                scales.withUnsafeBufferPointer { s in
                    result.withUnsafeMutableBufferPointer { out in
                        // Each part writes its own rows of `out`.
                        nonisolated(unsafe) let (q, v, s, out) = (
                            q.baseAddress!, v.baseAddress!, s.baseAddress!, out.baseAddress!
                        )
                        DispatchQueue.concurrentPerform(iterations: parts) { part in
                            let first = rows * part / parts
                            let end = rows * (part + 1) / parts
                            replica_scaled_dots(q, v + first * d, s + first, end - first, d, out + first)
                        }
                    }
                }
            }
        }
        return result
    }
}

/// An index's vectors kept in memory between searches, read again when the index's vectors change.
package final class VectorCache: Sendable {
    /// The vectors of at most two models, the last read first: the store's model's and, while the index
    /// still holds a former model's (``FormerModelQuery``), that one's.
    private let matrices = Mutex<[VectorMatrix]>([])
    private let reads = Mutex(0)

    package init() {}

    func matrix(_ reader: SQLiteIndexReader, model: String) throws -> VectorMatrix {
        try matrix(version: reader.meta("vectors_version") ?? "0", model: model) {
            try VectorMatrix.read(reader, model: model)
        }
    }

    /// The vectors of `model` as of `version` (the index's `vectors_version`): those held when they are
    /// that version, else what `read` reads, kept for the next search.
    package func matrix(version: String, model: String, read: () throws -> VectorMatrix) throws -> VectorMatrix {
        if let held = matrices.withLock({ $0.first { $0.model == model } }), held.version == version { return held }
        let fresh = try read()
        matrices.withLock { $0 = [fresh] + $0.filter { $0.model != model }.prefix(1) }
        reads.withLock { $0 += 1 }
        return fresh
    }

    /// The model and version of the vectors held, if any.
    package var held: (model: String, version: String)? {
        matrices.withLock { $0.first.map { ($0.model, $0.version) } }
    }

    /// How many times the vectors were read into the cache.
    package var readCount: Int { reads.withLock { $0 } }
}
