import Foundation
public import Replica

/// Where a test keeps its store: the two homes replica's store has, which the conformance suites run
/// against alike (a behaviour that differs between them is a failing test).
///
/// For example:
/// ```swift
/// @Test(arguments: TestBackend.available)
/// func findsWhatWasIndexed(_ backend: TestBackend) async throws {
///     let storage = try await backend.makeStore()
///     try await storage.store.signIn("alice")
/// }
/// ```
public enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Files in the test's temporary folder, as on a device.
    case sqlite
    /// A database of the test's own on the tests' PostgreSQL server, migrated as an operator would.
    case postgres

    /// The backends the tests run against here: SQLite always; PostgreSQL when a server is available, and
    /// always under `CI=true`, where a server that cannot start fails the PostgreSQL cases rather than
    /// dropping them (``PostgresTestServer/isEnabled``).
    public static var available: [TestBackend] {
        PostgresTestServer.isEnabled ? [.sqlite, .postgres] : [.sqlite]
    }

    public var description: String { rawValue }

    /// Opens a new store on this backend, with `accounts` signed in (none by default).
    ///
    /// - Parameters:
    ///   - configuration: how the store behaves.
    ///   - accounts: the accounts to sign in.
    /// - Returns: the store with what it keeps its data in; keep the value for as long as the test uses
    ///   the store (its folder is removed and its database dropped when it is released). On PostgreSQL,
    ///   the call waits while other tests hold as many stores as the server has connections for.
    /// - Throws: why the folder, the database or the store could not be made.
    public func makeStore(configuration: Store.Configuration = Store.Configuration(), signingIn accounts: AccountID...)
        async throws -> TestStore
    {
        let made = try await TestStore(backend: self, configuration: configuration)
        for account in accounts { try await made.store.signIn(account) }
        return made
    }
}
