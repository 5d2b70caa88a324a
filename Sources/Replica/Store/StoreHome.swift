import Foundation
import ReplicaCore
import ReplicaPostgres
import ReplicaPostgresStore
import ReplicaSQLiteStore
import Synchronization

/// Where a store keeps its accounts: the files of its folder (SQLite, the default) or a PostgreSQL
/// database. `Store` asks this what differs between the two (opening an account's indexes and records,
/// listing its indexes, removing everything of it) and nothing else; both give it the same storages.
protocol StoreHome: Sendable {
    /// The accounts and their sources.
    var catalog: any CatalogStorage { get }

    /// The database, for display (role, server and database name, never a password); `nil` for files.
    var databaseDescription: String? { get }

    /// Whether the storages check an account's sign-in themselves, inside their own transactions (so the
    /// lease's check of the catalog would only repeat it).
    var storagesCheckSignIn: Bool { get }

    /// Opens (creating if needed) an index of a signed-in account.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func openIndex(
        named name: String, of account: AccountRecord, lease: SignInLease, configuration: SearchableIndex.Configuration,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws -> SearchableIndex

    /// The names of the account's indexes, in order.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func indexNames(of account: AccountRecord) throws -> [String]

    /// Opens the account's records, creating them only when `creating`; `nil` when it has none and not
    /// `creating`.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func openRecords(of account: AccountRecord, lease: SignInLease, creating: Bool) throws -> (any RecordStorage)?

    /// Removes everything the home holds of an account being signed out: its indexes, records and sources'
    /// scratch. Its catalog entry is left for the caller to delete last.
    @available(*, noasync, message: "it waits for the storage; in async code run it in Blocking.run")
    func removeContent(of account: AccountRecord) throws

    /// Starts hearing of the projection engines' commits, in this process or any other, for a waiter that
    /// looks at an index's checkpoint again after each (``RecordStore/waitUntilSearchable(account:indexName:timeout:)``).
    func projectionCommits() async throws -> any ProjectionCommits
}

/// What a home tells a waiter of the projection engines' commits: a prompt to look again, never the
/// proof that what it waits for was projected (a commit may be of another account's records, and a
/// prompt may be lost).
protocol ProjectionCommits: Sendable {
    /// Returns once an engine may have committed since the last call, or after at most `limit`.
    func next(within limit: Duration) async throws
}

/// Files have no notifications: the waiter looks again after 2 ms, then twice as long each time up to
/// 50 ms.
final class PolledProjectionCommits: ProjectionCommits {
    private let pause = Mutex(Duration.milliseconds(2))

    func next(within limit: Duration) async throws {
        let wait = pause.withLock { pause in
            defer { pause = min(pause * 2, .milliseconds(50)) }
            return pause
        }
        try await Task.sleep(for: min(wait, limit))
    }
}

/// PostgreSQL's engines notify `replica_projected` as they commit; the waiter listens on a connection of
/// its own, closed when it is done, and looks again at least every 250 ms, should a notice be lost.
final class ListenedProjectionCommits: ProjectionCommits {
    private let connection: PostgresConnection

    init(url: String) async throws {
        connection = try await Blocking.run {
            try translatingPostgresErrors {
                let connection = try PostgresConnection(url: url)
                try connection.executeScript("LISTEN replica_projected")
                return connection
            }
        }
    }

    func next(within limit: Duration) async throws {
        _ = try await Blocking.run { [connection] in
            try translatingPostgresErrors {
                try connection.waitForNotifications(timeout: min(limit, .milliseconds(250)))
            }
        }
    }
}

/// The embedded default: a folder of SQLite files, `catalog.sqlite` and `accounts/<id>/` for each account
/// (`records.sqlite`, `indexes/<name>.sqlite`). Removing an account removes its folder.
struct FolderHome: StoreHome {
    let directory: String
    let catalog: any CatalogStorage

    var storagesCheckSignIn: Bool { false }
    var databaseDescription: String? { nil }

    init(directory: String) throws {
        self.directory = directory
        try FileSystem.makeDirectory(directory + "/accounts")
        catalog = try SQLiteCatalog(path: directory + "/catalog.sqlite")
    }

    func openIndex(
        named name: String, of account: AccountRecord, lease: SignInLease, configuration: SearchableIndex.Configuration,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws -> SearchableIndex {
        let folder = directory + "/" + account.directory + "/indexes"
        try FileSystem.makeDirectory(folder)
        return try SearchableIndex(
            path: folder + "/\(name).sqlite", name: name, account: account.id, signIn: lease.index,
            configuration: configuration, events: events)
    }

    func indexNames(of account: AccountRecord) throws -> [String] {
        try FileSystem.entries(of: directory + "/" + account.directory + "/indexes")
            .filter { $0.hasSuffix(".sqlite") }
            .map { String($0.dropLast(".sqlite".count)) }
            .sorted()
    }

    func openRecords(of account: AccountRecord, lease: SignInLease, creating: Bool) throws -> (any RecordStorage)? {
        let folder = directory + "/" + account.directory
        let path = folder + "/records.sqlite"
        if !creating && !FileSystem.exists(path) { return nil }
        try FileSystem.makeDirectory(folder)
        return try SQLiteRecordStorage(path: path, account: account.id, signIn: lease)
    }

    func removeContent(of account: AccountRecord) throws {
        try FileSystem.removeTree(directory + "/" + account.directory)
    }

    func projectionCommits() async throws -> any ProjectionCommits { PolledProjectionCommits() }
}

/// A PostgreSQL database (schema `replica`), shared by every process of the app: the catalog, and each
/// account's indexes and records in its rows and partitions, held to the account by row-level security.
/// The store's folder keeps only what is local to this machine (a file tree's scratch). Removing an
/// account drops its partitions, one in every table (`replica.remove_account()`).
struct PostgresHome: StoreHome {
    let directory: String
    /// The primary's URL, for a connection of a waiter's own (``projectionCommits()``).
    let url: String
    let catalog: any CatalogStorage
    /// The connections of indexes and record stores; the catalog has a pool of its own.
    let pool: PostgresPool
    let databaseDescription: String?
    /// The standby that serves the indexes' reads, when there is one.
    let standby: StandbyReads?
    /// Keeps the vectors the store's indexes hold current when other processes change them.
    let vectorNotices: VectorNotices

    var storagesCheckSignIn: Bool { true }

    /// Connects, and brings the schema up to date when it is behind (which only its owner role may do).
    /// With `readDatabase`, every transaction committed on the primary leaves its position for the
    /// standby's reads to wait for (``StandbyReads``); the standby is not connected to until a read.
    @available(*, noasync, message: "it waits for the database; in async code run it in Blocking.run")
    init(
        url: String, readDatabase: Store.ReadDatabase?, directory: String,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws {
        self.directory = directory
        self.url = url
        let (description, system) = try translatingPostgresErrors {
            let connection = try PostgresConnection(url: url)
            try PostgresSchema.migrate(connection)
            // A standby shares its primary's system identifier: it tells a standby of another cluster apart.
            let system =
                readDatabase == nil
                ? nil : try connection.execute("SELECT system_identifier::text FROM pg_control_system()").string(0, 0)
            return (
                "postgresql: \(connection.userName) on \(connection.serverDescription), database \(connection.databaseName)",
                system
            )
        }
        databaseDescription = description
        var options = PostgresConnection.Options()
        if let readDatabase {
            let standby = StandbyReads(
                pool: PostgresPool(url: readDatabase.url, maximumConnections: 4), replayWait: readDatabase.replayWait,
                maximumLag: readDatabase.maximumLag, primarySystem: system
            ) { reason in
                events(StoreEvent(kind: .standbyPassedOver, account: nil, indexName: nil, message: reason))
            }
            options.committed = { standby.noteCommit($0) }
            self.standby = standby
        } else {
            standby = nil
        }
        catalog = PostgresCatalog(pool: PostgresPool(url: url, options: options, maximumConnections: 2))
        pool = PostgresPool(url: url, options: options, maximumConnections: 4)
        vectorNotices = VectorNotices(url: url)
    }

    func openIndex(
        named name: String, of account: AccountRecord, lease: SignInLease, configuration: SearchableIndex.Configuration,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws -> SearchableIndex {
        let storage = try PostgresIndexStorage(
            pool: pool, account: account.id, indexName: name, generation: account.generation, standby: standby,
            vectorNotices: vectorNotices)
        return SearchableIndex(
            storage: storage, name: name, account: account.id, signIn: lease.index, configuration: configuration,
            events: events)
    }

    func indexNames(of account: AccountRecord) throws -> [String] {
        try PostgresIndexStorage.indexNames(pool: pool, account: account.id)
    }

    func openRecords(of account: AccountRecord, lease: SignInLease, creating: Bool) throws -> (any RecordStorage)? {
        try PostgresRecordStorage.open(pool: pool, account: account.id, signIn: lease, creating: creating)
    }

    func removeContent(of account: AccountRecord) throws {
        try translatingPostgresErrors {
            try pool.withConnection { connection in
                try connection.transaction {
                    try PostgresSignIn.name(account.id, on: connection)
                    try connection.execute("SELECT replica.remove_account()")
                }
            }
        }
        try FileSystem.removeTree(directory + "/" + account.directory)
    }

    func projectionCommits() async throws -> any ProjectionCommits { try await ListenedProjectionCommits(url: url) }
}
