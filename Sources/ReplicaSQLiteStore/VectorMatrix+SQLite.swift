import Foundation
import ReplicaIndex
import ReplicaSQLite

extension VectorMatrix {
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
}

extension VectorCache {
    func matrix(_ reader: SQLiteIndexReader, model: String) throws -> VectorMatrix {
        try matrix(version: reader.meta("vectors_version") ?? "0", model: model) {
            try VectorMatrix.read(reader, model: model)
        }
    }
}
