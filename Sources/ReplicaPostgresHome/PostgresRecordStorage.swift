import Foundation
import Replica
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaPostgresStore

/// One account's records in a PostgreSQL database (`replica.records` and the account's change log, retry
/// queue and counters): the ``RecordStorage`` of a store opened with ``Store/Database/postgres(url:)``.
///
/// Every operation is one transaction that names the account for the row-level policies and first checks
/// the sign-in the storage was opened with (``PostgresSignIn``); a write holds the account's catalog row
/// in share mode, so a sign-out waits for it, and then the account's `record_logs` row, so writers of one
/// account take turns and the change log's numbers follow the order of the commits. The client's errors
/// leave this type as ``ReplicaError``s with code `storage`.
final class PostgresRecordStorage: RecordStorage {
    let pool: PostgresPool
    let account: AccountID
    let signIn: SignInLease

    /// Opens the records of `account`, creating them (its partitions and its log) only when `creating`.
    ///
    /// - Returns: `nil` when not `creating` and the account has no records yet.
    @available(*, noasync, message: "it waits for the database; in async code run it in Blocking.run")
    static func open(pool: PostgresPool, account: AccountID, signIn: SignInLease, creating: Bool) throws
        -> PostgresRecordStorage?
    {
        let storage = PostgresRecordStorage(pool: pool, account: account, signIn: signIn)
        do {
            let exists = try storage.transaction(writing: creating) { connection in
                if creating {
                    try connection.execute("SELECT replica.add_account()")
                    try connection.execute(
                        "INSERT INTO replica.record_logs(account) VALUES ($1) ON CONFLICT DO NOTHING",
                        [.text(account.rawValue)])
                    return true
                }
                return try connection.execute(
                    "SELECT 1 FROM replica.record_logs WHERE account = $1", [.text(account.rawValue)]
                ).rowCount == 1
            }
            return exists ? storage : nil
        } catch let error as ReplicaError where !creating && (error.cause as? PostgresError)?.isUndefinedTable == true {
            return nil  // the account has no partitions yet
        }
    }

    private init(pool: PostgresPool, account: AccountID, signIn: SignInLease) {
        self.pool = pool
        self.account = account
        self.signIn = signIn
    }

    /// Runs `body` in one transaction for the account, once its sign-in is checked, its statements on the
    /// account's partitions.
    @discardableResult
    private func transaction<T>(writing: Bool, _ body: (AccountConnection) throws -> T) throws -> T {
        try translatingPostgresErrors {
            try pool.withConnection { connection in
                try PostgresSignIn.endingAsSignedOut(account, generation: signIn.generation, on: connection) {
                    try connection.transaction(readOnly: !writing) {
                        let table = try PostgresSignIn.nameAndCheck(
                            account, generation: signIn.generation, on: connection, locking: writing)
                        return try body(AccountConnection(connection: connection, table: table))
                    }
                }
            }
        }
    }

    /// A connection in one of the account's transactions, whose statements run on its partitions.
    struct AccountConnection {
        let connection: PostgresConnection
        let table: AccountPartitions

        @discardableResult
        func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
            try table.run(sql, parameters, on: connection)
        }
    }

    /// Takes the account's log row (writers of the account wait here for each other) and notes that the
    /// records changed; returns the last change-log number given.
    private func lockLog(_ connection: AccountConnection) throws -> Int64 {
        let result = try connection.execute(
            "UPDATE replica.record_logs SET version = version + 1 WHERE account = $1 RETURNING last_seq",
            [.text(account.rawValue)])
        guard result.rowCount == 1, let last = result.int(0, 0) else {
            throw ReplicaError(
                .storage,
                "the record store of account '\(account)' has no change log in the database; sign the account out and in again"
            )
        }
        return last
    }

    // MARK: Writing

    func write(_ records: [Record], now: Date) throws -> RecordWriteSummary {
        try transaction(writing: true) { connection in
            var sequence = try lockLog(connection)
            var summary = RecordWriteSummary()
            for record in records {
                CrashPoints.reach("records.record")
                let stored = try connection.execute(
                    "SELECT version FROM replica.records WHERE account = $1 AND kind = $2 AND id = $3",
                    [.text(account.rawValue), .text(record.kind), .text(record.id)]
                ).firstInt
                guard summary.admits(record, over: stored) else { continue }
                try connection.execute(
                    """
                    INSERT INTO replica.records(account, kind, id, version, deleted, readers, modified, fields)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    ON CONFLICT (account, kind, id) DO UPDATE SET version = $4, deleted = $5, readers = $6, modified = $7, fields = $8
                    """,
                    [
                        .text(account.rawValue), .text(record.kind), .text(record.id), .int(record.version),
                        .bool(record.isDeleted),
                        PostgresValue(record.storedReaders), PostgresValue(record.modified?.timeIntervalSince1970),
                        .text(record.storedFields),
                    ])
                sequence += 1
                try connection.execute(
                    "INSERT INTO replica.changes(account, seq, kind, id, version, at) VALUES ($1, $2, $3, $4, $5, $6)",
                    [
                        .text(account.rawValue), .int(sequence), .text(record.kind), .text(record.id),
                        .int(record.version),
                        .double(now.timeIntervalSince1970),
                    ])
                summary.written += 1
            }
            try connection.execute(
                "UPDATE replica.record_logs SET last_seq = $2 WHERE account = $1",
                [.text(account.rawValue), .int(sequence)])
            if summary.ignoredOlder > 0 {
                try connection.execute(
                    """
                    INSERT INTO replica.record_counters(account, name, value) VALUES ($1, 'ignoredOlder', $2)
                    ON CONFLICT (account, name) DO UPDATE SET value = record_counters.value + $2
                    """, [.text(account.rawValue), .int(Int64(summary.ignoredOlder))])
            }
            CrashPoints.reach("records.beforeCommit")
            return summary
        }
    }

    // MARK: Reading

    private static let recordColumns = "kind, id, version, deleted, readers, modified, fields"

    /// The records of `result`, whose columns from `first` on are ``recordColumns``.
    private func decode(_ result: PostgresResult, row: Int, first: Int = 0) throws -> Record {
        let readers = try result.string(row, first + 4).map { text -> [AccountID] in
            try JSON.parse(text).arrayValue?.compactMap(\.stringValue).map(AccountID.init(rawValue:)) ?? []
        }
        return Record(
            account: account, kind: result.string(row, first) ?? "", id: result.string(row, first + 1) ?? "",
            version: result.int(row, first + 2) ?? 0, isDeleted: result.bool(row, first + 3) ?? false, readers: readers,
            modified: result.double(row, first + 5).map(Date.init(timeIntervalSince1970:)),
            fields: try JSON.parse(result.string(row, first + 6) ?? "{}").objectValue ?? [])
    }

    func record(kind: String, id: String) throws -> Record? {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                "SELECT \(Self.recordColumns) FROM replica.records WHERE account = $1 AND kind = $2 AND id = $3",
                [.text(account.rawValue), .text(kind), .text(id)])
            return try result.rowCount == 1 ? decode(result, row: 0) : nil
        }
    }

    func records(kind: String, after cursor: String?, limit: Int) throws -> [Record] {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                """
                SELECT \(Self.recordColumns) FROM replica.records WHERE account = $1 AND kind = $2 AND id > $3 ORDER BY id LIMIT $4
                """, [.text(account.rawValue), .text(kind), .text(cursor ?? ""), .int(Int64(limit))])
            return try (0..<result.rowCount).map { try decode(result, row: $0) }
        }
    }

    func recordIDs(kind: String, after cursor: String?, limit: Int) throws -> [(id: String, live: Bool)] {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                """
                SELECT id, deleted, readers FROM replica.records WHERE account = $1 AND kind = $2 AND id > $3 ORDER BY id LIMIT $4
                """, [.text(account.rawValue), .text(kind), .text(cursor ?? ""), .int(Int64(limit))])
            return try (0..<result.rowCount).map { row in
                let readers = try result.string(row, 2).map {
                    try JSON.parse($0).arrayValue?.compactMap(\.stringValue) ?? []
                }
                return (
                    result.string(row, 0) ?? "",
                    result.bool(row, 1) == false && (readers?.contains(account.rawValue) ?? true)
                )
            }
        }
    }

    func kinds() throws -> [String] {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                "SELECT DISTINCT kind FROM replica.records WHERE account = $1 ORDER BY kind", [.text(account.rawValue)])
            return (0..<result.rowCount).compactMap { result.string($0, 0) }
        }
    }

    func liveRecordCount() throws -> Int {
        try transaction(writing: false) { connection in
            Int(
                try connection.execute(
                    "SELECT count(*) FROM replica.records WHERE account = $1 AND NOT deleted", [.text(account.rawValue)]
                )
                .int(0, 0) ?? 0)
        }
    }

    // MARK: Change log

    func changes(after sequence: Int64, limit: Int) throws -> [(Change, Record?)] {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                """
                SELECT c.seq, c.kind, c.id, c.version, r.kind, r.id, r.version, r.deleted, r.readers, r.modified, r.fields
                FROM replica.changes AS c LEFT JOIN replica.records AS r ON r.account = c.account AND r.kind = c.kind AND r.id = c.id
                WHERE c.account = $1 AND c.seq > $2 ORDER BY c.seq LIMIT $3
                """, [.text(account.rawValue), .int(sequence), .int(Int64(limit))])
            return try (0..<result.rowCount).map { row in
                let change = Change(
                    sequence: result.int(row, 0) ?? 0, kind: result.string(row, 1) ?? "",
                    id: result.string(row, 2) ?? "",
                    version: result.int(row, 3) ?? 0)
                return (change, try result.isNull(row, 4) ? nil : decode(result, row: row, first: 4))
            }
        }
    }

    func changeCount(after sequence: Int64) throws -> Int {
        try transaction(writing: false) { connection in
            Int(
                try connection.execute(
                    "SELECT count(*) FROM replica.changes WHERE account = $1 AND seq > $2",
                    [.text(account.rawValue), .int(sequence)]
                ).int(0, 0) ?? 0)
        }
    }

    func touch(kind: String, id: String) throws {
        try transaction(writing: true) { connection in
            let last = try lockLog(connection)
            let appended = try connection.execute(
                """
                INSERT INTO replica.changes(account, seq, kind, id, version, at)
                SELECT account, $4, kind, id, version, $5 FROM replica.records WHERE account = $1 AND kind = $2 AND id = $3
                """,
                [
                    .text(account.rawValue), .text(kind), .text(id), .int(last + 1),
                    .double(Date().timeIntervalSince1970),
                ])
            if appended.affectedRows == 1 {
                try connection.execute(
                    "UPDATE replica.record_logs SET last_seq = $2 WHERE account = $1",
                    [.text(account.rawValue), .int(last + 1)])
            }
        }
    }

    func lastSequence() throws -> Int64 {
        try transaction(writing: false) { connection in
            try connection.execute(
                "SELECT last_seq FROM replica.record_logs WHERE account = $1", [.text(account.rawValue)]
            ).firstInt ?? 0
        }
    }

    func pruneChanges(through sequence: Int64) throws {
        guard sequence > 0 else { return }
        try transaction(writing: true) { connection in
            try connection.execute(
                "DELETE FROM replica.changes WHERE account = $1 AND seq <= $2",
                [.text(account.rawValue), .int(sequence)])
        }
    }

    func dataVersion() throws -> Int {
        try transaction(writing: false) { connection in
            Int(
                try connection.execute(
                    "SELECT version FROM replica.record_logs WHERE account = $1", [.text(account.rawValue)]
                ).firstInt ?? 0)
        }
    }

    // MARK: Counters

    func counter(_ name: String) throws -> Int {
        try transaction(writing: false) { connection in
            Int(
                try connection.execute(
                    "SELECT value FROM replica.record_counters WHERE account = $1 AND name = $2",
                    [.text(account.rawValue), .text(name)]
                ).firstInt ?? 0)
        }
    }

    // MARK: Retry queue

    func enqueue(_ deletions: [(indexName: String, target: PendingDeletion.Target)], error: String, now: Date) throws {
        try transaction(writing: true) { connection in
            _ = try lockLog(connection)
            for deletion in deletions {
                let (kind, target) = deletion.target.storedParts
                try connection.execute(
                    """
                    INSERT INTO replica.pending_deletions(account, index_name, target_kind, target, attempts, next_attempt, last_error, queued)
                    VALUES ($1, $2, $3, $4, 0, $5, $6, $5)
                    ON CONFLICT (account, index_name, target_kind, target) DO UPDATE SET last_error = excluded.last_error
                    """,
                    [
                        .text(account.rawValue), .text(deletion.indexName), .text(kind), .text(target),
                        .double(now.timeIntervalSince1970),
                        .text(error),
                    ])
            }
        }
    }

    func pendingDeletions(dueBy date: Date?) throws -> [PendingDeletion] {
        try transaction(writing: false) { connection in
            let result = try connection.execute(
                """
                SELECT index_name, target_kind, target, attempts, next_attempt, last_error FROM replica.pending_deletions
                WHERE account = $1 AND next_attempt <= $2 ORDER BY next_attempt
                """, [.text(account.rawValue), .double(date?.timeIntervalSince1970 ?? .infinity)])
            return (0..<result.rowCount).map { row in
                PendingDeletion(
                    indexName: result.string(row, 0) ?? "",
                    target: PendingDeletion.Target(
                        storedKind: result.string(row, 1) ?? "", value: result.string(row, 2) ?? ""),
                    attempts: Int(result.int(row, 3) ?? 0),
                    nextAttempt: Date(timeIntervalSince1970: result.double(row, 4) ?? 0),
                    lastError: result.string(row, 5))
            }
        }
    }

    func finishDeletion(_ deletion: PendingDeletion) throws {
        let (kind, target) = deletion.target.storedParts
        try transaction(writing: true) { connection in
            _ = try lockLog(connection)
            try connection.execute(
                """
                DELETE FROM replica.pending_deletions WHERE account = $1 AND index_name = $2 AND target_kind = $3 AND target = $4
                """, [.text(account.rawValue), .text(deletion.indexName), .text(kind), .text(target)])
        }
    }

    func postponeDeletion(_ deletion: PendingDeletion, until date: Date, error: String) throws {
        let (kind, target) = deletion.target.storedParts
        try transaction(writing: true) { connection in
            _ = try lockLog(connection)
            try connection.execute(
                """
                UPDATE replica.pending_deletions SET attempts = attempts + 1, next_attempt = $5, last_error = $6
                WHERE account = $1 AND index_name = $2 AND target_kind = $3 AND target = $4
                """,
                [
                    .text(account.rawValue), .text(deletion.indexName), .text(kind), .text(target),
                    .double(date.timeIntervalSince1970),
                    .text(error),
                ])
        }
    }

    // MARK: Closing

    /// Nothing to close: the pool is the store's.
    func close(discarding: Bool) {}
}
