import Foundation

/// The canonical record store: each account's records, with a change log written in the same
/// transaction as every record, so the index can follow without ever missing a change.
///
/// Writes follow sync semantics: a version older than the one held is ignored (and counted), the same
/// version again is a replay and changes nothing, a tombstone (`isDeleted`) wins over any older write.
/// Writing to an account that is not signed in is refused: sign it in first with `Store.signIn(_:)`.
///
/// For example:
/// ```swift
/// let summary = try await store.records.write([
///     Record(account: "alice", kind: "note", id: "42", version: 7, fields: ["title": "Launch plan"]),
///     Record(account: "alice", kind: "note", id: "41", version: 3, isDeleted: true),
/// ])
/// try await ProjectionEngine(store: store, projections: ProjectionSet(indexName: Store.defaultIndexName)).catchUp(account: "alice")
/// ```
public struct RecordStore: Sendable {
    let store: Store

    /// Stores records, each account's in one transaction, and appends them to the change log.
    ///
    /// - Throws: `ReplicaError` with code `invalidItem` for a record missing what the store needs, or
    ///   `accountNotSignedIn` for a record of an account that is not signed in (both checked for all
    ///   before anything is written; a sign-out that lands while the accounts are written is checked again
    ///   inside each account's transaction).
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    @discardableResult
    package func write(_ records: [Record]) throws -> RecordWriteSummary {
        for record in records { try record.validate() }
        var byAccount: [AccountID: [Record]] = [:]
        var order: [AccountID] = []
        for record in records {
            if byAccount[record.account] == nil { order.append(record.account) }
            byAccount[record.account, default: []].append(record)
        }
        for account in order { _ = try store.requireSignedIn(account) }
        var summary = RecordWriteSummary()
        for account in order {
            let database = try store.recordStorage(for: account, creating: true)!
            summary = summary + (try database.write(byAccount[account]!, now: store.configuration.index.clock()))
            CrashPoints.reach("records.afterCommit")
        }
        return summary
    }

    /// The record as stored (a tombstone for a deleted one), or `nil` if the store does not have it.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func record(account: AccountID, kind: String, id: String) throws -> Record? {
        try store.recordStorage(for: account, creating: false)?.record(kind: kind, id: id)
    }

    /// How many deliveries of an older version were ignored for the account, over its lifetime.
    @available(*, noasync, message: "it waits on SQLite; in async code call its async form")
    package func ignoredOlderCount(account: AccountID) throws -> Int {
        try store.recordStorage(for: account, creating: false)?.counter("ignoredOlder") ?? 0
    }
}

extension Store {
    /// The canonical record store of this store's accounts.
    public var records: RecordStore { RecordStore(store: self) }
}
