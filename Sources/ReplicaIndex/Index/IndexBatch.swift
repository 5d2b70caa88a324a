public import Foundation
import ReplicaCore
import Synchronization

/// Changes to an index that are written together with a client state, or not at all.
///
/// The changes are held until the batch ends; ending it writes them and the new client state in one
/// transaction, so after a crash the stored client state always describes exactly what the index holds.
/// Mirrors Core Spotlight's `beginBatch()` / `endBatch(withClientState:)` and the compare-and-swap
/// `endIndexBatch(expectedClientState:newClientState:)`.
///
/// For example:
/// ```swift
/// let batch = index.beginBatch()
/// try batch.indexItems(items)
/// let lastCursor = try await index.fetchLastClientState()   // what the last batch ended with
/// let newCursor = Data("sync-43".utf8)
/// try await batch.end(expectedClientState: lastCursor, newClientState: newCursor)
/// ```
public final class IndexBatch: Sendable {
    enum Operation: Sendable {
        case index([SearchableItem])
        case deleteIdentifiers([ItemIdentifier])
        case deleteDomains([DomainIdentifier])
        case deleteAll
    }

    private let index: SearchableIndex
    /// `nil` once the batch has ended.
    private let operations = Mutex<[Operation]?>([])

    init(index: SearchableIndex) {
        self.index = index
    }

    private func append(_ operation: Operation) throws {
        try operations.withLock { operations in
            guard operations != nil else {
                throw ReplicaError(.batchEnded, "this batch has already ended; begin a new one")
            }
            operations!.append(operation)
        }
    }

    /// Adds items to index when the batch ends.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` at once for an item that cannot be indexed.
    public func indexItems(_ items: [SearchableItem]) throws {
        for item in items { try item.validate() }
        try append(.index(items))
    }

    /// Adds a deletion of the items with these identifiers, done when the batch ends.
    /// Identifiers not in the index, and items another owner made, are left alone then.
    ///
    /// - Throws: ``ReplicaError`` with code `batchEnded` if the batch has already ended.
    public func deleteItems(withIdentifiers identifiers: [ItemIdentifier]) throws {
        try append(.deleteIdentifiers(identifiers))
    }

    /// Adds a deletion of every item whose domain is one of these or lies under one of them, done when the
    /// batch ends; items another owner made are left alone then.
    ///
    /// - Throws: ``ReplicaError`` with code `batchEnded` if the batch has already ended.
    public func deleteItems(withDomainIdentifiers domains: [DomainIdentifier]) throws {
        try append(.deleteDomains(domains))
    }

    /// Adds a deletion of every item indexed through this API, done when the batch ends; items another owner
    /// made are left alone then.
    ///
    /// - Throws: ``ReplicaError`` with code `batchEnded` if the batch has already ended.
    public func deleteAllItems() throws {
        try append(.deleteAll)
    }

    /// Writes the batch and stores `clientState` with it, in one transaction.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidArgument` for a state over
    ///   ``SearchableIndex/maximumClientStateSize`` bytes; nothing is written then.
    public func end(clientState: Data) async throws {
        try await commit(expected: nil, checkExpected: false, newState: clientState)
    }

    /// Writes the batch only if the stored client state is still `expectedClientState`
    /// (`nil`: no state stored yet), and stores `newClientState` with it.
    ///
    /// - Throws: ``ReplicaError`` with code `clientStateMismatch` when another writer moved the state
    ///   on; nothing of this batch is written then.
    public func end(expectedClientState: Data?, newClientState: Data) async throws {
        try await commit(expected: expectedClientState, checkExpected: true, newState: newClientState)
    }

    private func commit(expected: Data?, checkExpected: Bool, newState: Data) async throws {
        guard newState.count <= SearchableIndex.maximumClientStateSize else {
            throw ReplicaError(
                .invalidArgument,
                "a client state can be at most \(SearchableIndex.maximumClientStateSize) bytes; this one is \(newState.count)"
            )
        }
        guard
            let pending = operations.withLock({ operations -> [Operation]? in
                defer { operations = nil }
                return operations
            })
        else {
            throw ReplicaError(.batchEnded, "this batch has already ended; begin a new one")
        }
        try await index.write { writer in
            if checkExpected {
                let stored = try writer.clientState()
                guard stored == expected else {
                    throw ReplicaError(
                        .clientStateMismatch,
                        "the stored client state is not the expected one; another writer ended a batch first. Fetch the last client state and start again from there."
                    )
                }
            }
            for operation in pending {
                switch operation {
                case .index(let items): try writer.index(contentsOf: items)
                case .deleteIdentifiers(let identifiers): try writer.delete(identifiers: identifiers, owner: .api)
                case .deleteDomains(let domains): try writer.delete(domains: domains, owner: .api)
                case .deleteAll: try writer.deleteAll(owner: .api)
                }
            }
            // An item another owner made is refused: the whole batch and its client state roll back.
            try writer.throwIfRefused()
            try writer.setClientState(newState)
            CrashPoints.reach("batch.beforeCommit")
        }
        CrashPoints.reach("batch.afterCommit")
    }
}
