import Foundation
import ReplicaSQLite
import Synchronization

/// An entry of the change log that replica's triggers keep in an app's database.
package struct TableChange: Sendable {
    package var sequence: Int64
    package var rowID: String
    package var version: Int64?
    package var isDeletion: Bool

    package init(sequence: Int64, rowID: String, version: Int64?, isDeletion: Bool) {
        self.sequence = sequence
        self.rowID = rowID
        self.version = version
        self.isDeletion = isDeletion
    }
}

/// An app's own database holding a followed table, as replica reads it: the triggers it installs,
/// their change log, and the rows they point at. SQLite files (``AppDatabase``) and PostgreSQL databases
/// (`PostgresAppDatabase`, in the `ReplicaPostgresHome` library).
package protocol FollowedDatabase: AnyObject, Sendable {
    /// Installs the change log and the table's triggers; returns `true` when triggers were missing,
    /// which means changes may have gone unrecorded and the table must be read in full again.
    @discardableResult
    func installTriggers(_ table: FollowedTable) throws -> Bool
    /// The number of the table's last change: every change numbered up to it is committed, and no change
    /// will be numbered below it (changes are numbered in the order their transactions commit).
    func lastSequence(_ table: FollowedTable) throws -> Int64
    /// The table's changes after `sequence` that concern `account`, oldest first.
    func changes(_ table: FollowedTable, account: AccountID, after sequence: Int64, limit: Int) throws -> [TableChange]
    /// Drops change-log entries at or before `sequence` for the table.
    func prune(_ table: FollowedTable, through sequence: Int64) throws
    /// The row with this id as a record of `account`, or `nil` when it is gone or belongs to another account.
    func record(_ table: FollowedTable, id: String, account: AccountID) throws -> Record?
    /// The account's rows with ids after `cursor`, in id order: a full read in batches.
    func records(_ table: FollowedTable, account: AccountID, after cursor: String?, limit: Int) throws -> [Record]
    /// The rows with these ids that are the account's, by id (those gone or another's are absent).
    func records(_ table: FollowedTable, ids: [String], account: AccountID) throws -> [String: Record]
}

extension FollowedDatabase {
    /// One row at a time: a file on this machine answers each in microseconds.
    package func records(_ table: FollowedTable, ids: [String], account: AccountID) throws -> [String: Record] {
        var found: [String: Record] = [:]
        for id in Set(ids) {
            if let record = try record(table, id: id, account: account) { found[id] = record }
        }
        return found
    }
}

extension FollowedTable {
    /// Opens the app's database the table is in: a PostgreSQL database for a `postgresql://` URL (read by
    /// the `ReplicaPostgresHome` library), else a SQLite file.
    func openDatabase() throws -> any FollowedDatabase {
        guard isOnPostgres else { return try AppDatabase(path: database.standardizedFileURL.path) }
        guard let kind = FollowedDatabases.kind(of: database) else {
            throw ReplicaError(
                .invalidConfiguration,
                "the table '\(table)' is in a PostgreSQL database (\(location)), which this program was built without: link the ReplicaPostgresHome library and call PostgreSQL.enable() once (a store opened with .postgres(url:) does), then start the projection again; nothing was read"
            )
        }
        return try kind.open(database)
    }
}

/// A followed table that no longer has what its configuration names.
package struct FollowProblem: Error, CustomStringConvertible {
    package var table: FollowedTable
    package var message: String

    package init(table: FollowedTable, message: String) {
        self.table = table
        self.message = message
    }

    package var description: String { "table '\(table.table)' of \(table.location): \(message)" }
}

/// An app's own SQLite database, as replica reads it: the triggers it installs, their change log, and
/// the rows they point at.
final class AppDatabase: FollowedDatabase {
    let path: String
    /// The one connection, used by one caller at a time.
    private let connection: Mutex<Connection>

    init(path: String) throws {
        self.path = path
        var options = Connection.Options()
        options.create = false
        options.writeAheadLog = false  // the app decides its journal mode
        guard FileManager.default.fileExists(atPath: path) else {
            throw ReplicaError(.notFound, "the app database \(path) does not exist")
        }
        connection = Mutex(try Connection(path: path, options: options))
    }

    private func locked<T>(_ body: (Connection) throws -> T) rethrows -> T {
        try connection.withLock { try body($0) }
    }

    // MARK: Schema

    /// The table's column names, or an empty list if it does not exist.
    func columns(of table: String) throws -> [String] {
        try locked { connection in
            try connection.prepare("SELECT name FROM pragma_table_info(?)").rows([.text(table)]) { $0.text(0) }
        }
    }

    /// Checks that the table still has every column the configuration names.
    func checkSchema(_ table: FollowedTable) throws {
        try table.checkColumns(Set(try columns(of: table.table)), missingTable: "the table no longer exists")
    }

    /// Installs the change-log table and the table's triggers; returns `true` when triggers were missing,
    /// which means changes may have gone unrecorded and the table must be read in full again.
    @discardableResult
    func installTriggers(_ table: FollowedTable) throws -> Bool {
        try checkSchema(table)
        return try locked { connection in
            let existing =
                try connection.prepare(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND name IN (?, ?, ?)"
                )
                .firstRow([
                    .text(FollowedSQL.triggerName(table.table, "insert")),
                    .text(FollowedSQL.triggerName(table.table, "update")),
                    .text(FollowedSQL.triggerName(table.table, "delete")),
                ]) { $0.int(0) } ?? 0
            guard existing < 3 else { return false }
            let name = FollowedSQL.quote(table.table)
            let literal = FollowedSQL.literal(table.table)
            let id = FollowedSQL.quote(table.idColumn)
            let version = FollowedSQL.quote(table.versionColumn)
            func account(_ row: String) -> String {
                if case .column(let column) = table.account {
                    return "CAST(\(row).\(FollowedSQL.quote(column)) AS TEXT)"
                }
                return "NULL"
            }
            let now = "(julianday('now') - 2440587.5) * 86400.0"
            try connection.transaction {
                try connection.execute(
                    """
                    CREATE TABLE IF NOT EXISTS replica_changes (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, row_id TEXT NOT NULL, account TEXT,
                        version INTEGER, deleted INTEGER NOT NULL, at REAL NOT NULL);
                    CREATE INDEX IF NOT EXISTS replica_changes_table ON replica_changes(tbl, seq);
                    DROP TRIGGER IF EXISTS \(FollowedSQL.triggerName(table.table, "insert"));
                    DROP TRIGGER IF EXISTS \(FollowedSQL.triggerName(table.table, "update"));
                    DROP TRIGGER IF EXISTS \(FollowedSQL.triggerName(table.table, "delete"));
                    CREATE TRIGGER \(FollowedSQL.triggerName(table.table, "insert")) AFTER INSERT ON \(name) BEGIN
                        INSERT INTO replica_changes(tbl, row_id, account, version, deleted, at)
                        VALUES (\(literal), CAST(NEW.\(id) AS TEXT), \(account("NEW")), NEW.\(version), 0, \(now));
                    END;
                    CREATE TRIGGER \(FollowedSQL.triggerName(table.table, "update")) AFTER UPDATE ON \(name) BEGIN
                        INSERT INTO replica_changes(tbl, row_id, account, version, deleted, at)
                        SELECT \(literal), CAST(OLD.\(id) AS TEXT), \(account("OLD")), OLD.\(version), 1, \(now)
                        WHERE OLD.\(id) IS NOT NEW.\(id) OR \(account("OLD")) IS NOT \(account("NEW"));
                        INSERT INTO replica_changes(tbl, row_id, account, version, deleted, at)
                        VALUES (\(literal), CAST(NEW.\(id) AS TEXT), \(account("NEW")), NEW.\(version), 0, \(now));
                    END;
                    CREATE TRIGGER \(FollowedSQL.triggerName(table.table, "delete")) AFTER DELETE ON \(name) BEGIN
                        INSERT INTO replica_changes(tbl, row_id, account, version, deleted, at)
                        VALUES (\(literal), CAST(OLD.\(id) AS TEXT), \(account("OLD")), OLD.\(version), 1, \(now));
                    END;
                    """)
            }
            return true
        }
    }

    // MARK: The change log

    func lastSequence(_ table: FollowedTable) throws -> Int64 {
        try locked { connection in
            guard try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'replica_changes'") == 1
            else { return 0 }
            return try connection.prepare("SELECT coalesce(max(seq), 0) FROM replica_changes WHERE tbl = ?")
                .firstRow([.text(table.table)]) { $0.int64(0) } ?? 0
        }
    }

    /// The table's changes after `sequence` that concern `account`, oldest first.
    func changes(_ table: FollowedTable, account: AccountID, after sequence: Int64, limit: Int) throws
        -> [TableChange]
    {
        let accountClause: String
        var arguments: [SQLValue] = [.text(table.table), .integer(sequence)]
        if case .column = table.account {
            accountClause = " AND account = ?"
            arguments.append(.text(account.rawValue))
        } else {
            accountClause = ""
        }
        arguments.append(.integer(Int64(limit)))
        return try locked { connection in
            try connection.cached(
                "SELECT seq, row_id, version, deleted FROM replica_changes WHERE tbl = ? AND seq > ?\(accountClause) ORDER BY seq LIMIT ?"
            )
            .rows(arguments) {
                TableChange(
                    sequence: $0.int64(0), rowID: $0.text(1), version: $0.optionalInt64(2), isDeletion: $0.int(3) != 0)
            }
        }
    }

    /// Drops change-log entries at or before `sequence` for the table.
    func prune(_ table: FollowedTable, through sequence: Int64) throws {
        try locked { connection in
            try connection.execute(
                "DELETE FROM replica_changes WHERE tbl = ? AND seq <= ?", [.text(table.table), .integer(sequence)])
        }
    }

    // MARK: Rows

    private func selectColumns(_ table: FollowedTable) throws -> [String] {
        let all = try columns(of: table.table)
        let fields = table.fieldColumns ?? all.filter { !Set(table.namedColumns).contains($0) }
        return [table.idColumn, table.versionColumn]
            + [table.deletedColumn, table.readersColumn, table.modifiedColumn].map { $0 ?? table.idColumn }
            + fields
    }

    /// The row with this id as a record of `account`, or `nil` when it is gone or belongs to another account.
    ///
    /// The id column is compared as it is, so that its index (or the rowid) finds the row: the text id
    /// matches a column of text, integer or real affinity (SQLite converts it to the column's type), and
    /// the number, when the id is one, matches a column of no affinity that holds numbers. The text
    /// comparison after it keeps the match exact. A real that its text does not read back as (more
    /// digits than SQLite writes) is looked for by its text alone, reading the whole table, as every
    /// lookup did before: that read every row for every change, and under the shared-load benchmark the
    /// watcher spent most of its time turning ids into text and fell behind as the app's table grew.
    func record(_ table: FollowedTable, id: String, account: AccountID) throws -> Record? {
        let column = FollowedSQL.quote(table.idColumn)
        let integer = Int64(id)
        let real = Double(id)
        let number: SQLValue = integer.map { .integer($0) } ?? real.map { .real($0) } ?? .null
        if let found = try records(
            table, account: account, where: "\(column) IN (?1, ?2) AND CAST(\(column) AS TEXT) = ?1",
            [.text(id), number], limit: 1
        ).first {
            return found
        }
        guard integer == nil, real != nil else { return nil }
        return try records(table, account: account, where: "CAST(\(column) AS TEXT) = ?", [.text(id)], limit: 1).first
    }

    /// The account's rows with ids after `cursor`, in id order: a full read in batches.
    func records(_ table: FollowedTable, account: AccountID, after cursor: String?, limit: Int) throws
        -> [Record]
    {
        try records(
            table, account: account, where: "CAST(\(FollowedSQL.quote(table.idColumn)) AS TEXT) > ?",
            [.text(cursor ?? "")],
            limit: limit,
            order: "CAST(\(FollowedSQL.quote(table.idColumn)) AS TEXT)")
    }

    private func records(
        _ table: FollowedTable, account: AccountID, where condition: String, _ arguments: [SQLValue], limit: Int,
        order: String? = nil
    ) throws -> [Record] {
        let columns = try selectColumns(table)
        var sql =
            "SELECT \(columns.map(FollowedSQL.quote).joined(separator: ", ")) FROM \(FollowedSQL.quote(table.table)) WHERE \(condition)"
        var values = arguments
        if case .column(let column) = table.account {
            sql += " AND CAST(\(FollowedSQL.quote(column)) AS TEXT) = ?"
            values.append(.text(account.rawValue))
        }
        if let order { sql += " ORDER BY \(order)" }
        sql += " LIMIT \(limit)"
        let fieldNames = Array(columns.dropFirst(5))
        return try locked { connection in
            try connection.cached(sql).rows(values) { row in
                var fields: [(String, JSON)] = []
                for (offset, name) in fieldNames.enumerated() {
                    switch row.value(Int32(5 + offset)) {
                    case .null: fields.append((name, .null))
                    case .integer(let value): fields.append((name, .number(Double(value))))
                    case .real(let value): fields.append((name, .number(value)))
                    case .text(let value): fields.append((name, .string(value)))
                    case .blob(let value): fields.append((name, .string(Data(value).base64EncodedString())))
                    }
                }
                let deleted = table.deletedColumn != nil && row.int(2) != 0
                let readers =
                    table.readersColumn != nil
                    ? row.optionalText(3).flatMap {
                        try? JSON.parse($0).arrayValue?.compactMap(\.stringValue).map(AccountID.init(rawValue:))
                    }
                    : nil
                var modified: Date?
                if table.modifiedColumn != nil {
                    switch row.value(4) {
                    case .integer(let seconds): modified = Date(timeIntervalSince1970: Double(seconds))
                    case .real(let seconds): modified = Date(timeIntervalSince1970: seconds)
                    case .text(let text): modified = ISO8601.date(from: text)
                    default: modified = nil
                    }
                }
                guard let version = row.optionalInt64(1) else {
                    throw FollowProblem(
                        table: table, message: "row '\(row.text(0))' has no version in column '\(table.versionColumn)'")
                }
                return Record(
                    account: account, kind: table.kind, id: row.text(0), version: version, isDeleted: deleted,
                    readers: readers, modified: modified, fields: fields)
            }
        }
    }
}
