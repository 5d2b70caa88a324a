import Foundation
import Replica
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaPostgresStore
import Synchronization

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

extension PostgresHome {
    package var readRouting: Store.ReadRouting? {
        guard let standby else { return nil }
        let routing = standby.routing
        return Store.ReadRouting(
            servedByStandby: routing.standby, servedByPrimaryAfterWaiting: routing.primaryAfterWaiting,
            servedByPrimaryStandbyStale: routing.primaryStandbyStale,
            servedByPrimaryStandbyUnavailable: routing.primaryStandbyUnavailable, replayWaits: routing.replayWaits)
    }

    @available(*, noasync, message: "it waits for the standby; in async code run it in Blocking.run")
    package func standbyStatus() -> StoreStatus.StandbyStatus? {
        guard let standby, let routing = readRouting else { return nil }
        switch standby.checkNow() {
        case .serving(let lag):
            return StoreStatus.StandbyStatus(state: .serving, lag: lag, reason: nil, routing: routing)
        case .stale(let reason, let lag):
            return StoreStatus.StandbyStatus(state: .stale, lag: lag, reason: reason, routing: routing)
        case .unavailable(let reason):
            return StoreStatus.StandbyStatus(state: .unavailable, lag: nil, reason: reason, routing: routing)
        }
    }
}
