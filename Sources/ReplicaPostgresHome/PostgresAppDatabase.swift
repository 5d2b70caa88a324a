import Foundation
import Replica
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaPostgresStore
import Synchronization

/// An app's own PostgreSQL database holding a followed table: the change log and the trigger replica
/// installs there, and the rows they point at (see ``FollowedTable``).
///
/// The trigger, one per table for inserts, updates and deletes, calls `replica_record_change()`, which
/// appends to `replica_changes` in the app's transaction and notifies `replica_changes`. Its entries are
/// numbered by a counter row per table (`replica_change_counters`), which the first change of a
/// transaction locks until the transaction ends: numbers are handed out in the order transactions
/// commit, with no gaps (a rolled-back transaction gives its numbers back), so the engine can follow the
/// log by number as it follows SQLite's, never passing a change that commits late. The price is that the
/// app's transactions that write the followed table take turns from their first write of it to their
/// commit, as every writer of a SQLite file does.
final class PostgresAppDatabase: FollowedDatabase {
    private let pool: PostgresPool

    /// Connects lazily: no connection is opened until the first call.
    init(url: String) throws {
        _ = try PostgresConnection.parameters(in: url)
        pool = PostgresPool(url: url, maximumConnections: 2)
    }

    private static let opened = Mutex<[String: PostgresAppDatabase]>([:])

    /// The process's one value for the database `url` names, so that the engine and every search's
    /// hydration share its connections rather than signing in again each time.
    static func shared(url: String) throws -> PostgresAppDatabase {
        if let database = opened.withLock({ $0[url] }) { return database }
        let database = try PostgresAppDatabase(url: url)
        return opened.withLock { opened in
            if let existing = opened[url] { return existing }
            opened[url] = database
            return database
        }
    }

    private func using<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try translatingPostgresErrors { try pool.withConnection(body) }
    }

    // MARK: Schema

    /// The table's column names in order, or an empty list if it does not exist.
    func columns(of table: String, on connection: PostgresConnection) throws -> [String] {
        let result = try connection.execute(
            """
            SELECT attname FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum
            """, [.text(FollowedSQL.quote(table))])
        return (0..<result.rowCount).compactMap { result.string($0, 0) }
    }

    func checkSchema(_ table: FollowedTable, on connection: PostgresConnection) throws {
        try table.checkColumns(
            Set(try columns(of: table.table, on: connection)),
            missingTable: "the table does not exist (or this role may not see it)")
    }

    func installTriggers(_ table: FollowedTable) throws -> Bool {
        let trigger = FollowedSQL.triggerName(table.table, "changes")
        return try using { connection in
            try checkSchema(table, on: connection)
            let present =
                try connection.execute(
                    "SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2",
                    [.text(FollowedSQL.quote(table.table)), .text(trigger)]
                ).int(0, 0) ?? 0
            guard present == 0 else { return false }
            try connection.transaction {
                // Two processes installing at once take turns.
                try connection.execute("SELECT pg_advisory_xact_lock(hashtext('replica_changes'))")
                let schema = FollowedSQL.quote(
                    try connection.execute("SELECT current_schema()").string(0, 0) ?? "public")
                let account: String
                if case .column(let column) = table.account { account = column } else { account = "" }
                try connection.executeScript(
                    """
                    CREATE TABLE IF NOT EXISTS \(schema).replica_change_counters (tbl text PRIMARY KEY, last bigint NOT NULL);
                    CREATE TABLE IF NOT EXISTS \(schema).replica_changes (
                        tbl text NOT NULL, seq bigint NOT NULL, row_id text, account text, version bigint, deleted boolean NOT NULL,
                        at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (tbl, seq));
                    -- The trigger never fails the app's write: a version that is not a whole number (or a column
                    -- gone, a NULL id) is logged as NULL, and the engine reports the table's problem.
                    CREATE OR REPLACE FUNCTION \(schema).replica_whole_number(value text) RETURNS bigint
                    LANGUAGE sql IMMUTABLE AS $body$
                        SELECT CASE WHEN value ~ '^-?[0-9]{1,18}$' THEN value::bigint END
                    $body$;
                    -- TG_ARGV: the followed table's name, its id column, its version column, its account column ('' for none).
                    -- SECURITY DEFINER: the app's roles write the log through the trigger without rights of their own on it.
                    CREATE OR REPLACE FUNCTION \(schema).replica_record_change() RETURNS trigger
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = \(schema), pg_temp AS $body$
                    DECLARE
                        old_row jsonb;
                        new_row jsonb;
                        account_column text := nullif(TG_ARGV[3], '');
                        number bigint;
                    BEGIN
                        -- The table's counter, locked until this transaction ends: the next writer waits here, so
                        -- the numbers follow the order of the commits.
                        INSERT INTO replica_change_counters AS c (tbl, last) VALUES (TG_ARGV[0], 0)
                        ON CONFLICT (tbl) DO UPDATE SET last = c.last RETURNING last INTO number;
                        IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
                        IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
                        -- A row that moved (another id or account) leaves its old place as a deletion.
                        IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND ((old_row ->> TG_ARGV[1]) IS DISTINCT FROM (new_row ->> TG_ARGV[1])
                           OR (account_column IS NOT NULL AND (old_row ->> account_column) IS DISTINCT FROM (new_row ->> account_column)))) THEN
                            number := number + 1;
                            INSERT INTO replica_changes(tbl, seq, row_id, account, version, deleted)
                            VALUES (TG_ARGV[0], number, old_row ->> TG_ARGV[1], old_row ->> account_column, replica_whole_number(old_row ->> TG_ARGV[2]), true);
                        END IF;
                        IF TG_OP <> 'DELETE' THEN
                            number := number + 1;
                            INSERT INTO replica_changes(tbl, seq, row_id, account, version, deleted)
                            VALUES (TG_ARGV[0], number, new_row ->> TG_ARGV[1], new_row ->> account_column, replica_whole_number(new_row ->> TG_ARGV[2]), false);
                        END IF;
                        UPDATE replica_change_counters SET last = number WHERE tbl = TG_ARGV[0];
                        PERFORM pg_notify('replica_changes', TG_ARGV[0]);
                        RETURN NULL;
                    END
                    $body$;
                    DROP TRIGGER IF EXISTS \(trigger) ON \(FollowedSQL.quote(table.table));
                    CREATE TRIGGER \(trigger) AFTER INSERT OR UPDATE OR DELETE ON \(FollowedSQL.quote(table.table))
                    FOR EACH ROW EXECUTE FUNCTION \(schema).replica_record_change(\(FollowedSQL.literal(table.table)), \(FollowedSQL.literal(table.idColumn)),
                        \(FollowedSQL.literal(table.versionColumn)), \(FollowedSQL.literal(account)));
                    """)
            }
            return true
        }
    }

    // MARK: The change log

    /// The counter's value: every change numbered up to it is committed.
    func lastSequence(_ table: FollowedTable) throws -> Int64 {
        try using { connection in
            guard
                try connection.execute("SELECT to_regclass('replica_change_counters') IS NOT NULL").string(0, 0) == "t"
            else { return 0 }
            let counter = try connection.execute(
                "SELECT last FROM replica_change_counters WHERE tbl = $1", [.text(table.table)])
            return counter.rowCount == 0 ? 0 : counter.int(0, 0) ?? 0
        }
    }

    func changes(_ table: FollowedTable, account: AccountID, after sequence: Int64, limit: Int) throws -> [TableChange]
    {
        try using { connection in
            var sql = "SELECT seq, row_id, version, deleted FROM replica_changes WHERE tbl = $1 AND seq > $2"
            var arguments: [PostgresValue] = [.text(table.table), .int(sequence)]
            if case .column = table.account {
                sql += " AND account = $3"
                arguments.append(.text(account.rawValue))
            }
            sql += " ORDER BY seq LIMIT \(limit)"
            let result = try connection.execute(sql, arguments)
            return (0..<result.rowCount).map { row in
                TableChange(
                    sequence: result.int(row, 0) ?? 0, rowID: result.string(row, 1) ?? "", version: result.int(row, 2),
                    isDeletion: result.string(row, 3) == "t")
            }
        }
    }

    func prune(_ table: FollowedTable, through sequence: Int64) throws {
        _ = try using { connection in
            try connection.execute(
                "DELETE FROM replica_changes WHERE tbl = $1 AND seq <= $2", [.text(table.table), .int(sequence)])
        }
    }

    // MARK: Rows

    func record(_ table: FollowedTable, id: String, account: AccountID) throws -> Record? {
        try records(
            table, account: account, where: "t.\(FollowedSQL.quote(table.idColumn))::text = $1", [.text(id)], limit: 1
        ).first
    }

    /// One statement for them all: a server's round trips, not its work, would otherwise set the pace.
    func records(_ table: FollowedTable, ids: [String], account: AccountID) throws -> [String: Record] {
        guard !ids.isEmpty else { return [:] }
        let list =
            "{"
            + Set(ids).map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            .joined(separator: ",") + "}"
        let found = try records(
            table, account: account, where: "t.\(FollowedSQL.quote(table.idColumn))::text = ANY($1::text[])",
            [.text(list)],
            limit: ids.count)
        return Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func records(_ table: FollowedTable, account: AccountID, after cursor: String?, limit: Int) throws -> [Record] {
        try records(
            table, account: account, where: "t.\(FollowedSQL.quote(table.idColumn))::text > $1", [.text(cursor ?? "")],
            limit: limit,
            order: "t.\(FollowedSQL.quote(table.idColumn))::text COLLATE \"C\"")
    }

    /// Rows as records: each row read as JSON (`to_json`), so every column type arrives as the JSON value
    /// PostgreSQL makes of it.
    private func records(
        _ table: FollowedTable, account: AccountID, where condition: String, _ arguments: [PostgresValue],
        limit: Int, order: String? = nil
    ) throws -> [Record] {
        try using { connection in
            let all = try columns(of: table.table, on: connection)
            let fields = table.fieldColumns ?? all.filter { !Set(table.namedColumns).contains($0) }
            var sql = "SELECT to_json(t)::text FROM \(FollowedSQL.quote(table.table)) AS t WHERE \(condition)"
            var values = arguments
            if case .column(let column) = table.account {
                sql += " AND t.\(FollowedSQL.quote(column))::text = $\(values.count + 1)"
                values.append(.text(account.rawValue))
            }
            if let order { sql += " ORDER BY \(order)" }
            sql += " LIMIT \(limit)"
            let result = try connection.execute(sql, values)
            return try (0..<result.rowCount).map { row in
                let columns = Dictionary(
                    try JSON.parse(result.string(row, 0) ?? "{}").objectValue ?? [],
                    uniquingKeysWith: { first, _ in first })
                return try Self.record(columns, table: table, fields: fields, account: account)
            }
        }
    }

    private static func record(_ columns: [String: JSON], table: FollowedTable, fields: [String], account: AccountID)
        throws -> Record
    {
        func text(_ value: JSON?) -> String? {
            switch value {
            case .string(let text)?: text
            case .number(let number)?:
                number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            case .bool(let flag)?: String(flag)
            default: nil
            }
        }
        let id = text(columns[table.idColumn]) ?? ""
        guard let versionValue = columns[table.versionColumn], let version = text(versionValue).flatMap({ Int64($0) })
        else {
            throw FollowProblem(
                table: table, message: "row '\(id)' has no whole-number version in column '\(table.versionColumn)'")
        }
        var deleted = false
        if let column = table.deletedColumn {
            switch columns[column] {
            case .bool(let flag)?: deleted = flag
            case .number(let number)?: deleted = number != 0
            case .string(let text)?: deleted = !["", "0", "f", "false"].contains(text.lowercased())
            default: deleted = false
            }
        }
        var readers: [AccountID]?
        if let column = table.readersColumn {
            let list: JSON? =
                switch columns[column] {
                case .string(let text)?: try? JSON.parse(text)
                case let value?: value
                case nil: nil
                }
            readers = list?.arrayValue?.compactMap(\.stringValue).map(AccountID.init(rawValue:))
        }
        var modified: Date?
        if let column = table.modifiedColumn {
            switch columns[column] {
            case .number(let seconds)?: modified = Date(timeIntervalSince1970: seconds)
            case .string(let text)?: modified = ISO8601.date(from: text)
            default: modified = nil
            }
        }
        return Record(
            account: account, kind: table.kind, id: id, version: version, isDeleted: deleted, readers: readers,
            modified: modified,
            fields: fields.map { ($0, columns[$0] ?? .null) })
    }
}
