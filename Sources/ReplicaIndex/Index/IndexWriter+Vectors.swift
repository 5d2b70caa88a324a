import Foundation
import ReplicaCore
import ReplicaSQLite

/// An item whose text waits to be embedded.
package struct PendingEmbedding: Sendable {
    package var rowID: Int64
    /// The item's `indexed` time when it was read: vectors are stored only if the item is still that
    /// version when they are written.
    package var indexed: Double
    /// Title, description and body, one after another.
    package var text: String
}

/// Vectors as stored: a float32 scale, then one signed byte per dimension.
package enum VectorCoding {
    package static func encode(_ vector: [Float]) -> [UInt8] {
        let largest = vector.reduce(0) { max($0, abs($1)) }
        let scale = largest > 0 ? largest / 127 : 1
        var bytes = withUnsafeBytes(of: scale.bitPattern.littleEndian) { Array($0) }
        bytes.reserveCapacity(4 + vector.count)
        for value in vector { bytes.append(UInt8(bitPattern: Int8(clamping: Int((value / scale).rounded())))) }
        return bytes
    }

    /// The dot product of a float query with a stored vector.
    package static func dot(_ query: [Float], _ stored: UnsafeRawBufferPointer) -> Float {
        guard stored.count == 4 + query.count else { return 0 }
        let scale = Float(bitPattern: UInt32(littleEndian: stored.loadUnaligned(as: UInt32.self)))
        var sum: Float = 0
        for i in 0..<query.count { sum += query[i] * Float(Int8(bitPattern: stored[4 + i])) }
        return sum * scale
    }
}

extension IndexWriter {
    /// Stores an item's vectors under `model`, unless the item changed (or went) since it was read.
    ///
    /// - Returns: whether they were stored.
    @discardableResult
    package func setVectors(_ vectors: [[Float]], for pending: PendingEmbedding, model: String) throws -> Bool {
        guard try connection.cached("SELECT 1 FROM items WHERE id = ? AND indexed = ?")
            .firstRow([.integer(pending.rowID), .real(pending.indexed)], { _ in true }) == true else { return false }
        try connection.cached("DELETE FROM vectors WHERE item = ?").run([.integer(pending.rowID)])
        let insert = try connection.cached("INSERT INTO vectors(item, passage, vector) VALUES (?, ?, ?)")
        for (passage, vector) in vectors.enumerated() {
            try insert.run([.integer(pending.rowID), .integer(Int64(passage)), .blob(VectorCoding.encode(vector))])
        }
        try connection.cached("INSERT INTO embedded(item, model, indexed) VALUES (?1, ?2, ?3) ON CONFLICT(item) DO UPDATE SET model = ?2, indexed = ?3")
            .run([.integer(pending.rowID), .text(model), .real(pending.indexed)])
        return true
    }
}

extension IndexReader {
    /// Items with no vectors from `model` yet, oldest first.
    package func pendingEmbeddings(model: String, limit: Int) throws -> [PendingEmbedding] {
        try connection.cached("""
            SELECT items.id, items.indexed, items.title, items.description, items.body FROM items
            LEFT JOIN embedded ON embedded.item = items.id AND embedded.model = ?
            WHERE embedded.item IS NULL AND items.expires > ? ORDER BY items.id LIMIT ?
            """).rows([.text(model), .real(now.timeIntervalSince1970), .integer(Int64(limit))]) { row in
            let text = [row.text(2), row.text(3), row.text(4)].filter { !$0.isEmpty }.joined(separator: "\n")
            return PendingEmbedding(rowID: row.int64(0), indexed: row.double(1), text: text)
        }
    }

    /// How many items have vectors from `model`, how many passages they hold, and how many wait.
    package func embeddingCounts(model: String) throws -> (items: Int, passages: Int, backlog: Int) {
        let items = try connection.scalarInt("SELECT count(*) FROM embedded JOIN items ON items.id = embedded.item WHERE embedded.model = ? AND items.expires > ?",
                                             [.text(model), .real(now.timeIntervalSince1970)]) ?? 0
        let passages = try connection.scalarInt("SELECT count(*) FROM vectors JOIN embedded ON embedded.item = vectors.item WHERE embedded.model = ?",
                                                [.text(model)]) ?? 0
        let all = try connection.scalarInt("SELECT count(*) FROM items WHERE expires > ?", [.real(now.timeIntervalSince1970)]) ?? 0
        return (items, passages, all - items)
    }

    /// The items closest in meaning to `query` among those that pass the query's filters: each scored by
    /// its best passage's cosine, best first.
    package func nearest(to query: [Float], model: String, filters: SearchQuery, limit: Int) throws -> [(rowID: Int64, cosine: Double)] {
        var sql = """
            SELECT vectors.item, vectors.vector FROM vectors JOIN embedded ON embedded.item = vectors.item AND embedded.model = ?
            JOIN items ON items.id = vectors.item WHERE items.expires > ?
            """
        var arguments: [SQLValue] = [.text(model), .real(now.timeIntervalSince1970)]
        Self.appendFilters(for: filters, to: &sql, arguments: &arguments)
        var best: [Int64: Float] = [:]
        let statement = try connection.cached(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {
            let item = statement.int64(0)
            let score = statement.withBlob(1) { VectorCoding.dot(query, $0) }
            if score > best[item] ?? -.infinity { best[item] = score }
        }
        return best.sorted { $0.value > $1.value }.prefix(limit).map { ($0.key, Double($0.value)) }
    }

    /// Found items for row ids (semantic matches that the words did not find), in the order given.
    package func foundItems(_ rowIDs: [Int64]) throws -> [(item: FoundItem, rowID: Int64)] {
        let statement = try connection.cached("SELECT \(Self.itemColumns), substr(items.body, 1, 240) FROM items WHERE items.id = ?")
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
