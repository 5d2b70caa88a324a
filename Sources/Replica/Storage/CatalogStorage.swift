package import Foundation

// The seam between the store and where it keeps its catalog. `Store` and its extensions speak only this
// protocol; the SQLite file (`SQLiteCatalog`) is one implementation of it. No type of a storage engine
// crosses it, and an engine's own errors become `ReplicaError`s below it (code `storage`, with the
// engine's error as the cause; ``ReplicaError/isOutOfSpace`` tells a full disk apart).

/// Where a store keeps its catalog: which accounts exist, in what state and under which sign-in, and the
/// sources added to them with what each last reported. It never holds indexed content.
///
/// Each operation is one transaction: what it reads and what it writes are seen by other processes
/// together or not at all. Every operation waits for the storage, so async code runs it in
/// `Blocking.run`.
package protocol CatalogStorage: Sendable {
    // MARK: Accounts

    /// Every account the catalog holds, signed in or being signed out, in identifier order.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func accounts() throws -> [AccountRecord]

    /// The account's entry, whatever its state; `nil` when the catalog has none.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func account(_ id: AccountID) throws -> AccountRecord?

    /// The account's entry when the catalog has one, whatever its state; otherwise a new entry, signed in
    /// under a generation the catalog never gave before (not even to an account since deleted), in the
    /// account's folder `accounts/<directory name>`, signed in now. Looking and inserting are one
    /// transaction: two processes signing the same account in get the same entry.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func signIn(_ id: AccountID) throws -> AccountRecord

    /// Records that the account is being signed out: from the commit on it is never searched or written
    /// again.
    ///
    /// - Returns: `false` when the catalog has no entry for the account (nothing was changed).
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func markSigningOut(_ id: AccountID) throws -> Bool

    /// Records, in one transaction, that every account but `id` is being signed out, and signs `id` in
    /// as ``signIn(_:)`` does when the catalog has no entry for it (an entry it has is left as it is).
    ///
    /// - Returns: the accounts other than `id` that the catalog held before, in identifier order, whatever
    ///   their state was.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func markSigningOut(allBut id: AccountID) throws -> [AccountID]

    /// Deletes the entry of an account being signed out, with its sources, once its files are gone; an
    /// entry signed in (again) meanwhile is left alone. Afterwards nothing of the entry is left in the
    /// storage's own logs either (SQLite's write-ahead log is checkpointed and truncated).
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func deleteSignedOut(_ id: AccountID) throws

    /// A number that changes whenever anything (this process or another) commits to the catalog. Only
    /// two readings compared mean something: equal, nothing was committed in between.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func dataVersion() throws -> Int

    // MARK: Sources

    /// Adds a source, with its status `idle`, to a signed-in account; a definition with no name is named
    /// `<kind>-<n>`, the first such name not taken. The account's state is checked in the same
    /// transaction as the insert: a source is never added to an account signed out meanwhile.
    ///
    /// - Returns: the definition as stored, with its name.
    /// - Throws: ``ReplicaError`` with code `accountNotSignedIn` when the account is not signed in, and
    ///   `invalidArgument` for a name that is not valid or already taken (the messages of
    ///   ``sourceAccountNotSignedIn(_:)`` and ``sourceNameTaken(_:)``).
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func addSource(_ definition: SourceDefinition, at date: Date) throws -> SourceDefinition

    /// The sources of signed-in accounts, by name; settings that cannot be read are an empty object.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func sources() throws -> [SourceDefinition]

    /// Removes a source and its status; a name the catalog does not have is not an error.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func removeSource(named name: String) throws

    /// What a source last reported; `nil` when the catalog has no status for it.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func sourceReport(named name: String) throws -> SourceReport?

    /// Records a source's state and its detail (`nil` clears the detail). A name the catalog does not
    /// have changes nothing; so for the three below.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func setSourceState(_ name: String, _ state: SourceState, detail: String?, at date: Date) throws

    /// Records a source's last failure, which happened at `failedAt`.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func setSourceError(_ name: String, _ message: String, failedAt: Date, at date: Date) throws

    /// Records that a source committed a batch at `committedAt`: nothing it saw is pending any more.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func setSourceCommit(_ name: String, committedAt: Date, at date: Date) throws

    /// Records how many changes a source has seen but not committed yet.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func setSourcePending(_ name: String, _ count: Int, at date: Date) throws
}

/// What a source last reported, as the catalog keeps it.
package struct SourceReport: Sendable, Equatable {
    /// What the source last reported doing.
    package var state: SourceState
    /// The detail it gave with its state, if any.
    package var detail: String?
    /// The last failure it reported, if any.
    package var lastError: String?
    /// When the last failure was reported.
    package var lastErrorAt: Date?
    /// When it last committed a batch.
    package var lastCommit: Date?
    /// Changes seen but not committed yet.
    package var pending: Int

    /// Makes a report as a catalog storage reads it.
    package init(
        state: SourceState, detail: String?, lastError: String?, lastErrorAt: Date?, lastCommit: Date?, pending: Int
    ) {
        self.state = state
        self.detail = detail
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.lastCommit = lastCommit
        self.pending = pending
    }
}

extension CatalogStorage {
    /// Fails unless `id` is signed in under `generation`: what every operation on an account's open files
    /// checks, so that a sign-out made by another process or another `Store` value is noticed.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    package func requireSignedIn(_ id: AccountID, generation: Int64) throws {
        guard let current = try account(id), current.state == .signedIn, current.generation == generation else {
            throw ReplicaError.signedOutSinceOpened(id)
        }
    }

    // The words of ``addSource(_:at:)``'s refusals, the same whichever storage refuses.

    /// A source added to an account that is not signed in.
    package static func sourceAccountNotSignedIn(_ account: AccountID) -> ReplicaError {
        ReplicaError(
            .accountNotSignedIn,
            "account '\(account)' is not signed in; sign it in first (Store.signIn, or `replica accounts sign-in \(account)`)"
        )
    }

    /// A source named as one the store already has.
    package static func sourceNameTaken(_ name: String) -> ReplicaError {
        ReplicaError(.invalidArgument, "the store already has a source named '\(name)'; choose another --name")
    }

    /// The name a source with none is given: `<kind>-<n>`, the first not in `taken`.
    package static func firstFreeName(for kind: SourceKind, taken: Set<String>) -> String {
        var number = 1
        while taken.contains("\(kind.rawValue)-\(number)") { number += 1 }
        return "\(kind.rawValue)-\(number)"
    }
}
