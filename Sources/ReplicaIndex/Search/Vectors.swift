import CVectorKernels
import Foundation
import ReplicaCore
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

    /// The items closest in meaning to `query`, each scored by its best passage's cosine, best first: at
    /// most `limit`, none below `floor` (which may stand on the cosines of every passage, admitted or
    /// not: ``MeaningFloor/threshold(among:)``), only those `admits` lets through.
    package func nearest(to query: [Float], limit: Int, floor: MeaningFloor, admits: (Int64) -> Bool) -> [(
        rowID: Int64, cosine: Double
    )] {
        let scores = dots(query)
        // Rows are in item order, an item's passages together: its score is the best of its run.
        let threshold = Float(floor.threshold(among: scores))
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
