package import Foundation
import ReplicaCore

// Initialisers of the values the seam carries, for backends in other modules of the package.

extension FoundItem {
    package init(item: SearchableItem, score: Double, snippet: String?, origin: ItemOrigin, indexedAt: Date) {
        self.item = item
        self.score = score
        self.snippet = snippet
        self.origin = origin
        self.indexedAt = indexedAt
    }
}

extension VectorMatrix {
    /// An empty matrix of `model`'s vectors, as of the index's `vectors_version`.
    package init(version: String, model: String) {
        self.version = version
        self.model = model
    }

    /// Adds one passage's vector in its stored form (a float32 scale, then a signed byte per dimension);
    /// rows of one item must come together. A vector of another length than the first is left out.
    package mutating func append(item: Int64, stored bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 4 else { return }
        if dimensions == 0 { dimensions = bytes.count - 4 }
        guard bytes.count - 4 == dimensions else { return }
        if items.last != item { firstRow[item] = items.count }
        items.append(item)
        scales.append(Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self))))
        values.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[4...]).bindMemory(to: Int8.self))
    }
}
