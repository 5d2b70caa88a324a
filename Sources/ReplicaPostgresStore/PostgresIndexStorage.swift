package import Foundation
import ReplicaCore
package import ReplicaIndex
package import ReplicaPostgres
import ReplicaText

/// One index of one account kept in a PostgreSQL database (schema `replica`), through a pool of
/// connections the store shares between its indexes.
///
/// Each write is one transaction, each read one read-only snapshot (`REPEATABLE READ`); both name the
/// account in `replica.account`, so the database's row-level security holds them to it, and every
/// statement names the account and the index itself as well. Opened under a sign-in (`generation`), each
/// transaction first checks that the account is still signed in under it (``PostgresSignIn``). A write that PostgreSQL rolls back for a
/// serialization failure or a deadlock runs again (the client's back-off), then fails in words.
package final class PostgresIndexStorage: IndexStorage {
    let pool: PostgresPool
    let account: AccountID
    let indexName: String
    /// The sign-in the index was opened under; `nil`: not checked (an index opened outside a store).
    let generation: Int64?
    /// The standby that serves the index's reads, when the store has one.
    let standby: StandbyReads?
    /// What refreshes the vectors held when another process changes them, when the store listens.
    let vectorNotices: VectorNotices?
    let vectorCache = VectorCache()

    /// Opens the index `indexName` of `account`. An index that exists is only read; a new one is recorded,
    /// with the account's partitions made if it has none yet.
    ///
    /// The schema must be current (``PostgresSchema/migrate(_:)``, run as its owner).
    ///
    /// - Parameters:
    ///   - generation: the sign-in every transaction checks first (see ``PostgresSignIn``).
    ///   - standby: a standby of `pool`'s database that serves the index's reads (``StandbyReads``).
    ///   - vectorNotices: the store's listener for other processes' vector writes (``VectorNotices``).
    @available(*, noasync, message: "it waits for the database; in async code run it in Blocking.run")
    package init(
        pool: PostgresPool, account: AccountID, indexName: String, generation: Int64? = nil,
        standby: StandbyReads? = nil,
        vectorNotices: VectorNotices? = nil
    ) throws {
        self.pool = pool
        self.account = account
        self.indexName = indexName
        self.generation = generation
        self.standby = standby
        self.vectorNotices = vectorNotices
        try translatingPostgresErrors {
            try pool.withConnection { connection in
                // An index opened before has its 'created' row, and its account its partitions (made in
                // the transaction that wrote the row; a migration that adds a table makes the partitions
                // of the accounts already there): a read says so, and a process that only searches makes
                // no write, and waits for no commit's flush, to open it.
                // (Words another analyzer made are made again in the background: ``WordsRemake``.)
                let opened: Bool
                do {
                    opened = try connection.transaction(.readCommitted, readOnly: true) {
                        let table = try begin(connection, writing: false)
                        return try table.run(
                            """
                            SELECT 1 FROM replica.meta WHERE account = $1 AND index_name = $2 AND key = 'created'
                            """, [.text(account.rawValue), .text(indexName)], on: connection
                        ).rowCount == 1
                    }
                } catch let error as PostgresError where error.isUndefinedTable {
                    opened = false  // the account has no partitions yet
                }
                guard !opened else { return }
                try connection.transaction {
                    let table = try begin(connection, writing: true)
                    try connection.execute("SELECT replica.add_account()")
                    // A new index owes its owner a reindex of everything, as a new SQLite file does; the
                    // 'created' row makes that happen once, not at every open. Its words are this analyzer's,
                    // and its writers count the languages of its items from the first (``WrittenLanguages``).
                    try table.run(
                        """
                        WITH created AS (
                            INSERT INTO replica.meta(account, index_name, key, value) VALUES ($1, $2, 'created', '1')
                            ON CONFLICT DO NOTHING RETURNING 1
                        ), analyzer AS (
                            INSERT INTO replica.meta(account, index_name, key, value)
                            SELECT $1, $2, 'analyzer', $3 FROM created ON CONFLICT DO NOTHING
                        ), languages AS (
                            INSERT INTO replica.meta(account, index_name, key, value)
                            SELECT $1, $2, unnest(ARRAY['\(WrittenLanguages.key)', '\(WrittenLanguages.unstemmedKey)']), ''
                            FROM created ON CONFLICT DO NOTHING)
                        INSERT INTO replica.meta(account, index_name, key, value)
                        SELECT $1, $2, 'reindex_all_pending', '1' FROM created ON CONFLICT DO NOTHING
                        """, [.text(account.rawValue), .text(indexName), .text(TextAnalyzer.version)], on: connection)
                }
            }
        }
    }

    /// Names the account for the transaction's policies, and checks the sign-in the index was opened under.
    ///
    /// - Returns: the account's partitions.
    @discardableResult
    func begin(_ connection: PostgresConnection, writing: Bool) throws -> AccountPartitions {
        if let generation {
            try PostgresSignIn.nameAndCheck(account, generation: generation, on: connection, locking: writing)
        } else {
            try PostgresSignIn.name(account, on: connection)
        }
    }

    /// The names of the indexes `account` has, in order.
    @available(*, noasync, message: "it waits for the database; in async code run it in Blocking.run")
    package static func indexNames(pool: PostgresPool, account: AccountID) throws -> [String] {
        try translatingPostgresErrors {
            try pool.withConnection { connection in
                do {
                    return try connection.transaction(readOnly: true) {
                        let table = try PostgresSignIn.name(account, on: connection)
                        let result = try table.run(
                            "SELECT index_name FROM replica.meta WHERE account = $1 AND key = 'created' ORDER BY index_name COLLATE \"C\"",
                            [.text(account.rawValue)], on: connection)
                        return (0..<result.rowCount).compactMap { result.string($0, 0) }
                    }
                } catch let error as PostgresError where error.isUndefinedTable {
                    // No partitions: the account has never opened an index, or has just been signed out.
                    return []
                }
            }
        }
    }

    package func write<T: Sendable>(
        now: Date, defaultLifetime: TimeInterval, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexWriter) throws -> T
    ) async throws -> T {
        try await Blocking.run { [self] in
            try writeNow(now: now, defaultLifetime: defaultLifetime, prepare: prepare, body)
        }
    }

    @available(
        *, noasync, message: "it waits for the database; in async code call write(now:defaultLifetime:prepare:_:)"
    )
    package func writeNow<T>(
        now: Date, defaultLifetime: TimeInterval, prepare: () throws -> Void,
        _ body: (any IndexWriter) throws -> T
    ) throws -> T {
        try translatingPostgresErrors {
            try pool.withConnection { connection in
                try connection.transaction {
                    let table = try begin(connection, writing: true)
                    try prepare()
                    let writer = PostgresIndexWriter(
                        connection: connection, account: account, indexName: indexName, table: table, now: now,
                        defaultLifetime: defaultLifetime)
                    let value = try body(writer)
                    try writer.saveVocabulary()
                    try writer.saveWrittenLanguages()
                    return value
                }
            }
        }
    }

    package func read<T: Sendable>(
        now: Date, prepare: @escaping @Sendable () throws -> Void,
        _ body: @escaping @Sendable (any IndexReader) throws -> T
    ) async throws -> T {
        try await Blocking.run { [self] in
            let value = try readNow(now: now, prepare: prepare, body)
            // Vectors held from now on are kept current by the store's listener.
            if let vectorNotices, vectorCache.held != nil { vectorNotices.watch(self) }
            return value
        }
    }

    @available(*, noasync, message: "it waits for the database; in async code call read(now:prepare:_:)")
    func readNow<T>(now: Date, prepare: () throws -> Void, _ body: (PostgresIndexReader) throws -> T) throws -> T {
        try translatingPostgresErrors {
            func reading(_ connection: PostgresConnection) throws -> T {
                try PostgresSignIn.endingAsSignedOut(account, generation: generation, on: connection) {
                    try connection.transaction(.repeatableRead, readOnly: true) {
                        let table = try begin(connection, writing: false)
                        try prepare()
                        return try body(
                            PostgresIndexReader(
                                connection: connection, account: account, indexName: indexName, table: table,
                                vectorCache: vectorCache, now: now))
                    }
                }
            }
            if let standby, let value = standby.read(reading) { return value }
            return try pool.withConnection(reading)
        }
    }

    /// Reads the index's vectors into the cache when they moved since it was filled: what the store's
    /// listener does when another process changed them. A failure leaves it to the next search.
    @available(*, noasync, message: "it waits for the database")
    func refreshHeldVectors() {
        guard let held = vectorCache.held else { return }
        _ = try? readNow(now: Date(), prepare: {}) { try $0.matrix(model: held.model) }
    }

    /// The bytes of the index's rows (PostgreSQL's own measure of each row, its text and vectors included).
    package func size() -> Int {
        let bytes = try? pool.withConnection { connection in
            try connection.transaction(readOnly: true) {
                let table = try PostgresSignIn.name(account, on: connection)
                return try table.run(
                    """
                    SELECT (SELECT coalesce(sum(pg_column_size(i.*)), 0) FROM replica.items AS i WHERE i.account = $1 AND i.index_name = $2)
                         + (SELECT coalesce(sum(pg_column_size(v.*)), 0) FROM replica.vectors AS v WHERE v.account = $1 AND v.index_name = $2)
                    """, [.text(account.rawValue), .text(indexName)], on: connection
                ).int(0, 0)
            }
        }
        return Int((bytes ?? nil) ?? 0)
    }

    /// The same as ``size()``: the database gives space back by itself (autovacuum), not per index.
    package func compactedSize() async throws -> Int {
        try await Blocking.run { [self] in size() }
    }

    /// Nothing to do: what a transaction wrote is the database's once it commits.
    package func settle() async throws {}

    /// Counted in each transaction, in a load or not: nothing is held back.
    package func settleVocabulary() async throws {}

    /// Nothing to close: the pool is the store's.
    package func close(discarding: Bool) {}
}
