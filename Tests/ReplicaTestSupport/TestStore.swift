public import Foundation
public import Replica
import ReplicaPostgres
import ReplicaPostgresHome

/// A store a test opened on one ``TestBackend``, with the folder and the database it keeps its data in:
/// both live as long as this value (the folder is removed and the database dropped when it is released).
///
/// For example:
/// ```swift
/// let storage = try await TestBackend.postgres.makeStore()
/// try storage.store.signIn("alice")
/// let other = try storage.open()        // another Store value on the same data, as another process
/// ```
public final class TestStore: Sendable {
    /// The backend the store is on.
    public let backend: TestBackend
    /// The store's folder: all of its data on SQLite; on PostgreSQL, only what a store keeps locally.
    public let directory: TemporaryDirectory
    /// The store's database on PostgreSQL; `nil` on SQLite.
    public let database: PostgresTestDatabase?
    /// The store the test works on.
    public let store: Store

    init(backend: TestBackend, configuration: Store.Configuration) async throws {
        // Each store on PostgreSQL holds a pool of connections; the suites' tests run at once, more of them
        // than the server takes connections. A few stores at a time, the rest wait their turn.
        if backend == .postgres { await Self.gate.enter() }
        do {
            self.backend = backend
            directory = try TemporaryDirectory()
            database = backend == .postgres ? try PostgresTestServer.makeMigratedDatabase() : nil
            store = try Self.open(backend, directory: directory.url, database: database, configuration: configuration)
        } catch {
            if backend == .postgres { await Self.gate.leave() }
            throw error
        }
    }

    deinit {
        if backend == .postgres { Task { [gate = Self.gate] in await gate.leave() } }
    }

    /// How many stores on PostgreSQL the tests of this process have open at once: each holds up to six
    /// connections, and the test server takes 100.
    static let gate = Gate(limit: 8)

    /// Lets `limit` holders in at a time; the others wait, in order, without holding a thread.
    actor Gate {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(limit: Int) { free = limit }

        func enter() async {
            if free > 0 {
                free -= 1
            } else {
                await withCheckedContinuation { waiting.append($0) }
            }
        }

        func leave() {
            if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
        }
    }

    /// Opens another store value on the same data, as another process (or the same one later) would.
    ///
    /// - Parameter configuration: how that store behaves.
    /// - Throws: why it could not be opened.
    public func open(configuration: Store.Configuration = Store.Configuration()) throws -> Store {
        try Self.open(backend, directory: directory.url, database: database, configuration: configuration)
    }

    /// Opens a store on this backend in `directory` (which need not exist yet), on the same database.
    ///
    /// - Throws: why it could not be opened.
    public func open(directory: URL, configuration: Store.Configuration = Store.Configuration()) throws -> Store {
        try Self.open(backend, directory: directory, database: database, configuration: configuration)
    }

    private static func open(
        _ backend: TestBackend, directory: URL, database: PostgresTestDatabase?,
        configuration: Store.Configuration
    ) throws -> Store {
        switch backend {
        case .sqlite:
            return try Store(directory: directory, configuration: configuration)
        case .postgres:
            let url =
                try database.map(\.url)
                ?? { throw PostgresTestServerError(description: "no database was made for the store") }()
            return try Store(directory: directory, database: .postgres(url: url), configuration: configuration)
        }
    }

    /// On PostgreSQL, `ANALYZE` of the whole database as its owner, as autovacuum or an operator may run
    /// it at any moment: what the planner's statistics sample of each table is then in `pg_statistic`.
    /// Nothing on SQLite.
    ///
    /// - Throws: why the database could not be analysed.
    public func analyzeDatabase() throws {
        guard let database else { return }
        try PostgresConnection(url: database.adminURL).executeScript("ANALYZE")
    }

    /// The files that hold `word` in their bytes: on SQLite, under the store's folder; on PostgreSQL, under
    /// it too (nothing of an account's content belongs there) and among the database's data files (tables,
    /// indexes, TOAST) once a `CHECKPOINT` has written them out. A file that cannot be read counts, as it
    /// might hold the word. The write-ahead log is not read: PostgreSQL keeps it until its segments are
    /// recycled (docs/postgres.md says how an operator shortens that). A data file is named with the
    /// relation it holds.
    ///
    /// - Throws: why the database's folder could not be found or read.
    public func filesContaining(_ word: String) throws -> [String] {
        let local = directory.filesContaining(word).map(\.path)
        guard let database else { return local }
        let admin = try PostgresConnection(url: database.adminURL)
        try admin.executeScript("CHECKPOINT")
        let query =
            "SELECT current_setting('data_directory') || '/base/' || oid FROM pg_database WHERE datname = current_database()"
        guard let folder = try admin.execute(query).string(0, 0), FileManager.default.isReadableFile(atPath: folder)
        else {
            throw PostgresTestServerError(description: "the test cannot read the database's data files")
        }
        // Each data file named with the relation it holds, so that a failure says which table kept the word.
        return local
            + TemporaryDirectory.filesContaining(word, under: URL(fileURLWithPath: folder)).map { file in
                let node = file.lastPathComponent.split(separator: ".").first.flatMap { Int64($0) } ?? 0
                // A file no relation names (one dropped, its unlinking pending) says "?", and must not trap.
                let relation = try? admin.execute(
                    "SELECT relname FROM pg_class WHERE pg_relation_filenode(oid) = $1", [.int(node)]
                ).firstString
                return file.path + " (" + (relation ?? "?") + ")"
            }
    }
}
