import CAnalyzer
import CSQLite
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One SQLite connection: the owner of a `sqlite3*` handle.
///
/// A connection is not thread-safe by itself; ``Database`` gives each one a serial queue and only uses it
/// there. The handle is closed when the connection is released, also when opening failed halfway.
///
/// For example:
/// ```swift
/// let connection = try Connection(path: "/tmp/example.sqlite")
/// try connection.execute("CREATE TABLE IF NOT EXISTS t(x)")
/// ```
public final class Connection: @unchecked Sendable {
    let handle: OpaquePointer
    /// The path of the database file.
    public let path: String
    private var statementCache: [String: Statement] = [:]
    private var savepointDepth = 0
    /// The thread inside SQLite on this connection right now (0: none), to catch use from two threads at
    /// once while the connection belongs to no queue.
    private let user = Atomic<UInt>(0)
    /// Set on the one queue the connection belongs to, once ``confine(to:)`` gave it one (see ``Database``).
    private let queueKey = DispatchSpecificKey<Bool>()
    private let isConfined = Atomic<Bool>(false)

    /// How a connection opens its file.
    public struct Options: Sendable {
        /// Open read-only.
        public var readOnly: Bool = false
        /// Create the file (with owner-only permissions) when it does not exist.
        public var create: Bool = true
        /// How long a statement waits for another process's lock before failing, in milliseconds.
        /// Writers take turns: the default waits ten minutes rather than fail on a busy database.
        public var busyTimeoutMilliseconds: Int32 = 600_000
        /// Page cache size in KiB (`PRAGMA cache_size = -N`).
        public var cacheKiB: Int = 65_536
        /// Use write-ahead logging.
        public var writeAheadLog: Bool = true
        /// Hold the file's locks for the connection's life and keep the write-ahead log's index in the
        /// process's memory instead of a shared-memory file: what lets a database open on a full disk,
        /// where that file cannot be created or grown. Other connections wait while this one is open.
        public var exclusiveLocking: Bool = false

        /// Makes the default options: read-write, created when missing, write-ahead logging on.
        public init() {}
    }

    /// Opens (and, unless told otherwise, creates) the database at `path`.
    ///
    /// A file that does not exist yet is created with mode 0600 before SQLite opens it, so SQLite gives
    /// its `-wal` and `-shm` companions the same owner-only mode
    /// ([SQLite's file permissions](https://www.sqlite.org/compile.html#default_file_permissions)).
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened or is not a database.
    public init(path: String, options: Options = Options()) throws {
        _ = Self.configureSQLite
        if options.create && !options.readOnly && path != ":memory:" && !path.isEmpty {
            // (An in-memory database, or SQLite's private temporary one for "", has no file to make.)
            // Only a file this call creates (O_EXCL) is opened and closed here. Closing a descriptor of a
            // file the process already has open releases every POSIX lock the process holds on it, SQLite's
            // included, while SQLite goes on believing it holds them
            // (https://www.sqlite.org/howtocorrupt.html, "Posix advisory locks canceled").
            let fd = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd) }
        }
        var handle: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly { flags |= SQLITE_OPEN_CREATE }
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(handle)
            throw SQLiteError(code: ResultCode(rawValue: code), message: message, path: path)
        }
        self.handle = handle
        self.path = path
        sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(handle, 1)
        if !options.readOnly {
            // Reading the schema here also tells a file that is not a database apart at once.
            try execute("PRAGMA foreign_keys = ON")
            // Before the journal mode: set later, SQLite would already have mapped the shared-memory file.
            if options.exclusiveLocking { try execute("PRAGMA locking_mode = EXCLUSIVE") }
            if options.writeAheadLog {
                try execute("PRAGMA journal_mode = WAL")
                // The write-ahead log is cut back to 4 MiB when SQLite next reuses it after a checkpoint,
                // rather than keeping the size of the largest transaction ever written (a bulk load or a
                // rebuild batch: tens of MiB) for the life of the file.
                try execute("PRAGMA journal_size_limit = 4194304")
            }
            try execute("PRAGMA synchronous = NORMAL")
        }
        // The FTS5 auxiliary functions of replica's ranked search (CSQLite's shim.h): each row's numbers
        // (`replica_frequencies`) and BM25 with a weight for each phrase (`replica_bm25`); they live on the connection.
        let registered = replica_fts5_register_functions(handle)
        guard registered == SQLITE_OK else { throw error(code: registered, sql: nil) }
        // The text analyzer (ReplicaText's, on ICU) as FTS5's tokenizer `replica`, on the connection too.
        var api: UnsafeMutablePointer<fts5_api>?
        var analyzer = replica_fts5_api(handle, &api)
        if analyzer == SQLITE_OK, let api { analyzer = replica_fts5_register_analyzer(api) }
        guard analyzer == SQLITE_OK else { throw error(code: analyzer, sql: nil) }
        try execute("PRAGMA cache_size = -\(options.cacheKiB)")
        try execute("PRAGMA secure_delete = ON")
        try execute("PRAGMA temp_store = MEMORY")
    }

    /// Process-wide settings, made once before SQLite's first use: memory statistics off (they cost a
    /// global mutex on each of the dozens of allocations an indexed item makes; replica reads none). A
    /// host that used SQLite first keeps its own settings.
    private static let configureSQLite: Void = { _ = replica_sqlite_disable_memory_statistics() }()

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(code: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        return SQLiteError(
            code: ResultCode(rawValue: extended != 0 ? extended : code),
            message: String(cString: sqlite3_errmsg(handle)),
            sql: sql,
            path: path)
    }

    /// Closes without copying the write-ahead log into the database first, as SQLite otherwise does when
    /// the last connection to a file closes: for a file about to be deleted, that is work thrown away.
    public func disableCheckpointOnClose() {
        _ = replica_sqlite_disable_checkpoint_on_close(handle)
    }

    /// Makes `queue` the only place this connection may be used from: any call into SQLite from elsewhere
    /// stops the process, in release builds too. ``Database`` confines each of its connections to its queue.
    func confine(to queue: DispatchQueue) {
        queue.setSpecific(key: queueKey, value: true)
        isConfined.store(true, ordering: .releasing)
    }

    /// Runs `body`, a call into SQLite on this connection, after checking that it is allowed here: on the
    /// connection's queue once it has one (a queue-specific lookup, as GRDB's scheduling watchdog does),
    /// else not while another thread is inside SQLite on it. A failed check stops the process in every
    /// build: two threads in one connection corrupt its statements and transactions silently.
    @inline(__always)
    func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        if isConfined.load(ordering: .acquiring) {
            if DispatchQueue.getSpecific(key: queueKey) != true {
                fatalError(
                    "a replica Connection (\(path)) was used off its queue; use it only inside the closures Database runs"
                )
            }
            return try body()
        }
        let me = UInt(pthread_self())
        let (exchanged, current) = user.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        if !exchanged && current != me {
            fatalError("a replica Connection (\(path)) was used from two threads at once; use it on its own queue only")
        }
        defer { if exchanged { user.store(0, ordering: .releasing) } }
        return try body()
    }

    /// Runs one or more SQL statements that take no arguments.
    public func execute(_ sql: String) throws {
        let code = exclusively { sqlite3_exec(handle, sql, nil, nil, nil) }
        guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
    }

    /// Runs one statement with arguments.
    public func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        try cached(sql).run(arguments)
    }

    /// Prepares a statement that is not cached.
    public func prepare(_ sql: String) throws -> Statement {
        try exclusively { try Statement(connection: self, sql: sql) }
    }

    /// Returns a prepared statement for `sql`, reusing an earlier one with the same text.
    public func cached(_ sql: String) throws -> Statement {
        try exclusively {
            if let statement = statementCache[sql] { return statement }
            let statement = try Statement(connection: self, sql: sql)
            statementCache[sql] = statement
            return statement
        }
    }

    /// The first column of the first row, or `nil` when there is no row.
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        try cached(sql).firstRow(arguments) { $0.value(0) }
    }

    /// The first column of the first row when it is an integer; `nil` when there is no row or it holds another type.
    ///
    /// - Throws: ``SQLiteError`` when the statement cannot be prepared or run.
    public func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int? {
        guard case .integer(let value)? = try scalar(sql, arguments) else { return nil }
        return Int(value)
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The row ID of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes the write lock only at the first write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, waiting for other writers; use it for every write.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// A call inside a transaction is a savepoint: when its body throws, its own writes are rolled back
    /// even if the outer code catches the error and goes on to commit.
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        if isInTransaction {
            savepointDepth += 1
            defer { savepointDepth -= 1 }
            let name = "replica_\(savepointDepth)"
            try execute("SAVEPOINT \(name)")
            do {
                let result = try body()
                try execute("RELEASE \(name)")
                return result
            } catch {
                if isInTransaction {
                    try? execute("ROLLBACK TO \(name)")
                    try? execute("RELEASE \(name)")
                }
                throw error
            }
        }
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Asks a running statement to stop; safe from any thread.
    public func interrupt() { sqlite3_interrupt(handle) }
}
