import Foundation
import ReplicaCore
import ReplicaSQLiteStore
import Synchronization

/// Where a store keeps its accounts: the files of its folder (SQLite, the default) or a PostgreSQL
/// database. `Store` asks this what differs between the two (opening an account's indexes and records,
/// listing its indexes, removing everything of it) and nothing else; both give it the same storages.
package protocol StoreHome: Sendable {
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

    /// Where the indexes' reads went, when a standby serves them (``Store/Configuration/readDatabase``);
    /// `nil` without one.
    var readRouting: Store.ReadRouting? { get }

    /// The standby's state, asked of it now; `nil` without one.
    @available(*, noasync, message: "it waits for the standby; in async code run it in Blocking.run")
    func standbyStatus() -> StoreStatus.StandbyStatus?
}

extension StoreHome {
    /// No standby.
    package var readRouting: Store.ReadRouting? { nil }

    /// No standby.
    package func standbyStatus() -> StoreStatus.StandbyStatus? { nil }
}

/// What a home tells a waiter of the projection engines' commits: a prompt to look again, never the
/// proof that what it waits for was projected (a commit may be of another account's records, and a
/// prompt may be lost).
package protocol ProjectionCommits: Sendable {
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
