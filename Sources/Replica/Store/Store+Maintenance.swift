import Foundation

/// The outcome of a deletion that must not be forgotten.
public enum DeletionOutcome: Sendable, Equatable {
    /// Done now; `count` items were removed.
    case deleted(count: Int)
    /// It failed and was queued; it is retried with back-off until it succeeds.
    case queued(reason: String)
}

/// What one sweep did.
public struct SweepReport: Sendable, Equatable {
    /// Expired items purged.
    public var purged = 0
    /// Indexes that could not be purged this time (another writer held them too long); tried next time.
    public var indexesSkipped = 0
    /// Queued deletions that succeeded this time.
    public var deletionsDone = 0
    /// Queued deletions that failed again and wait for their next attempt.
    public var deletionsPostponed = 0

    /// Creates an empty report: nothing done yet.
    public init() {}
}

extension Store {
    /// Deletes items from an account's index; if that fails, the deletion is queued durably in the
    /// account's record store and retried by ``sweep(backoff:)`` until it succeeds. Failed deletions are
    /// work to retry, never a warning to forget.
    ///
    /// These deletions are the store's own: they remove items whoever made them, for hydration (an item
    /// its owner no longer vouches for) and for a host or person clearing an index (`replica delete`).
    /// Owners delete their own items through their own paths (`SearchableIndex`, records, sources).
    ///
    /// - Returns: whether the deletion happened now or was queued.
    @discardableResult
    public func deleteReliably(
        _ targets: [PendingDeletion.Target], account: AccountID,
        indexName: String = Store.defaultIndexName
    ) async throws -> DeletionOutcome {
        guard !targets.isEmpty else { return .deleted(count: 0) }
        do {
            guard let index = try await existingIndex(named: indexName, account: account) else {
                return .deleted(count: 0)
            }
            return .deleted(count: try await Self.delete(targets, from: index))
        } catch let error where Self.storageFailure(error) != nil {
            let reason = Self.storageFailure(error)!
            try await Blocking.run { [self] in
                try recordStorage(for: account, creating: true)!.enqueue(
                    targets.map { (indexName, $0) }, error: reason, now: configuration.index.clock())
            }
            return .queued(reason: reason)
        } catch let error as ReplicaError where error.code == .corruptIndex {
            // The index was rebuilt empty: there is nothing left to delete.
            return .deleted(count: 0)
        }
    }

    /// Why a write failed, in words for the deletion queue, when the storage failed it (a full or failing
    /// disk, a lock held too long): `nil` for any other error, which is not retried.
    static func storageFailure(_ error: any Error) -> String? {
        switch error {
        case let error as ReplicaError where error.code == .storage:
            "the index could not be written (\((error.cause as? any StorageFailure)?.summary ?? error.message))"
        case let error as any StorageFailure:
            "the index could not be written (\(error.summary))"
        default:
            nil
        }
    }

    static func delete(_ targets: [PendingDeletion.Target], from index: SearchableIndex) async throws -> Int {
        try await index.write { writer in
            var count = 0
            for target in targets {
                switch target {
                case .identifier(let identifier): count += try writer.delete(identifiers: [identifier], owner: nil)
                case .domain(let domain): count += try writer.delete(domains: [domain], owner: nil)
                }
            }
            return count
        }
    }

    /// The deletions queued for an account, due or not.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func pendingDeletions(account: AccountID) throws -> [PendingDeletion] {
        try recordStorage(for: account, creating: false)?.pendingDeletions() ?? []
    }

    /// Purges expired items from every index of every signed-in account, and retries the queued
    /// deletions that are due, postponing those that fail again by `backoff`.
    @discardableResult
    public func sweep(backoff: Backoff = Backoff()) async throws -> SweepReport {
        var report = SweepReport()
        let now = configuration.index.clock()
        for account in try await signedInAccounts().map(\.id) {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                do {
                    report.purged += try await index.purgeExpiredItems()
                } catch let error where Self.storageFailure(error) != nil {
                    // Expired items are invisible already; purging them can wait for the next sweep.
                    report.indexesSkipped += 1
                }
            }
            guard let records = try await recordStorage(for: account, creating: false) else { continue }
            for deletion in try await Blocking.run({ try records.pendingDeletions(dueBy: now) }) {
                do {
                    if let index = try await existingIndex(named: deletion.indexName, account: account) {
                        _ = try await Self.delete([deletion.target], from: index)
                    }
                    try await Blocking.run { try records.finishDeletion(deletion) }
                    report.deletionsDone += 1
                } catch let error where Self.storageFailure(error) != nil {
                    let next = backoff.nextAttempt(afterFailures: deletion.attempts + 1, now: now)
                    try await Blocking.run {
                        try records.postponeDeletion(deletion, until: next, error: Self.storageFailure(error)!)
                    }
                    report.deletionsPostponed += 1
                }
            }
        }
        return report
    }
}
