import Dispatch
import Foundation

/// A database file with one writer connection and one reader connection, each on its own serial queue.
///
/// Blocking SQLite calls run on those queues, never on Swift's cooperative pool. In WAL mode the reader
/// sees the last committed state while the writer works
/// ([WAL concurrency](https://www.sqlite.org/wal.html#concurrency)).
///
/// For example:
/// ```swift
/// let migrator = Migrator(kind: "example", applicationID: 0x4558_4D50, migrations: [Migration(version: 1, name: "t", sql: "CREATE TABLE t(x)")])
/// let database = try Database(path: "/tmp/example.sqlite", migrator: migrator)
/// try await database.write { try $0.execute("INSERT INTO t VALUES (1)") }
/// ```
public final class Database: Sendable {
    /// The path of the database file.
    public let path: String
    /// What opening found: whether the schema was created just now.
    public let migrationOutcome: MigrationOutcome
    private let writer: SerialConnection
    private let reader: SerialConnection

    /// Opens the database, applies `migrator`'s migrations, and opens a reader beside the writer.
    ///
    /// - Throws: ``SQLiteError`` when the file cannot be opened or is corrupt, and the migrator's
    ///   ``MigrationError`` when the file was written by a newer schema or is of another kind.
    ///
    /// When the disk has no room for the shared-memory file a write-ahead log needs, the database opens
    /// with one connection in exclusive locking mode instead (``isExclusive``): reads and what writes
    /// fit still work, so a person can look at the store and sign an account out to free space.
    public init(path: String, migrator: Migrator, options: Connection.Options = Connection.Options()) throws {
        self.path = path
        (writer, reader, migrationOutcome, isExclusive) = try Self.open(
            path: path, migrator: migrator, options: options)
    }

    private static func open(path: String, migrator: Migrator, options: Connection.Options) throws
        -> (SerialConnection, SerialConnection, MigrationOutcome, Bool)
    {
        do {
            let writer = try Connection(path: path, options: options)
            let outcome = try migrator.migrate(writer)
            var readerOptions = options
            readerOptions.create = false
            let reader = try Connection(path: path, options: readerOptions)
            return (
                SerialConnection(writer, label: "replica.writer"), SerialConnection(reader, label: "replica.reader"),
                outcome, false
            )
        } catch let error as SQLiteError where error.code.isOutOfSpace && !options.readOnly {
            var exclusive = options
            exclusive.exclusiveLocking = true
            let connection = try Connection(path: path, options: exclusive)
            let outcome = try migrator.migrate(connection)
            // Two connections in exclusive mode would lock each other out: one serves reads and writes.
            let serial = SerialConnection(connection, label: "replica.exclusive")
            return (serial, serial, outcome, true)
        }
    }

    /// Whether the database was opened in exclusive locking mode because the disk was full.
    public let isExclusive: Bool

    /// Runs `body` in an immediate transaction on the writer queue.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await writer.run { connection in try connection.transaction(.immediate) { try body(connection) } }
    }

    /// Runs `body` on the writer queue without opening a transaction (for pragmas and checkpoints).
    public func withWriter<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await writer.run(body)
    }

    /// Runs `body` in a read transaction on the reader queue: it sees one consistent snapshot.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await reader.run { connection in try connection.transaction(.deferred) { try body(connection) } }
    }

    /// Synchronous forms, for callers that are already off the cooperative pool (command-line tools,
    /// watcher threads). Never call them from the database's own queues. They wait for the write lock up
    /// to the busy timeout, so async code uses ``write(_:)`` and ``read(_:)`` instead (or runs them in
    /// `Blocking.run`); the compiler says so.
    @available(
        *, noasync,
        message:
            "it waits on a serial queue for up to the busy timeout; use 'write' (async) or run it in 'Blocking.run'"
    )
    public func writeNow<T>(_ body: (Connection) throws -> T) throws -> T {
        try writer.runNow { connection in try connection.transaction(.immediate) { try body(connection) } }
    }

    /// Runs `body` in a read transaction on the reader queue and waits for it; see ``writeNow(_:)``.
    @available(*, noasync, message: "it waits on a serial queue; use 'read' (async) or run it in 'Blocking.run'")
    public func readNow<T>(_ body: (Connection) throws -> T) throws -> T {
        try reader.runNow { connection in try connection.transaction(.deferred) { try body(connection) } }
    }

    /// For a file about to be deleted: its connections will close without first copying the write-ahead
    /// log into it. Waits for work in progress on either connection.
    @available(*, noasync, message: "it waits for work in progress on the database's queues; run it in 'Blocking.run'")
    public func discardOnClose() {
        writer.runNow { $0.disableCheckpointOnClose() }
        reader.runNow { $0.disableCheckpointOnClose() }
    }

    /// Copies the write-ahead log into the database and truncates it to zero bytes; waits for the write
    /// lock up to the busy timeout.
    @available(*, noasync, message: "it waits for the write lock up to the busy timeout; run it in 'Blocking.run'")
    public func checkpointAndTruncate() throws {
        try writer.runNow { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}

/// A connection and the serial queue that owns it.
final class SerialConnection: @unchecked Sendable {
    private let connection: Connection
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()

    init(_ connection: Connection, label: String) {
        self.connection = connection
        self.queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: true)
        connection.confine(to: queue)
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [connection] in
                continuation.resume(with: Result { try body(connection) })
            }
        }
    }

    func runNow<T>(_ body: (Connection) throws -> T) rethrows -> T {
        if DispatchQueue.getSpecific(key: key) == true { return try body(connection) }
        return try queue.sync { try body(connection) }
    }
}
