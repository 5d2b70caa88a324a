package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import ReplicaText
import Synchronization

/// One index kept in a SQLite file of its own (the embedded default): a writer connection and readers
/// in write-ahead-log mode, FTS5 for the words. A file found damaged is rebuilt empty, with a reindex owed
/// to its owner; SQLite's errors leave this type as ``ReplicaError``s.
package final class SQLiteIndexStorage: IndexStorage {
    /// The SQLite file.
    package let path: String
    private let name: String
    private let account: AccountID
    private let options: Connection.Options
    /// The index's vectors, kept in memory between searches.
    private let vectorCache = VectorCache()
    private let database: Mutex<Database>
    private let events: @Sendable (StoreEvent) -> Void
    /// What the index does once this storage rebuilt its file: ask its owner to reindex.
    private let rebuilt = Mutex<(@Sendable () async -> Void)?>(nil)

    static let migrator = Migrator(kind: "index", applicationID: 0x5250_4C49, migrations: EmbeddedMigrations.index)

    /// Opens the file, creating it (and owing its owner a reindex) when it is new or damaged.
    ///
    /// - Parameters:
    ///   - busyTimeout: how long a write waits for another writer (in this or another process).
    ///   - cacheKiB: the most page cache each of the file's connections keeps.
    package init(
        path: String, name: String, account: AccountID, busyTimeout: TimeInterval, cacheKiB: Int,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws {
        self.path = path
        self.name = name
        self.account = account
        self.events = events
        var options = Connection.Options()
        options.busyTimeoutMilliseconds = Int32(clamping: Int((busyTimeout * 1000).rounded()))
        options.cacheKiB = cacheKiB
        self.options = options
        database = Mutex(
            try Self.openDatabase(path: path, name: name, account: account, options: options, events: events))
    }

    /// Sets what runs once a damaged file was rebuilt empty.
    package func onRebuilt(_ body: @escaping @Sendable () async -> Void) {
        rebuilt.withLock { $0 = body }
    }

    // MARK: Opening and recovery

    private static func openDatabase(
        path: String, name: String, account: AccountID, options: Connection.Options,
        events: @Sendable (StoreEvent) -> Void
    ) throws -> Database {
        do {
            let database = try Database(path: path, migrator: migrator, options: options)
            if try check(database) { try recordAnalyzerOfNewIndex(database) }
            return database
        } catch let error as SQLiteError where error.code.isCorruption {
            guard damageIsConfirmed(at: path) else { throw unconfirmedDamage(error, name: name, account: account) }
            try removeFiles(at: path)
            let database = try freshDatabase(path: path, options: options)
            events(
                StoreEvent(
                    kind: .indexRebuilt, account: account, indexName: name,
                    message:
                        "index '\(name)' of account '\(account)' was damaged (\(error.message)); it was rebuilt empty and its owner asked to reindex"
                ))
            return database
        } catch let error as MigrationError {
            throw ReplicaError(error.code == .newerSchema ? .newerSchema : .storage, error.description, cause: error)
        } catch let error as SQLiteError {
            throw error.asReplicaError(what: "index '\(name)' of account '\(account)'")
        }
    }

    /// A new empty file that owes its owner a reindex of everything.
    private static func freshDatabase(path: String, options: Connection.Options) throws -> Database {
        let database = try Database(path: path, migrator: migrator, options: options)
        try database.writeNow { connection in
            let writer = SQLiteIndexWriter(connection: connection, now: Date(), defaultLifetime: 0)
            try writer.setMeta("reindex_all_pending", "1")
            try writer.recordAnalyzer()
        }
        return database
    }

    /// Whether an index records no analyzer and has no items: a new file, whose words are this
    /// analyzer's. (A file that records none and has items was made before the analyzer: its words are
    /// made again in the background, ``WordsRemake``.)
    private static func isNew(_ connection: Connection) throws -> Bool {
        try connection.scalar("SELECT 1 FROM meta WHERE key = ?", [.text(WordsRemake.analyzerKey)]) == nil
            && connection.scalar("SELECT 1 FROM items LIMIT 1") == nil
    }

    /// Records this analyzer in a new index, unless another process has just done it.
    private static func recordAnalyzerOfNewIndex(_ database: Database) throws {
        try database.writeNow { connection in
            if try isNew(connection) {
                try SQLiteIndexWriter(connection: connection, now: Date(), defaultLifetime: 0).recordAnalyzer()
            }
        }
    }

    /// Reads the parts of the file every search touches, so damage there shows at open; returns whether
    /// the index is new (``isNew(_:)``), in the same read.
    private static func check(_ database: Database) throws -> Bool {
        try database.readNow { connection in
            _ = try connection.scalar("SELECT count(*) FROM items_text_config")
            _ = try connection.scalar("SELECT rowid FROM items_text WHERE items_text MATCH '\"replica\"' LIMIT 1")
            let pages = try connection.scalarInt("PRAGMA page_count") ?? 0
            if pages < 4096, let result = try connection.scalar("PRAGMA quick_check(1)"), result != .text("ok") {
                throw SQLiteError(code: .corrupt, message: "quick_check found damage", path: database.path)
            }
            return try isNew(connection)
        }
    }

    /// Whether a second look confirms what SQLite called damage. SQLite calls a read the disk failed
    /// (EIO) "malformed" too, and rebuilding the index for a failure that has passed would cost every
    /// item, which its owners must then send again. A fresh connection's `quick_check` decides: damage
    /// it finds is real; a clean check, or an error of another kind, is not.
    package static func damageIsConfirmed(at path: String) -> Bool {
        var options = Connection.Options()
        options.create = false
        do {
            let connection = try Connection(path: path, options: options)
            let verdict = try connection.prepare("PRAGMA quick_check").rows { $0.text(0) }
            return verdict != ["ok"]
        } catch let error as SQLiteError {
            return error.code.isCorruption
        } catch {
            return false
        }
    }

    /// The error for damage a second look did not confirm: the file is left as it is.
    private static func unconfirmedDamage(_ error: SQLiteError, name: String, account: AccountID) -> ReplicaError {
        ReplicaError(
            .storage,
            "index '\(name)' of account '\(account)' could not be read (\(error.message)), but a second look "
                + "found it sound, so it was left as it is: the disk most likely failed to read it (check dmesg); run the "
                + "command again", cause: error)
    }

    package static func removeFiles(at path: String) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = path + suffix
            if unlink(file) != 0 && errno != ENOENT {
                throw ReplicaError(.fileSystem, "cannot remove \(file): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Rebuilds a file found damaged while in use, then has the owner asked to reindex.
    private func recover(from error: SQLiteError) async throws -> Never {
        guard Self.damageIsConfirmed(at: path) else {
            throw Self.unconfirmedDamage(error, name: name, account: account)
        }
        // Off the cooperative pool: opening the new file and writing to it wait on SQLite.
        try await Blocking.run { [self] in
            try database.withLock { database in
                try Self.removeFiles(at: path)
                database = try Self.freshDatabase(path: path, options: options)
            }
        }
        events(
            StoreEvent(
                kind: .indexRebuilt, account: account, indexName: name,
                message:
                    "index '\(name)' of account '\(account)' was found damaged (\(error.message)); it was rebuilt empty and its owner asked to reindex"
            ))
        await rebuilt.withLock { $0 }?()
        throw ReplicaError(
            .corruptIndex,
            "index '\(name)' of account '\(account)' was damaged and has been rebuilt empty; its owner was asked to reindex it",
            cause: error)
    }

    /// SQLite's error as this index's: damage is recovered from; the rest say what failed in words.
    private func failure(_ error: SQLiteError) async throws -> Never {
        if error.code.isCorruption { try await recover(from: error) }
        throw error.asReplicaError(what: "index '\(name)' of account '\(account)'")
    }

    /// Runs a write's `body` with `writer`, and saves the vocabulary changes its text made, in its
    /// transaction (in a load, held back, and FTS5's segments not merged: ``IndexLoad``); changes left on
    /// the thread by a write that failed are dropped first.
    private static func counting<T>(
        _ writer: SQLiteIndexWriter, inLoad: Bool, _ body: (any IndexWriter) throws -> T
    ) throws -> T {
        TextAnalyzer.Vocabulary.discard()
        let value = try inLoad ? writer.withoutMergingSegments { try body(writer) } : body(writer)
        try writer.saveVocabulary(holdingBack: inLoad)
        try writer.saveWrittenLanguages()
        return value
    }

    // MARK: IndexStorage

    package func write<T: Sendable>(
        now: Date, defaultLifetime: TimeInterval, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexWriter) throws -> T
    ) async throws -> T {
        let database = database.withLock { $0 }
        // Read here: the transaction runs on the database's own thread, outside this task.
        let inLoad = IndexLoad.isRunning
        do {
            return try await database.write { connection in
                try prepare()
                return try Self.counting(
                    SQLiteIndexWriter(connection: connection, now: now, defaultLifetime: defaultLifetime),
                    inLoad: inLoad, body)
            }
        } catch let error as SQLiteError {
            try await failure(error)
        }
    }

    @available(*, noasync, message: "it waits on SQLite; in async code call write(now:defaultLifetime:prepare:_:)")
    package func writeNow<T>(
        now: Date, defaultLifetime: TimeInterval, prepare: () throws -> Void,
        _ body: (any IndexWriter) throws -> T
    ) throws -> T {
        let database = database.withLock { $0 }
        let inLoad = IndexLoad.isRunning
        do {
            return try database.writeNow { connection in
                try prepare()
                return try Self.counting(
                    SQLiteIndexWriter(connection: connection, now: now, defaultLifetime: defaultLifetime),
                    inLoad: inLoad, body)
            }
        } catch let error as SQLiteError {
            throw error.asReplicaError(what: "index '\(name)' of account '\(account)'")
        }
    }

    package func read<T: Sendable>(
        now: Date, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexReader) throws -> T
    ) async throws -> T {
        let database = database.withLock { $0 }
        do {
            return try await database.read { [vectorCache] connection in
                try prepare()
                return try body(SQLiteIndexReader(connection: connection, vectorCache: vectorCache, now: now))
            }
        } catch let error as SQLiteError {
            try await failure(error)
        }
    }

    /// The file and its write-ahead log, in bytes.
    package func size() -> Int {
        ["", "-wal"].reduce(0) { total, suffix in
            var info = stat()
            return total + (stat(path + suffix, &info) == 0 ? Int(info.st_size) : 0)
        }
    }

    /// Copies the write-ahead log into the file first: the size the index settles at.
    package func compactedSize() async throws -> Int {
        try await settle()
        return size()
    }

    package func settle() async throws {
        do {
            try await database.withLock { $0 }.withWriter { connection in
                try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch let error as SQLiteError {
            try await failure(error)
        }
    }

    package func settleVocabulary() async throws {
        let database = database.withLock { $0 }
        do {
            // Read first: an index with nothing held back takes no write lock.
            guard
                try await database.read({ try $0.scalar(SQLiteIndexWriter.holdsBackVocabularySQL) != nil })
            else { return }
            // Outside a load, a write adds up what was held back (``SQLiteIndexWriter/saveVocabulary(holdingBack:)``).
            try await database.write { connection in
                try Self.counting(
                    SQLiteIndexWriter(connection: connection, now: Date(), defaultLifetime: 0), inLoad: false
                ) { _ in }
            }
        } catch let error as SQLiteError {
            try await failure(error)
        }
    }

    @available(*, noasync, message: "it waits for work in progress on the file's queues")
    package func close(discarding: Bool) {
        // This waits for work in progress on the database's queues.
        if discarding { database.withLock { $0 }.discardOnClose() }
    }
}

extension SQLiteError {
    /// The error as the layers above the storage see it: ``ReplicaError/Code/storage``, with the
    /// explanation in words (what failed, what is intact, what to do) and this error as its cause.
    ///
    /// - Parameter what: the index the error is about, for errors whose explanation names no file.
    func asReplicaError(what: String) -> ReplicaError {
        ReplicaError(
            .storage, path == nil && explanation == description ? "\(what): \(explanation)" : explanation, cause: self)
    }
}
