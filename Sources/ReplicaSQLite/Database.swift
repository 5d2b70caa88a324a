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
/// let database = try Database(path: path, migrations: migrations)
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
    public init(path: String, migrator: Migrator, options: Connection.Options = Connection.Options()) throws {
        self.path = path
        let writerConnection = try Connection(path: path, options: options)
        self.migrationOutcome = try migrator.migrate(writerConnection)
        var readerOptions = options
        readerOptions.create = false
        let readerConnection = try Connection(path: path, options: readerOptions)
        self.writer = SerialConnection(writerConnection, label: "replica.writer")
        self.reader = SerialConnection(readerConnection, label: "replica.reader")
    }

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
    /// watcher threads). Never call them from the database's own queues.
    public func writeNow<T>(_ body: (Connection) throws -> T) throws -> T {
        try writer.runNow { connection in try connection.transaction(.immediate) { try body(connection) } }
    }

    public func readNow<T>(_ body: (Connection) throws -> T) throws -> T {
        try reader.runNow { connection in try connection.transaction(.deferred) { try body(connection) } }
    }

    /// For a file about to be deleted: its connections will close without first copying the write-ahead
    /// log into it. Waits for work in progress on either connection.
    public func discardOnClose() {
        writer.runNow { $0.disableCheckpointOnClose() }
        reader.runNow { $0.disableCheckpointOnClose() }
    }

    /// Copies the write-ahead log into the database and truncates it to zero bytes.
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
