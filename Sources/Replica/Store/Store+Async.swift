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

    // The synchronous forms by names of their own, so that the async forms above call them and not
    // themselves.
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

    private func writeNow(_ records: [Record]) throws -> RecordWriteSummary { try write(records) }
}
