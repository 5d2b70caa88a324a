import Foundation
public import Replica
import ReplicaCore
import ReplicaPostgresHome
import Synchronization

/// Where a command-line test's store is, on either backend: the folder `--store` names, and on
/// PostgreSQL a database made for the test, which every `replica` the test runs is given with
/// `--database`. A suite keeps one and its tests say the backend first, so that one test body checks
/// the same contract on both.
///
/// For example:
/// ```swift
/// @Test(arguments: TestBackend.available)
/// func importThenSearch(_ backend: TestBackend) throws {
///     try place.use(backend, signingIn: "a")
///     let search = try ReplicaProcess.run(place.arguments + ["search", "launch"])
/// }
/// ```
public final class CLIPlace: Sendable {
    /// The test's temporary folder; the store is a folder inside it.
    public let directory: TemporaryDirectory
    private let database = Mutex<PostgresTestDatabase?>(nil)

    public init(directory: TemporaryDirectory) {
        self.directory = directory
    }

    /// The store's folder: `store` on SQLite, `store-postgres` (what is local to the machine) on PostgreSQL.
    public var store: String { directory.path + (databaseURL == nil ? "/store" : "/store-postgres") }

    /// The URL of the test's database, or `nil` on SQLite.
    public var databaseURL: String? { database.withLock { $0?.url } }

    /// The URL a superuser reaches the test's database with (to look at every row, whatever the row
    /// security), or `nil` on SQLite.
    public var databaseAdminURL: String? { database.withLock { $0?.adminURL } }

    /// The arguments that name the store: `--store`, and `--database` on PostgreSQL.
    public var arguments: [String] { ["--store", store] + (databaseURL.map { ["--database", $0] } ?? []) }

    /// Puts the store on `backend` (a new database on PostgreSQL) and signs `accounts` in there.
    @available(*, noasync, message: "it waits on the store; in async code call its async form")
    public func use(_ backend: TestBackend, signingIn accounts: AccountID...) throws {
        try use(backend, accounts)
    }

    /// Puts the store on `backend` and signs `accounts` in, without blocking the caller.
    public func use(_ backend: TestBackend, signingIn accounts: AccountID...) async throws {
        try await Blocking.run { [self] in try use(backend, accounts) }
    }

    private func use(_ backend: TestBackend, _ accounts: [AccountID]) throws {
        if backend == .postgres {
            let made = try PostgresTestServer.makeMigratedDatabase()
            database.withLock { $0 = made }
        }
        let store = try openStore()
        for account in accounts { try store.signIn(account) }
    }

    /// Puts the store on a copy of `other`'s database, rows and all (on PostgreSQL; `other` must be on it).
    public func use(copyOf other: CLIPlace) throws {
        guard let template = other.database.withLock({ $0 }) else {
            throw PostgresTestServerError(description: "the place copied is not on PostgreSQL")
        }
        let made = try PostgresTestServer.makeDatabase(copying: template)
        database.withLock { $0 = made }
    }

    /// The store opened in this process, as the app beside the commands would.
    public func openStore(configuration: Store.Configuration = Store.Configuration()) throws -> Store {
        let folder = URL(fileURLWithPath: store)
        guard let url = databaseURL else { return try Store(directory: folder, configuration: configuration) }
        return try Store(directory: folder, database: .postgres(url: url), configuration: configuration)
    }
}
