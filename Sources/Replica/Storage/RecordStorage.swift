package import Foundation

// The seam between the store and where it keeps an account's records. `RecordStore`, the projection
// engine, hydration, maintenance and status speak only this protocol; the SQLite file of each account
// (`SQLiteRecordStorage`, `accounts/<id>/records.sqlite`) is one implementation of it. No type of a
// storage engine crosses it, and an engine's own errors become `ReplicaError`s below it (code `storage`,
// with the engine's error as the cause).

/// Where one account keeps its canonical records, with the change log written in the same transaction as
/// every record, the deletions from its indexes still to retry, and running counters.
///
/// Every operation first checks that the account is still signed in under the sign-in the storage was
/// opened with (``signIn``), and fails with code `accountNotSignedIn` otherwise: a sign-out made by
/// another process is noticed at once. A write checks it inside its transaction, so that records that
/// pass the check commit before any sign-out that follows deletes the storage, never into a deleted one.
/// Each operation is one transaction. Every operation waits for the storage, so async code runs it in
/// `Blocking.run`.
package protocol RecordStorage: AnyObject, Sendable {
    /// The account whose records these are.
    var account: AccountID { get }
    /// The sign-in the storage was opened under.
    var signIn: SignInLease { get }

    // MARK: Records

    /// Stores each record unless the storage holds the same or a newer version of it, and appends each
    /// one stored to the change log, all in one transaction. A tombstone keeps no fields. Deliveries of an
    /// older version are added to the counter `ignoredOlder`.
    ///
    /// - Parameter now: the time the change log records for each entry.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func write(_ records: [Record], now: Date) throws -> RecordWriteSummary

    /// The record as stored (a tombstone for a deleted one), or `nil` if the storage does not have it.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func record(kind: String, id: String) throws -> Record?

    /// Records of `kind` with ids after `cursor` (from the first when `nil`), in id order, at most
    /// `limit`: a rebuild's next batch.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func records(kind: String, after cursor: String?, limit: Int) throws -> [Record]

    /// The ids of the records of `kind` after `cursor`, in id order, at most `limit`, with whether each is
    /// live (not deleted, readable by the account): what a comparison with the index needs, fields left
    /// unread.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func recordIDs(kind: String, after cursor: String?, limit: Int) throws -> [(id: String, live: Bool)]

    /// The kinds that have records (tombstones included), in order.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func kinds() throws -> [String]

    /// How many records are held, tombstones left out.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func liveRecordCount() throws -> Int

    // MARK: Change log

    /// Change-log entries after `sequence`, oldest first, at most `limit`, each with its record as it is
    /// now (`nil` when the storage no longer has it).
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func changes(after sequence: Int64, limit: Int) throws -> [(Change, Record?)]

    /// How many change-log entries come after `sequence`.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func changeCount(after sequence: Int64) throws -> Int

    /// Appends a change for a record as it is, so the next catch-up applies it again (its item was found
    /// stale); a record the storage does not have appends nothing.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func touch(kind: String, id: String) throws

    /// The newest change-log sequence number (0 for an empty log). Sequence numbers are never reused,
    /// even after pruning.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func lastSequence() throws -> Int64

    /// Drops change-log entries up to `sequence`, which every consumer has applied; nothing for 0 or less.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func pruneChanges(through sequence: Int64) throws

    /// A number that changes whenever anything (this process or another) commits to the storage. Only two
    /// readings compared mean something: equal, nothing was committed in between.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func dataVersion() throws -> Int

    // MARK: Counters

    /// A running total kept with the records (such as `ignoredOlder`); 0 for one never counted.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func counter(_ name: String) throws -> Int

    // MARK: Retry queue

    /// Queues deletions to retry, due at once; a target already queued keeps its place and back-off and
    /// takes the new error.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func enqueue(_ deletions: [(indexName: String, target: PendingDeletion.Target)], error: String, now: Date) throws

    /// The queued deletions due by `date` (all of them when `nil`), soonest due first.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func pendingDeletions(dueBy date: Date?) throws -> [PendingDeletion]

    /// Removes a deletion from the queue: it was done.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func finishDeletion(_ deletion: PendingDeletion) throws

    /// Counts one more failed attempt of a queued deletion and makes it due at `date`.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func postponeDeletion(_ deletion: PendingDeletion, until date: Date, error: String) throws

    // MARK: Closing

    /// Stops all further use: the account was signed out.
    ///
    /// - Parameter discarding: the storage is about to be deleted; nothing of it needs to be kept (SQLite's
    ///   connections close without first copying their write-ahead logs into the file).
    @available(*, noasync, message: "it waits for work in progress on the storage")
    func close(discarding: Bool)
}

extension RecordStorage {
    /// Every queued deletion, due or not, soonest due first.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func pendingDeletions() throws -> [PendingDeletion] {
        try pendingDeletions(dueBy: nil)
    }
}
