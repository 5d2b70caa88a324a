public import Foundation

/// A table in an app's own database, SQLite or PostgreSQL, that replica follows instead of a record store.
///
/// replica installs triggers on the table that append every insert, update and delete to a change log
/// table, `replica_changes`, in the app's database, in the app's own transaction (triggers cannot write
/// to another file). The projection engine follows that log like the record store's, from a checkpoint
/// kept in each account's index and written in the same transaction as what it applied. The app's
/// database stays the app's: signing an account out removes what replica holds for it, never the app's
/// rows.
///
/// A `postgresql://` URL as the database names a table of a PostgreSQL database (in the schema the URL's
/// role finds first). There the trigger numbers changes in the order their transactions commit (the
/// app's writers of the table take turns from their first write of it to their commit), so a change
/// committed late is never passed over, and it sends `NOTIFY replica_changes`, which a running engine
/// listens for. The role needs `SELECT` and `TRIGGER` on the table and `CREATE` on its schema (for the
/// log and the trigger function, which runs as that role).
///
/// For example:
/// ```swift
/// let notes = FollowedTable(database: URL(fileURLWithPath: "/var/lib/notes/app.sqlite"), table: "notes",
///                           kind: "note", account: .column("owner"), idColumn: "id", versionColumn: "revision")
/// let tasks = FollowedTable(database: URL(string: "postgresql://replica_app:secret@db.internal/app")!, table: "tasks",
///                           kind: "task", account: .column("owner"))
/// let engine = ProjectionEngine(store: store, projections: ProjectionSet(indexName: Store.defaultIndexName), followedTables: [notes, tasks])
/// ```
public struct FollowedTable: Sendable, Equatable {
    /// Whose rows these are.
    public enum Account: Sendable, Equatable {
        /// Every row belongs to this account.
        case fixed(AccountID)
        /// A column holds each row's account ID.
        case column(String)
    }

    /// The app's SQLite file, or its PostgreSQL database as a `postgresql://` URL.
    public var database: URL
    /// The table followed, in the app's database.
    public var table: String
    /// The record kind the rows become (and so the projection they go through).
    public var kind: String
    /// Whose rows these are: one account, or the account named in a column.
    public var account: Account
    /// The column holding each row's identifier, which becomes the record's id.
    public var idColumn: String
    /// A column whose values grow with each change of a row (a revision, an update counter).
    public var versionColumn: String
    /// A column that marks a row as deleted (soft delete), if the app keeps one.
    public var deletedColumn: String?
    /// A column with a JSON array of the account IDs allowed to read the row.
    public var readersColumn: String?
    /// A column with the row's modification time (ISO 8601 text or seconds since 1970).
    public var modifiedColumn: String?
    /// The columns that become the record's fields; `nil` takes every other column.
    public var fieldColumns: [String]?

    /// Creates the description of a followed table; the columns not given take their defaults (`id`, `version`)
    /// or are absent, and `fieldColumns` of `nil` takes every other column.
    public init(
        database: URL, table: String, kind: String, account: Account, idColumn: String = "id",
        versionColumn: String = "version", deletedColumn: String? = nil, readersColumn: String? = nil,
        modifiedColumn: String? = nil, fieldColumns: [String]? = nil
    ) {
        self.database = database
        self.table = table
        self.kind = kind
        self.account = account
        self.idColumn = idColumn
        self.versionColumn = versionColumn
        self.deletedColumn = deletedColumn
        self.readersColumn = readersColumn
        self.modifiedColumn = modifiedColumn
        self.fieldColumns = fieldColumns
    }

    /// Whether the table is in a PostgreSQL database (its URL's scheme is `postgresql` or `postgres`).
    var isOnPostgres: Bool { ["postgresql", "postgres"].contains(database.scheme?.lowercased() ?? "") }

    /// The checkpoint name of this table in an index: the file's path and the table; for PostgreSQL, the
    /// server, database and table, never the role or its password.
    var owner: ItemOwner { .table("\(location)#\(table)") }

    /// Where the table's database is, to name it: the file's path, or the PostgreSQL server and database
    /// without the role or its password.
    var location: String {
        guard isOnPostgres else { return database.standardizedFileURL.path }
        var place = URLComponents(url: database, resolvingAgainstBaseURL: false) ?? URLComponents()
        place.user = nil
        place.password = nil
        place.queryItems = place.queryItems?.filter { ["host", "hostaddr", "port", "dbname"].contains($0.name) }
        if place.queryItems?.isEmpty == true { place.queryItems = nil }
        return place.string ?? "postgresql"
    }
    /// The name its checkpoint is kept under in an index: its owner's.
    var consumer: String { owner.rawValue }

    /// Throws the table's problem when `columns` (the table's, empty when it does not exist) lack one
    /// the configuration names.
    package func checkColumns(_ columns: Set<String>, missingTable: String) throws {
        guard !columns.isEmpty else { throw FollowProblem(table: self, message: missingTable) }
        let missing = namedColumns.filter { !columns.contains($0) }
        guard missing.isEmpty else {
            throw FollowProblem(
                table: self,
                message: "the table has no column \(missing.map { "'\($0)'" }.joined(separator: ", ")) "
                    + "(its schema changed); following it stopped until the configuration or the table is fixed")
        }
    }

    /// Every column the configuration names, which must exist in the table.
    package var namedColumns: [String] {
        var columns = [idColumn, versionColumn]
        if case .column(let column) = account { columns.append(column) }
        columns += [deletedColumn, readersColumn, modifiedColumn].compactMap { $0 }
        columns += fieldColumns ?? []
        return columns
    }
}

// MARK: - Configuration

extension FollowedTable {
    /// Reads one entry of the configuration's `follow` list:
    /// `{"database": "/path/app.sqlite", "table": "notes", "kind": "note", "account": "alice" or {"column": "owner"},
    ///   "id": "id", "version": "version", "deleted": "is_deleted", "readers": "readers", "modified": "updated_at",
    ///   "fields": ["title", "body"]}`.
    static func fromConfiguration(_ json: JSON, relativeTo base: URL) throws -> FollowedTable {
        func invalid(_ message: String) -> ReplicaError { ReplicaError(.invalidConfiguration, "follow: \(message)") }
        guard let members = json.objectValue else { throw invalid("each entry must be an object") }
        func string(_ key: String) throws -> String? {
            guard let value = json[key] else { return nil }
            guard let text = value.stringValue, !text.isEmpty else {
                throw invalid("'\(key)' must be a non-empty string")
            }
            return text
        }
        let known: Set<String> = [
            "database", "table", "kind", "account", "id", "version", "deleted", "readers", "modified", "fields",
        ]
        if let unknown = members.first(where: { !known.contains($0.0) }) {
            throw invalid("unknown setting '\(unknown.0)'; the settings are \(known.sorted().joined(separator: ", "))")
        }
        guard let path = try string("database") else {
            throw invalid("'database' (the app's SQLite file, or a postgresql:// URL) is required")
        }
        guard let table = try string("table") else { throw invalid("'table' is required") }
        guard let kind = try string("kind") else { throw invalid("'kind' is required") }
        do { try Record.validateKind(kind) } catch let error as ReplicaError { throw invalid(error.message) }
        let account: Account
        switch json["account"] {
        case .string(let id)?: account = .fixed(AccountID(id))
        case .object?:
            guard let column = json["account"]?["column"]?.stringValue else {
                throw invalid("'account' must be an account ID or {\"column\": NAME}")
            }
            account = .column(column)
        default: throw invalid("'account' (an account ID, or {\"column\": NAME}) is required")
        }
        var fields: [String]?
        if let value = json["fields"] {
            guard let list = value.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw invalid("'fields' must be a list of column names")
            }
            fields = list.compactMap(\.stringValue)
        }
        let lowered = path.lowercased()
        let url: URL
        if lowered.hasPrefix("postgresql://") || lowered.hasPrefix("postgres://") {
            guard let parsed = URL(string: path) else { throw invalid("'database' is not a URL libpq can read") }
            url = parsed
        } else {
            url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path)
        }
        return FollowedTable(
            database: url, table: table, kind: kind, account: account, idColumn: try string("id") ?? "id",
            versionColumn: try string("version") ?? "version", deletedColumn: try string("deleted"),
            readersColumn: try string("readers"), modifiedColumn: try string("modified"), fieldColumns: fields)
    }
}

/// How the SQL that follows an app's table names things, the same for a SQLite file and a PostgreSQL
/// database: identifiers and strings quoted, and the triggers' names.
package enum FollowedSQL {
    /// An identifier (a table or column name) quoted.
    package static func quote(_ name: String) -> String { Quoting.enclosed(name, in: "\"") }

    /// A string literal quoted.
    package static func literal(_ text: String) -> String { Quoting.enclosed(text, in: "'") }

    /// A trigger name for the table that is a plain identifier whatever the table is called.
    package static func triggerName(_ table: String, _ event: String) -> String {
        let safe = String(
            table.unicodeScalars.map {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) ? Character($0) : "_"
            })
        var hash: UInt32 = 2_166_136_261
        for byte in table.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return "replica_\(safe)_\(String(hash, radix: 16))_\(event)"
    }
}
