import Foundation
import Replica
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaPostgresStore

/// The catalog in a PostgreSQL database (`replica.accounts`, `replica.sources`): the ``CatalogStorage`` of
/// a store opened with ``Store/Database/postgres(url:)``, shared by every process of the app.
///
/// Each operation is one transaction on a pool of the catalog's own, so that a check of the catalog made
/// while an index or record write holds a connection never waits for that same pool; a read of one
/// statement is its own transaction (one round trip, not `BEGIN`, the read and `COMMIT`). The client's
/// errors leave this type as ``ReplicaError``s with code `storage`.
struct PostgresCatalog: CatalogStorage {
    let pool: PostgresPool

    private static let accountColumns = "account, state, signed_in_at, directory, generation"

    @discardableResult
    private func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try translatingPostgresErrors {
            try pool.withConnection { connection in try connection.transaction { try body(connection) } }
        }
    }

    /// Runs one statement, which is a transaction of its own: a search reads the catalog several times.
    private func statement<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try translatingPostgresErrors { try pool.withConnection { try body($0) } }
    }

    private static func decode(_ result: PostgresResult) -> [AccountRecord] {
        (0..<result.rowCount).map { row in
            AccountRecord(
                id: AccountID(result.string(row, 0) ?? ""),
                state: AccountRecord.State(rawValue: result.string(row, 1) ?? "") ?? .signingOut,
                signedInAt: Date(timeIntervalSince1970: result.double(row, 2) ?? 0),
                directory: result.string(row, 3) ?? "",
                generation: result.int(row, 4) ?? 0)
        }
    }

    private static func account(_ id: AccountID, _ connection: PostgresConnection) throws -> AccountRecord? {
        decode(
            try connection.execute(
                "SELECT \(accountColumns) FROM replica.accounts WHERE account = $1", [.text(id.rawValue)])
        ).first
    }

    /// Inserts the account as signed in under a generation never given before, unless another process
    /// just did, and makes its partitions; returns its entry.
    private static func insertSignedIn(_ id: AccountID, _ connection: PostgresConnection) throws -> AccountRecord {
        try connection.execute(
            """
            INSERT INTO replica.accounts(account, directory, state, signed_in_at, generation)
            VALUES ($1, $2, 'signedIn', $3, nextval('replica.sign_in_generations')) ON CONFLICT (account) DO NOTHING
            """, [.text(id.rawValue), .text("accounts/" + id.directoryName), .double(Date().timeIntervalSince1970)])
        try PostgresSignIn.name(id, on: connection)
        try connection.execute("SELECT replica.add_account()")
        guard let record = try account(id, connection) else {
            throw ReplicaError(.storage, "account '\(id)' was not found right after it was signed in")
        }
        return record
    }

    // MARK: Accounts

    func accounts() throws -> [AccountRecord] {
        try statement {
            Self.decode(try $0.execute("SELECT \(Self.accountColumns) FROM replica.accounts ORDER BY account"))
        }
    }

    func account(_ id: AccountID) throws -> AccountRecord? {
        try statement { try Self.account(id, $0) }
    }

    func signIn(_ id: AccountID) throws -> AccountRecord {
        try transaction { connection in
            if let record = try Self.account(id, connection) { return record }
            return try Self.insertSignedIn(id, connection)
        }
    }

    func markSigningOut(_ id: AccountID) throws -> Bool {
        // The update waits for every write to the account that checked its sign-in (they hold its row in
        // share mode) to commit; a write that starts after this commits fails its check.
        try transaction { connection in
            try connection.execute(
                "UPDATE replica.accounts SET state = 'signingOut' WHERE account = $1", [.text(id.rawValue)]
            ).affectedRows > 0
        }
    }

    func markSigningOut(allBut id: AccountID) throws -> [AccountID] {
        try transaction { connection in
            let others = Self.decode(
                try connection.execute(
                    "SELECT \(Self.accountColumns) FROM replica.accounts WHERE account <> $1 ORDER BY account",
                    [.text(id.rawValue)]))
            try connection.execute(
                "UPDATE replica.accounts SET state = 'signingOut' WHERE account <> $1", [.text(id.rawValue)])
            if try Self.account(id, connection) == nil { _ = try Self.insertSignedIn(id, connection) }
            return others.map(\.id)
        }
    }

    func deleteSignedOut(_ id: AccountID) throws {
        try transaction { connection in
            try connection.execute(
                "DELETE FROM replica.accounts WHERE account = $1 AND state = 'signingOut'", [.text(id.rawValue)])
        }
    }

    func dataVersion() throws -> Int {
        try statement { Int(try $0.execute("SELECT version FROM replica.catalog_version").firstInt ?? 0) }
    }

    // MARK: Sources

    func addSource(_ definition: SourceDefinition, at date: Date) throws -> SourceDefinition {
        try transaction { connection in
            // In the same transaction as the insert, holding the account's row: a source is never added to an
            // account signed out meanwhile.
            let state = try connection.execute(
                "SELECT state FROM replica.accounts WHERE account = $1 FOR SHARE",
                [.text(definition.account.rawValue)]
            ).firstString
            guard state == AccountRecord.State.signedIn.rawValue else {
                throw Self.sourceAccountNotSignedIn(definition.account)
            }
            var definition = definition
            if definition.name.isEmpty {
                let names = try connection.execute("SELECT name FROM replica.sources")
                definition.name = Self.firstFreeName(
                    for: definition.kind, taken: Set((0..<names.rowCount).compactMap { names.string($0, 0) }))
            }
            try SourceDefinition.validateName(definition.name)
            let inserted = try connection.execute(
                """
                INSERT INTO replica.sources(account, name, kind, index_name, settings, added, updated) VALUES ($1, $2, $3, $4, $5, $6, $6)
                ON CONFLICT (name) DO NOTHING
                """,
                [
                    .text(definition.account.rawValue), .text(definition.name), .text(definition.kind.rawValue),
                    .text(definition.indexName), .text(definition.settings.serialized()),
                    .double(date.timeIntervalSince1970),
                ])
            guard inserted.affectedRows == 1 else { throw Self.sourceNameTaken(definition.name) }
            return definition
        }
    }

    func sources() throws -> [SourceDefinition] {
        try transaction { connection in
            let result = try connection.execute(
                """
                SELECT s.name, s.kind, s.account, s.index_name, s.settings FROM replica.sources s
                JOIN replica.accounts a ON a.account = s.account WHERE a.state = 'signedIn' ORDER BY s.name
                """)
            return (0..<result.rowCount).map { row in
                SourceDefinition(
                    name: result.string(row, 0) ?? "", kind: SourceKind(rawValue: result.string(row, 1) ?? ""),
                    account: AccountID(result.string(row, 2) ?? ""), indexName: result.string(row, 3) ?? "",
                    settings: (try? JSON.parse(result.string(row, 4) ?? "")) ?? .object([]))
            }
        }
    }

    func removeSource(named name: String) throws {
        try transaction { try $0.execute("DELETE FROM replica.sources WHERE name = $1", [.text(name)]) }
    }

    func sourceReport(named name: String) throws -> SourceReport? {
        try transaction { connection in
            let result = try connection.execute(
                "SELECT state, detail, last_error, last_error_at, last_commit, pending FROM replica.sources WHERE name = $1",
                [.text(name)])
            guard result.rowCount == 1 else { return nil }
            return SourceReport(
                state: SourceState(rawValue: result.string(0, 0) ?? ""), detail: result.string(0, 1),
                lastError: result.string(0, 2), lastErrorAt: result.double(0, 3).map(Date.init(timeIntervalSince1970:)),
                lastCommit: result.double(0, 4).map(Date.init(timeIntervalSince1970:)),
                pending: Int(result.int(0, 5) ?? 0))
        }
    }

    func setSourceState(_ name: String, _ state: SourceState, detail: String?, at date: Date) throws {
        try transaction {
            try $0.execute(
                "UPDATE replica.sources SET state = $1, detail = $2, updated = $3 WHERE name = $4",
                [.text(state.rawValue), PostgresValue(detail), .double(date.timeIntervalSince1970), .text(name)])
        }
    }

    func setSourceError(_ name: String, _ message: String, failedAt: Date, at date: Date) throws {
        try transaction {
            try $0.execute(
                "UPDATE replica.sources SET last_error = $1, last_error_at = $2, updated = $3 WHERE name = $4",
                [
                    .text(message), .double(failedAt.timeIntervalSince1970), .double(date.timeIntervalSince1970),
                    .text(name),
                ])
        }
    }

    func setSourceCommit(_ name: String, committedAt: Date, at date: Date) throws {
        try transaction {
            try $0.execute(
                "UPDATE replica.sources SET last_commit = $1, pending = 0, updated = $2 WHERE name = $3",
                [.double(committedAt.timeIntervalSince1970), .double(date.timeIntervalSince1970), .text(name)])
        }
    }

    func setSourcePending(_ name: String, _ count: Int, at date: Date) throws {
        try transaction {
            try $0.execute(
                "UPDATE replica.sources SET pending = $1, updated = $2 WHERE name = $3",
                [.int(Int64(count)), .double(date.timeIntervalSince1970), .text(name)])
        }
    }
}

extension PostgresError: StorageFailure {
    /// Whether the server's disk was full.
    package var isOutOfSpace: Bool { code == .diskFull }

    /// The kind of failure, such as `diskFull`.
    package var summary: String { code.description }

    /// The server's message in words, with the statement's kind but never its parameters.
    package var explanation: String { description }
}
