import Foundation
import ReplicaCore
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaPostgresHome

/// A table of an app's own PostgreSQL database, followed as ``FollowedTableTests`` follows one of SQLite:
/// the same behaviour, with the store on either backend, plus what PostgreSQL adds: transactions that
/// commit in another order than their changes were numbered.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct FollowedPostgresTableTests {
    /// The app's database, with its `notes` table, and the followed table's description.
    struct App {
        let database: PostgresTestDatabase
        let connection: PostgresConnection
        let table: FollowedTable

        init() throws {
            // What an app whose store is on SQLite does to follow a table in PostgreSQL.
            PostgreSQL.enable()
            database = try PostgresTestServer.makeDatabase()
            connection = try PostgresConnection(url: database.url)
            try connection.executeScript(
                """
                CREATE TABLE notes (id bigint PRIMARY KEY, owner text NOT NULL, revision bigint NOT NULL, title text, body text,
                                    gone boolean NOT NULL DEFAULT false, internal text, tags jsonb);
                """)
            table = FollowedTable(
                database: database.postgresURL, table: "notes", kind: "note", account: .column("owner"),
                idColumn: "id", versionColumn: "revision", deletedColumn: "gone",
                fieldColumns: ["title", "body", "tags"])
        }

        func execute(_ sql: String) throws { try connection.executeScript(sql) }

    }

    static func engine(_ store: Store, _ tables: [FollowedTable]) -> ProjectionEngine {
        ProjectionEngine(
            store: store, projections: ProjectionSet(indexName: Store.defaultIndexName), followedTables: tables)
    }

    static func found(_ store: Store, _ words: String, account: AccountID? = nil) async throws -> [String] {
        var query = SearchQuery(words)
        if let account { query.accounts = [account] }
        return try await store.search(query).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    @Test(arguments: TestBackend.available)
    func insertsUpdatesAndDeletesInTheAppsTableReachTheIndex(_ backend: TestBackend) async throws {
        let app = try App()
        let test = try await backend.makeStore(signingIn: "alice", "bob")
        let store = test.store
        let engine = Self.engine(store, [app.table])
        try app.execute(
            "INSERT INTO notes(id, owner, revision, title, body, tags) VALUES (1, 'alice', 1, 'Launch plan', 'supplier risk', '[\"q3\"]'), (2, 'bob', 1, 'Bob note', 'launch', NULL)"
        )
        var report = try await engine.catchUpAllAccounts()
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(try await Self.found(store, "launch", account: "alice") == ["note:alice:1"])
        #expect(try await Self.found(store, "launch", account: "bob") == ["note:bob:2"])

        try app.execute("UPDATE notes SET revision = 2, body = 'vendor delay' WHERE id = 1")
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (3, 'alice', 1, 'Third')")
        report = try await engine.catchUpAllAccounts()
        #expect(report.changesApplied == 2)
        #expect(try await Self.found(store, "supplier").isEmpty)
        #expect(try await Self.found(store, "vendor") == ["note:alice:1"])

        try app.execute("DELETE FROM notes WHERE id = 3")
        try app.execute("UPDATE notes SET revision = 2, gone = true WHERE id = 2")
        // A row moved to another account leaves the first one's index and reaches the other's.
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (4, 'alice', 1, 'Moving box')")
        _ = try await engine.catchUpAllAccounts()
        try app.execute("UPDATE notes SET owner = 'bob', revision = 2 WHERE id = 4")
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(store, "third").isEmpty)
        #expect(try await Self.found(store, "bob").isEmpty, "a soft-deleted row is removed")
        #expect(try await Self.found(store, "moving") == ["note:bob:4"])
        // The app's change log is pruned once every account has applied it.
        #expect(try await app.connection.run("SELECT count(*) FROM replica_changes").int(0, 0) == 0)
        // The app's own columns that are not fields stay out of the index.
        try app.execute("UPDATE notes SET revision = 3, internal = 'zzinternal' WHERE id = 1")
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(store, "zzinternal").isEmpty)
    }

    /// Two of the app's transactions write the table at once: the second waits at the trigger until the
    /// first ends, so the changes are numbered in the order the transactions commit, and nothing is
    /// passed over while the first is still open.
    @Test func writersTakeTurnsSoNoChangeIsPassedOver() async throws {
        let app = try App()
        let test = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        let engine = Self.engine(test.store, [app.table])
        _ = try await engine.catchUpAllAccounts()  // installs the trigger
        let slow = try await PostgresConnection.opening(url: app.database.url)
        try await slow.runScript("BEGIN")
        try await slow.runScript("INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'Slow writer')")
        let url = app.database.url
        let quick = Task.detached {
            try await Blocking.run {
                try PostgresConnection(url: url).executeScript(
                    "INSERT INTO notes(id, owner, revision, title) VALUES (2, 'alice', 1, 'Quick writer')")
            }
        }
        // The quick writer waits for the slow one's turn to end (its insert stays invisible meanwhile).
        let admin = try await PostgresConnection.opening(url: app.database.adminURL)
        #expect(
            try await eventually {
                (try await admin.run(
                    "SELECT count(*) FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid WHERE NOT l.granted AND a.datname = current_database()"
                ).int(0, 0) ?? 0) > 0
            })
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(test.store, "writer").isEmpty, "nothing is committed yet")
        try await slow.runScript("COMMIT")
        try await quick.value
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(test.store, "writer") == ["note:alice:1", "note:alice:2"])
        let numbers = try await app.connection.run("SELECT row_id FROM replica_changes ORDER BY seq")
        #expect((0..<numbers.rowCount).compactMap { numbers.string($0, 0) }.isEmpty, "applied and pruned")
    }

    @Test func onlySignedInAccountsAreFollowedAndTheAppsRowsStay() async throws {
        let app = try App()
        let test = try await TestBackend.sqlite.makeStore(signingIn: "alice", "bob")
        let engine = Self.engine(test.store, [app.table])
        try app.execute(
            "INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'harbour'), (2, 'carol', 1, 'harbour')"
        )
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(test.store, "harbour") == ["note:alice:1"], "carol is not signed in")
        _ = try await test.store.signOut("alice")
        _ = try await engine.catchUpAllAccounts()
        #expect(try await Self.found(test.store, "harbour").isEmpty)
        #expect(
            try await app.connection.run("SELECT count(*) FROM notes").int(0, 0) == 2, "the app's rows are the app's")
    }

    @Test func aMissingColumnIsReportedAndNothingIsSkipped() async throws {
        let app = try App()
        let test = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        let engine = Self.engine(test.store, [app.table])
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'before')")
        _ = try await engine.catchUpAllAccounts()
        try app.execute("ALTER TABLE notes RENAME COLUMN revision TO rev")
        try app.execute("INSERT INTO notes(id, owner, rev, title) VALUES (2, 'alice', 1, 'after')")
        let report = try await engine.catchUpAllAccounts()
        #expect(report.problems.count == 1 && report.problems[0].contains("no column 'revision'"), "\(report.problems)")
        try app.execute("ALTER TABLE notes RENAME COLUMN rev TO revision")
        let fixed = try await engine.catchUpAllAccounts()
        #expect(fixed.problems.isEmpty, "\(fixed.problems)")
        #expect(try await Self.found(test.store, "after") == ["note:alice:2"])
        #expect(try await Self.found(test.store, "before") == ["note:alice:1"])
    }

    /// A running engine hears of a change through the trigger's notification: the listener's wait ends
    /// when a row is written, long before its deadline (a wait that is not woken returns `false`).
    @Test func theTriggerWakesAListeningEngine() async throws {
        let app = try App()
        let test = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        _ = try await Self.engine(test.store, [app.table]).catchUpAllAccounts()  // installs the trigger
        let listener = try #require(FollowedDatabases.listeners(for: [app.table]).first)
        #expect(try await Blocking.run { listener.wait(upTo: .zero) }, "a new connection may have missed changes")
        #expect(try await !Blocking.run { listener.wait(upTo: .zero) }, "nothing changed since")
        let url = app.database.url
        let writer = Task.detached {
            try await Task.sleep(for: .milliseconds(50))
            try await PostgresConnection.opening(url: url).runScript(
                "INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'Bell')")
        }
        #expect(try await Blocking.run { listener.wait(upTo: .seconds(600)) })
        try await writer.value
    }

    /// A `follow` entry of the configuration file names a PostgreSQL table by its URL, taken as it is
    /// (not as a file beside the configuration).
    @Test func aFollowEntryTakesAPostgresURL() throws {
        let entry = try JSON.parse(
            #"{"database": "postgresql://replica_app:pw@db.internal/app", "table": "tasks", "kind": "task", "account": {"column": "owner"}}"#
        )
        let table = try FollowedTable.fromConfiguration(entry, relativeTo: URL(fileURLWithPath: "/etc/replica"))
        #expect(table.isOnPostgres && table.database.absoluteString == "postgresql://replica_app:pw@db.internal/app")
        let file = try FollowedTable.fromConfiguration(
            try JSON.parse(#"{"database": "app.sqlite", "table": "t", "kind": "task", "account": "a"}"#),
            relativeTo: URL(fileURLWithPath: "/etc/replica"))
        #expect(!file.isOnPostgres && file.database.path == "/etc/replica/app.sqlite")
    }

    /// The checkpoint's name holds the server, database and table, never the role or its password.
    @Test func theOwnerNamesNoPassword() throws {
        let table = FollowedTable(
            database: try #require(URL(string: "postgresql://replica_app:s3cret@db.internal:5433/app?sslmode=require")),
            table: "notes", kind: "note", account: .fixed("alice"))
        #expect(table.isOnPostgres)
        #expect(table.owner.rawValue == "table:postgresql://db.internal:5433/app#notes")
        let socket = FollowedTable(
            database: try #require(URL(string: "postgresql:///app?host=/run/pg&password=x&port=5432")),
            table: "notes", kind: "note", account: .fixed("alice"))
        #expect(socket.owner.rawValue == "table:postgresql:///app?host=/run/pg&port=5432#notes")
    }
}
