import Foundation

// The forms of the store's blocking calls for async code. Each does the same work as its synchronous
// twin on a thread of its own (SQLite's busy waits can last up to the busy timeout, 600 s by default),
// so that the caller's executor and Swift's cooperative pool are never held. In async code, Swift picks
// these forms: write `try await store.signIn("alice")`.

extension Store {
    /// Signs an account in without blocking the caller (see the synchronous `signIn(_:)`).
    @discardableResult
    public func signIn(_ account: AccountID) async throws -> AccountRecord {
        try await Blocking.run { [self] in try signInNow(account) }
    }

    /// Signs an account out without blocking the caller (see the synchronous `signOut(_:)`).
    @discardableResult
    public func signOut(_ account: AccountID) async throws -> Bool {
        try await Blocking.run { [self] in try signOutNow(account) }
    }

    /// Switches accounts without blocking the caller (see the synchronous `switchAccount(to:)`).
    public func switchAccount(to account: AccountID) async throws {
        try await Blocking.run { [self] in try switchAccountNow(to: account) }
    }

    /// Adds a source without blocking the caller (see the synchronous `addSource(_:)`).
    @discardableResult
    public func addSource(_ definition: SourceDefinition) async throws -> SourceDefinition {
        try await Blocking.run { [self] in try addSourceNow(definition) }
    }

    /// The accounts that are signed in, in identifier order, without blocking the caller (see the
    /// synchronous `signedInAccounts()`).
    public func signedInAccounts() async throws -> [AccountRecord] {
        try await Blocking.run { [self] in try signedInAccountsNow() }
    }

    /// The named index of a signed-in account, created if it does not exist yet, without blocking the
    /// caller (opening a file and reading the catalog wait on SQLite; see the synchronous
    /// `index(named:account:)`).
    public func index(named name: String = Store.defaultIndexName, account: AccountID) async throws -> SearchableIndex {
        try await Blocking.run { [self] in try indexNow(named: name, account: account) }
    }

    /// The index if the account is signed in and the index exists, without blocking the caller (see the
    /// synchronous `existingIndex(named:account:)`).
    public func existingIndex(named name: String, account: AccountID) async throws -> SearchableIndex? {
        try await Blocking.run { [self] in try existingIndexNow(named: name, account: account) }
    }

    /// The names of the indexes an account has, without blocking the caller (see the synchronous
    /// `indexNames(for:)`).
    public func indexNames(for account: AccountID) async throws -> [String] {
        try await Blocking.run { [self] in try indexNamesNow(for: account) }
    }

    /// The sources of signed-in accounts, by name, without blocking the caller (see the synchronous
    /// `sources()`).
    public func sources() async throws -> [SourceDefinition] {
        try await Blocking.run { [self] in try sourcesNow() }
    }

    /// The source with this name, if the store has it, without blocking the caller.
    public func source(named name: String) async throws -> SourceDefinition? {
        try await sources().first { $0.name == name }
    }

    /// The deletions queued for an account, due or not, without blocking the caller.
    public func pendingDeletions(account: AccountID) async throws -> [PendingDeletion] {
        try await Blocking.run { [self] in try pendingDeletionsNow(account: account) }
    }

    /// Records how many changes a source has seen but not committed yet, without blocking the caller.
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
    private func indexNow(named name: String, account: AccountID) throws -> SearchableIndex { try index(named: name, account: account) }
    private func existingIndexNow(named name: String, account: AccountID) throws -> SearchableIndex? {
        try existingIndex(named: name, account: account)
    }
    private func indexNamesNow(for account: AccountID) throws -> [String] { try indexNames(for: account) }
    private func sourcesNow() throws -> [SourceDefinition] { try sources() }
    private func reportSourcePendingNow(_ name: String, _ count: Int) { reportSourcePending(name, count) }
    private func reportSourceStateNow(_ name: String, _ state: SourceState, detail: String?) { reportSourceState(name, state, detail: detail) }
    private func reportSourceErrorNow(_ name: String, _ message: String, at date: Date) { reportSourceError(name, message, at: date) }
    private func reportSourceCommitNow(_ name: String, at date: Date) { reportSourceCommit(name, at: date) }
    private func recordStorageNow(for account: AccountID, creating: Bool) throws -> (any RecordStorage)? {
        try recordStorage(for: account, creating: creating)
    }
    private func refreshIfCatalogChangedNow() { refreshIfCatalogChanged() }
    private func pendingDeletionsNow(account: AccountID) throws -> [PendingDeletion] { try pendingDeletions(account: account) }
    private func addSourceNow(_ definition: SourceDefinition) throws -> SourceDefinition { try addSource(definition) }
    private func signInNow(_ account: AccountID) throws -> AccountRecord { try signIn(account) }
    private func signOutNow(_ account: AccountID) throws -> Bool { try signOut(account) }
    private func switchAccountNow(to account: AccountID) throws { try switchAccount(to: account) }
}

extension RecordStore {
    /// Stores records without blocking the caller (see the synchronous `write(_:)`).
    @discardableResult
    public func write(_ records: [Record]) async throws -> RecordWriteSummary {
        try await Blocking.run { [self] in try writeNow(records) }
    }

    /// The record as stored (a tombstone for a deleted one), or `nil` if the store does not have it,
    /// without blocking the caller (see the synchronous `record(account:kind:id:)`).
    public func record(account: AccountID, kind: String, id: String) async throws -> Record? {
        try await Blocking.run { [self] in try recordNow(account: account, kind: kind, id: id) }
    }

    /// How many deliveries of an older version were ignored for the account, without blocking the caller.
    public func ignoredOlderCount(account: AccountID) async throws -> Int {
        try await Blocking.run { [self] in try ignoredOlderCountNow(account: account) }
    }

    private func writeNow(_ records: [Record]) throws -> RecordWriteSummary { try write(records) }
    private func recordNow(account: AccountID, kind: String, id: String) throws -> Record? { try record(account: account, kind: kind, id: id) }
    private func ignoredOlderCountNow(account: AccountID) throws -> Int { try ignoredOlderCount(account: account) }
}
