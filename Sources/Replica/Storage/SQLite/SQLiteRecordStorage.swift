import Foundation
import ReplicaSQLite

/// One account's records in a SQLite file (`accounts/<id>/records.sqlite`): the default, embedded
/// ``RecordStorage``, holding every statement on that file (records, change log, retry queue, counters).
/// SQLite's errors leave this type as ``ReplicaError``s with code `storage`.
final class SQLiteRecordStorage: RecordStorage {
    /// The open file; use ``database``, which checks the sign-in first.
    let file: Database
    let account: AccountID
    /// The sign-in the file was opened under, checked at every operation (see ``SignInLease``).
    let signIn: SignInLease

    static let migrator = Migrator(
        kind: "record store", applicationID: 0x5250_4C52, migrations: EmbeddedMigrations.records)

    /// Opens (creating if needed) the record store file at `path`.
    ///
    /// - Throws: ``ReplicaError`` with code `newerSchema` for a file a newer replica wrote, and `storage`
    ///   for a damaged one (saying what to do) or any other failure of SQLite's.
    init(path: String, account: AccountID, signIn: SignInLease) throws {
        do {
            file = try Database(path: path, migrator: Self.migrator)
        } catch let error as MigrationError {
            throw ReplicaError(error.code == .newerSchema ? .newerSchema : .storage, error.description, cause: error)
        } catch let error as SQLiteError where error.code.isCorruption {
            // Unlike an index, the record store is the canonical copy: it is never rebuilt behind the
            // app's back, and SQLite's own words would not say what to do.
            throw ReplicaError(
                .storage,
                "the record store of account '\(account)' is damaged (\(path)) and cannot be read; it is "
                    + "the canonical copy, so replica does not rebuild it: restore the file from a backup, or remove it (with "
                    + "`replica accounts sign-out \(account)`, then sign in again) and have the app write its records again. "
                    + "The account's index is left as it is", cause: error)
        } catch let error as SQLiteError {
            throw error.storageError
        }
        self.account = account
        self.signIn = signIn
    }

    /// The file, once the account is known to be still signed in under the sign-in it was opened with.
    var database: Database {
        get throws {
            try signIn.check()
            return file
        }
    }

    // MARK: Writing

    /// Stores records newer than those held and appends each to the change log, in one transaction.
    func write(_ records: [Record], now: Date) throws -> RecordWriteSummary {
        try file.writeStorage { connection in
            // Inside the transaction, which holds the file's write lock: records that pass this check commit
            // before any sign-out that follows deletes the file, never into a deleted one.
            try signIn.check()
            var summary = RecordWriteSummary()
            for record in records {
                CrashPoints.reach("records.record")
                let stored = try connection.cached("SELECT version FROM records WHERE kind = ? AND id = ?")
                    .firstRow([.text(record.kind), .text(record.id)]) { $0.int64(0) }
                guard summary.admits(record, over: stored) else { continue }
                try connection.cached(
                    """
                    INSERT INTO records(kind, id, version, deleted, readers, modified, fields) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT(kind, id) DO UPDATE SET version = ?3, deleted = ?4, readers = ?5, modified = ?6, fields = ?7
                    """
                ).run([
                    .text(record.kind), .text(record.id), .integer(record.version), SQLValue(record.isDeleted),
                    SQLValue(record.storedReaders), SQLValue(record.modified?.timeIntervalSince1970),
                    .text(record.storedFields),
                ])
                try connection.cached("INSERT INTO changes(kind, id, version, at) VALUES (?, ?, ?, ?)")
                    .run([
                        .text(record.kind), .text(record.id), .integer(record.version),
                        .real(now.timeIntervalSince1970),
                    ])
                summary.written += 1
            }
            if summary.ignoredOlder > 0 {
                try connection.execute(
                    """
                    INSERT INTO counters(name, value) VALUES ('ignoredOlder', ?1)
                    ON CONFLICT(name) DO UPDATE SET value = value + ?1
                    """, [.integer(Int64(summary.ignoredOlder))])
            }
            CrashPoints.reach("records.beforeCommit")
            return summary
        }
    }

    // MARK: Reading

    static func decode(_ row: Statement, account: AccountID) throws -> Record {
        let readers = try row.optionalText(4).map { text -> [AccountID] in
            try JSON.parse(text).arrayValue?.compactMap(\.stringValue).map(AccountID.init(rawValue:)) ?? []
        }
        return Record(
            account: account, kind: row.text(0), id: row.text(1), version: row.int64(2), isDeleted: row.int(3) != 0,
            readers: readers, modified: row.optionalDouble(5).map(Date.init(timeIntervalSince1970:)),
            fields: try JSON.parse(row.text(6)).objectValue ?? [])
    }

    static let recordColumns = "kind, id, version, deleted, readers, modified, fields"

    func record(kind: String, id: String) throws -> Record? {
        try database.readStorage { connection in
            try connection.cached("SELECT \(Self.recordColumns) FROM records WHERE kind = ? AND id = ?")
                .firstRow([.text(kind), .text(id)]) { try Self.decode($0, account: account) }
        }
    }

    func records(kind: String, after cursor: String?, limit: Int) throws -> [Record] {
        try database.readStorage { connection in
            try connection.cached(
                "SELECT \(Self.recordColumns) FROM records WHERE kind = ? AND id > ? ORDER BY id LIMIT ?"
            )
            .rows([.text(kind), .text(cursor ?? ""), .integer(Int64(limit))]) { try Self.decode($0, account: account) }
        }
    }

    func recordIDs(kind: String, after cursor: String?, limit: Int) throws -> [(id: String, live: Bool)] {
        try database.readStorage { connection in
            try connection.cached(
                "SELECT id, deleted, readers FROM records WHERE kind = ? AND id > ? ORDER BY id LIMIT ?"
            )
            .rows([.text(kind), .text(cursor ?? ""), .integer(Int64(limit))]) { row in
                let readers = try row.optionalText(2).map {
                    try JSON.parse($0).arrayValue?.compactMap(\.stringValue) ?? []
                }
                return (row.text(0), row.int(1) == 0 && (readers?.contains(account.rawValue) ?? true))
            }
        }
    }

    func kinds() throws -> [String] {
        try database.readStorage { connection in
            // Walks the primary key from kind to kind: a few index look-ups, not a scan of every record.
            try connection.cached(
                """
                WITH RECURSIVE kinds(kind) AS (
                    SELECT min(kind) FROM records
                    UNION ALL
                    SELECT (SELECT min(kind) FROM records WHERE kind > kinds.kind) FROM kinds WHERE kinds.kind IS NOT NULL
                )
                SELECT kind FROM kinds WHERE kind IS NOT NULL
                """
            ).rows { $0.text(0) }
        }
    }

    // MARK: Change log

    func changes(after sequence: Int64, limit: Int) throws -> [(Change, Record?)] {
        try database.readStorage { connection in
            try connection.cached(
                """
                SELECT c.seq, c.kind, c.id, c.version, r.kind, r.id, r.version, r.deleted, r.readers, r.modified, r.fields
                FROM changes c LEFT JOIN records r ON r.kind = c.kind AND r.id = c.id
                WHERE c.seq > ? ORDER BY c.seq LIMIT ?
                """
            ).rows([.integer(sequence), .integer(Int64(limit))]) { row in
                let change = Change(sequence: row.int64(0), kind: row.text(1), id: row.text(2), version: row.int64(3))
                let record: Record? =
                    row.isNull(4)
                    ? nil
                    : Record(
                        account: account, kind: row.text(4), id: row.text(5), version: row.int64(6),
                        isDeleted: row.int(7) != 0,
                        readers: try row.optionalText(8).map {
                            try JSON.parse($0).arrayValue?.compactMap(\.stringValue).map(AccountID.init(rawValue:))
                                ?? []
                        },
                        modified: row.optionalDouble(9).map(Date.init(timeIntervalSince1970:)),
                        fields: try JSON.parse(row.text(10)).objectValue ?? [])
                return (change, record)
            }
        }
    }

    func changeCount(after sequence: Int64) throws -> Int {
        try database.readStorage { connection in
            try connection.scalarInt("SELECT count(*) FROM changes WHERE seq > ?", [.integer(sequence)]) ?? 0
        }
    }

    func touch(kind: String, id: String) throws {
        try database.writeStorage { connection in
            try connection.execute(
                "INSERT INTO changes(kind, id, version, at) SELECT kind, id, version, ? FROM records WHERE kind = ? AND id = ?",
                [.real(Date().timeIntervalSince1970), .text(kind), .text(id)])
        }
    }

    func lastSequence() throws -> Int64 {
        try database.readStorage {
            try $0.scalar("SELECT coalesce(max(seq), 0) FROM changes").flatMap {
                if case .integer(let v) = $0 { v } else { nil }
            } ?? 0
        }
    }

    func pruneChanges(through sequence: Int64) throws {
        guard sequence > 0 else { return }
        try database.writeStorage { connection in
            try connection.execute("DELETE FROM changes WHERE seq <= ?", [.integer(sequence)])
        }
    }

    func dataVersion() throws -> Int {
        try database.readStorage { try $0.scalarInt("PRAGMA data_version") ?? 0 }
    }

    func liveRecordCount() throws -> Int {
        try database.readStorage { try $0.scalarInt("SELECT count(*) FROM records WHERE deleted = 0") ?? 0 }
    }

    // MARK: Counters

    func counter(_ name: String) throws -> Int {
        try database.readStorage { try $0.scalarInt("SELECT value FROM counters WHERE name = ?", [.text(name)]) ?? 0 }
    }

    // MARK: Retry queue

    func enqueue(_ deletions: [(indexName: String, target: PendingDeletion.Target)], error: String, now: Date) throws {
        try database.writeStorage { connection in
            for deletion in deletions {
                let (kind, target) = deletion.target.storedParts
                try connection.cached(
                    """
                    INSERT INTO pending_deletions(index_name, target_kind, target, attempts, next_attempt, last_error, queued)
                    VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT DO UPDATE SET last_error = excluded.last_error
                    """
                ).run([
                    .text(deletion.indexName), .text(kind), .text(target), .real(now.timeIntervalSince1970),
                    .text(error),
                    .real(now.timeIntervalSince1970),
                ])
            }
        }
    }

    func pendingDeletions(dueBy date: Date?) throws -> [PendingDeletion] {
        try database.readStorage { connection in
            try connection.cached(
                """
                SELECT index_name, target_kind, target, attempts, next_attempt, last_error FROM pending_deletions
                WHERE next_attempt <= ? ORDER BY next_attempt
                """
            ).rows([.real(date?.timeIntervalSince1970 ?? .infinity)]) { row in
                PendingDeletion(
                    indexName: row.text(0),
                    target: PendingDeletion.Target(storedKind: row.text(1), value: row.text(2)),
                    attempts: row.int(3), nextAttempt: Date(timeIntervalSince1970: row.double(4)),
                    lastError: row.optionalText(5))
            }
        }
    }

    func finishDeletion(_ deletion: PendingDeletion) throws {
        let (kind, target) = deletion.target.storedParts
        try database.writeStorage { connection in
            try connection.execute(
                "DELETE FROM pending_deletions WHERE index_name = ? AND target_kind = ? AND target = ?",
                [.text(deletion.indexName), .text(kind), .text(target)])
        }
    }

    func postponeDeletion(_ deletion: PendingDeletion, until date: Date, error: String) throws {
        let (kind, target) = deletion.target.storedParts
        try database.writeStorage { connection in
            try connection.execute(
                """
                UPDATE pending_deletions SET attempts = attempts + 1, next_attempt = ?, last_error = ?
                WHERE index_name = ? AND target_kind = ? AND target = ?
                """,
                [
                    .real(date.timeIntervalSince1970), .text(error), .text(deletion.indexName), .text(kind),
                    .text(target),
                ])
        }
    }

    // MARK: Closing

    func close(discarding: Bool) {
        if discarding { file.discardOnClose() }
    }
}
