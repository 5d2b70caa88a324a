import Foundation
import ReplicaSQLite

/// The catalog in a SQLite file (`catalog.sqlite` in the store's folder): the default, embedded
/// ``CatalogStorage``. SQLite's errors leave this type as ``ReplicaError``s with code `storage`.
struct SQLiteCatalog: CatalogStorage {
    let database: Database

    static let migrator = Migrator(kind: "catalog", applicationID: 0x5250_4C43, migrations: EmbeddedMigrations.catalog)

    /// Opens (creating if needed) the catalog file at `path` and checks that it is sound.
    ///
    /// - Throws: ``ReplicaError`` with code `newerSchema` for a file a newer replica wrote, and `storage`
    ///   for a damaged or unreadable one (saying what to do) or any other failure of SQLite's.
    init(path: String) throws {
        do {
            database = try Database(path: path, migrator: Self.migrator)
            // A few pages: checking them all costs less than a millisecond, and damage that a later
            // query would meet halfway through a sign-out is found before anything starts.
            let verdict = try database.readNow { try $0.prepare("PRAGMA quick_check").rows { $0.text(0) } }
            if verdict != ["ok"] { throw SQLiteError(code: .corrupt, message: "quick_check found damage", path: path) }
        } catch let error as MigrationError {
            throw ReplicaError(error.code == .newerSchema ? .newerSchema : .storage, error.description, cause: error)
        } catch let error as SQLiteError where error.code.isCorruption {
            throw ReplicaError(
                .storage,
                "the store's catalog (\(path)) is damaged or the disk could not read it. It says which "
                    + "accounts are signed in, so replica reads and changes nothing until it is sound, and has deleted nothing: run "
                    + "the command again; if this repeats, check the disk (dmesg) and restore catalog.sqlite from a backup",
                cause: error)
        } catch let error as SQLiteError {
            throw error.storageError
        }
    }

    // MARK: Accounts

    static func decode(_ row: Statement) -> AccountRecord {
        AccountRecord(
            id: AccountID(row.text(0)),
            state: AccountRecord.State(rawValue: row.text(1)) ?? .signingOut,
            signedInAt: Date(timeIntervalSince1970: row.double(2)),
            directory: row.text(3),
            generation: row.int64(4))
    }

    static func accounts(_ connection: Connection) throws -> [AccountRecord] {
        try connection.cached("SELECT id, state, signed_in_at, directory, generation FROM accounts ORDER BY id").rows {
            decode($0)
        }
    }

    static func account(_ id: AccountID, _ connection: Connection) throws -> AccountRecord? {
        try connection.cached("SELECT id, state, signed_in_at, directory, generation FROM accounts WHERE id = ?")
            .firstRow([.text(id.rawValue)]) { decode($0) }
    }

    /// Inserts an account as signed in, under a generation never used before; returns it.
    static func insertSignedIn(_ id: AccountID, _ connection: Connection) throws -> AccountRecord {
        try connection.execute("UPDATE counters SET value = value + 1 WHERE name = 'sign_in_generation'")
        try connection.execute(
            """
            INSERT INTO accounts(id, directory, state, signed_in_at, generation)
            VALUES (?, ?, 'signedIn', ?, (SELECT value FROM counters WHERE name = 'sign_in_generation'))
            """, [.text(id.rawValue), .text("accounts/" + id.directoryName), .real(Date().timeIntervalSince1970)])
        guard let record = try account(id, connection) else {
            throw ReplicaError(.storage, "account '\(id)' was not found right after it was signed in")
        }
        return record
    }

    func accounts() throws -> [AccountRecord] {
        try database.readStorage { try Self.accounts($0) }
    }

    func account(_ id: AccountID) throws -> AccountRecord? {
        try database.readStorage { try Self.account(id, $0) }
    }

    func signIn(_ id: AccountID) throws -> AccountRecord {
        try database.writeStorage { connection in
            if let record = try Self.account(id, connection) { return record }
            return try Self.insertSignedIn(id, connection)
        }
    }

    func markSigningOut(_ id: AccountID) throws -> Bool {
        try database.writeStorage { connection -> Bool in
            guard try Self.account(id, connection) != nil else { return false }
            try connection.execute("UPDATE accounts SET state = 'signingOut' WHERE id = ?", [.text(id.rawValue)])
            return true
        }
    }

    func markSigningOut(allBut id: AccountID) throws -> [AccountID] {
        try database.writeStorage { connection -> [AccountID] in
            let others = try Self.accounts(connection).filter { $0.id != id }.map(\.id)
            try connection.execute("UPDATE accounts SET state = 'signingOut' WHERE id != ?", [.text(id.rawValue)])
            if try Self.account(id, connection) == nil { _ = try Self.insertSignedIn(id, connection) }
            return others
        }
    }

    func deleteSignedOut(_ id: AccountID) throws {
        try database.writeStorage { connection in
            try connection.execute("DELETE FROM accounts WHERE id = ? AND state = 'signingOut'", [.text(id.rawValue)])
        }
        try translatingSQLiteErrors { try database.checkpointAndTruncate() }
    }

    func dataVersion() throws -> Int {
        try database.readStorage { try $0.scalarInt("PRAGMA data_version") ?? 0 }
    }

    // MARK: Sources

    func addSource(_ definition: SourceDefinition, at date: Date) throws -> SourceDefinition {
        try database.writeStorage { connection in
            // In the same transaction as the insert: a source is never added to an account signed out meanwhile.
            guard try Self.account(definition.account, connection)?.state == .signedIn else {
                throw Self.sourceAccountNotSignedIn(definition.account)
            }
            var definition = definition
            if definition.name.isEmpty {
                let taken = Set(try connection.cached("SELECT name FROM sources").rows { $0.text(0) })
                definition.name = Self.firstFreeName(for: definition.kind, taken: taken)
            }
            try SourceDefinition.validateName(definition.name)
            if try connection.scalarInt("SELECT count(*) FROM sources WHERE name = ?", [.text(definition.name)]) != 0 {
                throw Self.sourceNameTaken(definition.name)
            }
            try connection.execute(
                "INSERT INTO sources(name, kind, account, index_name, settings, added) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    .text(definition.name), .text(definition.kind.rawValue), .text(definition.account.rawValue),
                    .text(definition.indexName), .text(definition.settings.serialized()),
                    .real(date.timeIntervalSince1970),
                ])
            try connection.execute(
                "INSERT INTO source_status(name, state, updated) VALUES (?, 'idle', ?)",
                [.text(definition.name), .real(date.timeIntervalSince1970)])
            return definition
        }
    }

    func sources() throws -> [SourceDefinition] {
        try database.readStorage { connection in
            try connection.cached(
                """
                SELECT s.name, s.kind, s.account, s.index_name, s.settings FROM sources s
                JOIN accounts a ON a.id = s.account WHERE a.state = 'signedIn' ORDER BY s.name
                """
            ).rows { row in
                SourceDefinition(
                    name: row.text(0), kind: SourceKind(rawValue: row.text(1)), account: AccountID(row.text(2)),
                    indexName: row.text(3), settings: (try? JSON.parse(row.text(4))) ?? .object([]))
            }
        }
    }

    func removeSource(named name: String) throws {
        try database.writeStorage { connection in
            try connection.execute("DELETE FROM sources WHERE name = ?", [.text(name)])
        }
    }

    func sourceReport(named name: String) throws -> SourceReport? {
        try database.readStorage { connection in
            try connection.cached(
                "SELECT state, detail, last_error, last_error_at, last_commit, pending FROM source_status WHERE name = ?"
            )
            .firstRow([.text(name)]) { row in
                SourceReport(
                    state: SourceState(rawValue: row.text(0)), detail: row.optionalText(1),
                    lastError: row.optionalText(2),
                    lastErrorAt: row.optionalDouble(3).map(Date.init(timeIntervalSince1970:)),
                    lastCommit: row.optionalDouble(4).map(Date.init(timeIntervalSince1970:)), pending: row.int(5))
            }
        }
    }

    func setSourceState(_ name: String, _ state: SourceState, detail: String?, at date: Date) throws {
        try database.writeStorage { connection in
            try connection.execute(
                "UPDATE source_status SET state = ?, detail = ?, updated = ? WHERE name = ?",
                [.text(state.rawValue), SQLValue(detail), .real(date.timeIntervalSince1970), .text(name)])
        }
    }

    func setSourceError(_ name: String, _ message: String, failedAt: Date, at date: Date) throws {
        try database.writeStorage { connection in
            try connection.execute(
                "UPDATE source_status SET last_error = ?, last_error_at = ?, updated = ? WHERE name = ?",
                [.text(message), .real(failedAt.timeIntervalSince1970), .real(date.timeIntervalSince1970), .text(name)])
        }
    }

    func setSourceCommit(_ name: String, committedAt: Date, at date: Date) throws {
        try database.writeStorage { connection in
            try connection.execute(
                "UPDATE source_status SET last_commit = ?, pending = 0, updated = ? WHERE name = ?",
                [.real(committedAt.timeIntervalSince1970), .real(date.timeIntervalSince1970), .text(name)])
        }
    }

    func setSourcePending(_ name: String, _ count: Int, at date: Date) throws {
        try database.writeStorage { connection in
            try connection.execute(
                "UPDATE source_status SET pending = ?, updated = ? WHERE name = ?",
                [.integer(Int64(count)), .real(date.timeIntervalSince1970), .text(name)])
        }
    }
}
