import Foundation

// The store's calls that wait on SQLite or the database, as apps call them: each does its work on a
// thread of its own (SQLite's busy waits can last up to the busy timeout, 600 s by default), so that the
// caller's executor and Swift's cooperative pool are never held. Their blocking twins are the package's
// own (the command line's threads and the tests): outside it there is one name per operation, so that
// top-level code in a `main.swift`, which Swift's overload ranking takes for synchronous code, cannot
// pick a blocking form it then refuses.

extension Store {
    /// Signs an account in (a no-op if it is already).
    ///
    /// This is the only way an account comes into use: writes for an account that is not signed in are
    /// refused with `ReplicaError/Code/accountNotSignedIn`, so that a sync layer delivering late for an
    /// account that was signed out cannot bring it back.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    @discardableResult
    public func signIn(_ account: AccountID) async throws -> AccountRecord {
        try await Blocking.run { [self] in try signInNow(account) }
    }

    /// Signs an account out: destroys everything the store holds for it (its files, or its rows and
    /// partitions in the database).
    ///
    /// The sign-out is recorded first, so from that moment the account is never searched again, and a
    /// process that dies halfway leaves it to be finished by the next one that opens the store.
    ///
    /// - Returns: `false` when the store held nothing for the account.
    ///
    /// On a disk too full to record the sign-out, the account's files are deleted first (that is what
    /// frees the room), then it is recorded and finished as usual.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    @discardableResult
    public func signOut(_ account: AccountID) async throws -> Bool {
        try await Blocking.run { [self] in try signOutNow(account) }
    }

    /// Signs out every signed-in account but `account`, and signs `account` in: what an app does on logout.
    ///
    /// The whole switch is recorded in one transaction before any file is deleted: every other account is
    /// marked as signing out (never searched or written again from that moment) and `account` is signed
    /// in. A process killed at any later instant leaves the rest to the next one that opens the store.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func switchAccount(to account: AccountID) async throws {
        try await Blocking.run { [self] in try switchAccountNow(to: account) }
    }

    /// Adds a source to a signed-in account of the store, naming it `<kind>-<n>` when it has no name.
    ///
    /// - Returns: the definition as stored, with its name.
    /// - Throws: `ReplicaError` for a name already taken or not valid, or with code `accountNotSignedIn`
    ///   when the account is not signed in.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    @discardableResult
    public func addSource(_ definition: SourceDefinition) async throws -> SourceDefinition {
        try await Blocking.run { [self] in try addSourceNow(definition) }
    }

    /// The accounts that are signed in, in identifier order.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func signedInAccounts() async throws -> [AccountRecord] {
        try await Blocking.run { [self] in try signedInAccountsNow() }
    }

    /// The named index of a signed-in account, created if it does not exist yet.
    ///
    /// - Parameters:
    ///   - name: letters, digits, `.`, `-` and `_`, up to 64 characters.
    ///   - account: a signed-in account.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when the account is not signed in (sign it
    ///   in with `signIn(_:)` first), and for a bad name or account, or an index file written by a newer
    ///   replica.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func index(named name: String = Store.defaultIndexName, account: AccountID) async throws -> SearchableIndex {
        try await Blocking.run { [self] in try indexNow(named: name, account: account) }
    }

    /// The index if the account is signed in and the index exists; never creates either.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func existingIndex(named name: String, account: AccountID) async throws -> SearchableIndex? {
        try await Blocking.run { [self] in try existingIndexNow(named: name, account: account) }
    }

    /// The names of the indexes an account has.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func indexNames(for account: AccountID) async throws -> [String] {
        try await Blocking.run { [self] in try indexNamesNow(for: account) }
    }

    /// The sources of signed-in accounts, by name.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func sources() async throws -> [SourceDefinition] {
        try await Blocking.run { [self] in try sourcesNow() }
    }

    /// The source with this name, if the store has it.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func source(named name: String) async throws -> SourceDefinition? {
        try await sources().first { $0.name == name }
    }

    /// The deletions queued for an account, due or not.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func pendingDeletions(account: AccountID) async throws -> [PendingDeletion] {
        try await Blocking.run { [self] in try pendingDeletionsNow(account: account) }
    }

    /// Records how many changes a source has seen but not committed yet.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func reportSourcePending(_ name: String, _ count: Int) async {
        _ = try? await Blocking.run { [self] in reportSourcePendingNow(name, count) }
    }

    func reportSourceState(_ name: String, _ state: SourceState, detail: String?) async {
        _ = try? await Blocking.run { [self] in reportSourceStateNow(name, state, detail: detail) }
    }

    func reportSourceError(_ name: String, _ message: String, at date: Date) async {
        _ = try? await Blocking.run { [self] in reportSourceErrorNow(name, message, at: date) }
    }

    func reportSourceCommit(_ name: String, at date: Date) async {
        _ = try? await Blocking.run { [self] in reportSourceCommitNow(name, at: date) }
    }

    /// A signed-in account's record store, created only when `creating`, without blocking the caller.
    func recordStorage(for account: AccountID, creating: Bool) async throws -> (any RecordStorage)? {
        try await Blocking.run { [self] in try recordStorageNow(for: account, creating: creating) }
    }

    /// Drops cached indexes of accounts that another process signed out, without blocking the caller.
    func refreshIfCatalogChanged() async {
        _ = try? await Blocking.run { [self] in refreshIfCatalogChangedNow() }
    }

    // The synchronous forms by names of their own, so that the async forms above call them and not
    // themselves.
    private func signedInAccountsNow() throws -> [AccountRecord] { try signedInAccounts() }
    private func indexNow(named name: String, account: AccountID) throws -> SearchableIndex {
        try index(named: name, account: account)
    }
    private func existingIndexNow(named name: String, account: AccountID) throws -> SearchableIndex? {
        try existingIndex(named: name, account: account)
    }
    private func indexNamesNow(for account: AccountID) throws -> [String] { try indexNames(for: account) }
    private func sourcesNow() throws -> [SourceDefinition] { try sources() }
    private func reportSourcePendingNow(_ name: String, _ count: Int) { reportSourcePending(name, count) }
    private func reportSourceStateNow(_ name: String, _ state: SourceState, detail: String?) {
        reportSourceState(name, state, detail: detail)
    }
    private func reportSourceErrorNow(_ name: String, _ message: String, at date: Date) {
        reportSourceError(name, message, at: date)
    }
    private func reportSourceCommitNow(_ name: String, at date: Date) { reportSourceCommit(name, at: date) }
    private func recordStorageNow(for account: AccountID, creating: Bool) throws -> (any RecordStorage)? {
        try recordStorage(for: account, creating: creating)
    }
    private func refreshIfCatalogChangedNow() { refreshIfCatalogChanged() }
    private func pendingDeletionsNow(account: AccountID) throws -> [PendingDeletion] {
        try pendingDeletions(account: account)
    }
    private func addSourceNow(_ definition: SourceDefinition) throws -> SourceDefinition { try addSource(definition) }
    private func signInNow(_ account: AccountID) throws -> AccountRecord { try signIn(account) }
    private func signOutNow(_ account: AccountID) throws -> Bool { try signOut(account) }
    private func switchAccountNow(to account: AccountID) throws { try switchAccount(to: account) }
}

extension RecordStore {
    /// Stores records, each account's in one transaction, and appends them to the change log.
    ///
    /// - Throws: `ReplicaError` with code `invalidItem` for a record missing what the store needs, or
    ///   `accountNotSignedIn` for a record of an account that is not signed in (both checked for all
    ///   before anything is written; a sign-out that lands while the accounts are written is checked again
    ///   inside each account's transaction).
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    @discardableResult
    public func write(_ records: [Record]) async throws -> RecordWriteSummary {
        try await Blocking.run { [self] in try writeNow(records) }
    }

    /// The record as stored (a tombstone for a deleted one), or `nil` if the store does not have it.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func record(account: AccountID, kind: String, id: String) async throws -> Record? {
        try await Blocking.run { [self] in try recordNow(account: account, kind: kind, id: id) }
    }

    /// How many deliveries of an older version were ignored for the account, over its lifetime.
    ///
    /// It runs on a thread of its own, so the caller's executor and Swift's cooperative pool are never held.
    public func ignoredOlderCount(account: AccountID) async throws -> Int {
        try await Blocking.run { [self] in try ignoredOlderCountNow(account: account) }
    }

    private func writeNow(_ records: [Record]) throws -> RecordWriteSummary { try write(records) }
    private func recordNow(account: AccountID, kind: String, id: String) throws -> Record? {
        try record(account: account, kind: kind, id: id)
    }
    private func ignoredOlderCountNow(account: AccountID) throws -> Int { try ignoredOlderCount(account: account) }
}
