import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct FollowedTableTests {
    let directory: TemporaryDirectory
    let store: Store
    let app: Connection
    let table: FollowedTable

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.appending("store"))
        for account: AccountID in ["alice", "bob"] { try store.signIn(account) }
        let path = directory.path + "/app.sqlite"
        app = try Connection(path: path)
        try app.execute(
            """
            CREATE TABLE notes (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, revision INTEGER NOT NULL, title TEXT, body TEXT,
                                gone INTEGER NOT NULL DEFAULT 0, internal TEXT);
            CREATE TABLE tasks (id TEXT PRIMARY KEY, revision INTEGER NOT NULL, title TEXT);
            """)
        table = FollowedTable(
            database: URL(fileURLWithPath: path), table: "notes", kind: "note", account: .column("owner"),
            idColumn: "id", versionColumn: "revision", deletedColumn: "gone", fieldColumns: ["title", "body"])
        try store.signIn("alice")
        try store.signIn("bob")
    }

    func engine(_ tables: [FollowedTable]? = nil) -> ProjectionEngine {
        ProjectionEngine(
            store: store, projections: ProjectionSet(indexName: Store.defaultIndexName),
            followedTables: tables ?? [table])
    }

    func found(_ words: String, account: AccountID? = nil) async throws -> [String] {
        var query = SearchQuery(words)
        if let account { query.accounts = [account] }
        return try await store.search(query).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    @Test func insertsUpdatesAndDeletesInTheAppsTableReachTheIndex() async throws {
        try app.execute(
            "INSERT INTO notes(id, owner, revision, title, body) VALUES (1, 'alice', 1, 'Launch plan', 'supplier risk'), (2, 'bob', 1, 'Bob note', 'launch')"
        )
        var report = try await engine().catchUpAllAccounts()
        #expect(report.problems.isEmpty)
        #expect(try await found("launch", account: "alice") == ["note:alice:1"])
        #expect(try await found("launch", account: "bob") == ["note:bob:2"])

        try app.execute("UPDATE notes SET revision = 2, body = 'vendor delay' WHERE id = 1")
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (3, 'alice', 1, 'Third')")
        report = try await engine().catchUpAllAccounts()
        #expect(report.changesApplied == 2)
        #expect(try await found("supplier").isEmpty)
        #expect(try await found("vendor") == ["note:alice:1"])

        try app.execute("DELETE FROM notes WHERE id = 3")
        try app.execute("UPDATE notes SET revision = 2, gone = 1 WHERE id = 2")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("third").isEmpty)
        #expect(try await found("bob").isEmpty, "a soft-deleted row is removed")
        // The app's change log is pruned once every account has applied it.
        #expect(try app.scalarInt("SELECT count(*) FROM replica_changes") == 0)
        // The app's own columns that are not fields stay out of the index.
        try app.execute("UPDATE notes SET revision = 3, internal = 'zzinternal' WHERE id = 1")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("zzinternal").isEmpty)
    }

    /// A row is found by its id whatever the id column's type: integers in a column of integer affinity
    /// or of none, text (one that looks like a number, with a leading zero kept apart), and reals.
    @Test(arguments: [
        ("INTEGER PRIMARY KEY", "(7, 'alice', 1, 'seventh zebra'), (12, 'bob', 1, 'twelfth emu')"),
        (
            "PRIMARY KEY",
            "(7, 'alice', 1, 'seventh zebra'), ('07', 'alice', 1, 'padded gnu'), ('x7', 'bob', 1, 'lettered emu'), (2.5, 'alice', 1, 'half yak')"
        ),
        (
            "TEXT PRIMARY KEY",
            "('07', 'alice', 1, 'padded gnu'), ('x7', 'bob', 1, 'lettered emu'), (7, 'alice', 1, 'seventh zebra')"
        ),
        ("REAL PRIMARY KEY", "(2.5, 'alice', 1, 'half yak'), (7, 'bob', 1, 'seventh zebra')"),
        (
            "NUMERIC",
            "(7, 'alice', 1, 'seventh zebra'), (2.5, 'alice', 1, 'half yak'), ('x7', 'bob', 1, 'lettered emu')"
        ),
    ])
    func rowsAreFoundByIdWhateverTheIdColumnsType(_ declaration: String, _ rows: String) async throws {
        try app.execute(
            "CREATE TABLE items (id \(declaration), owner TEXT NOT NULL, revision INTEGER NOT NULL, title TEXT)")
        let items = FollowedTable(
            database: table.database, table: "items", kind: "thing", account: .column("owner"),
            idColumn: "id", versionColumn: "revision", fieldColumns: ["title"])
        _ = try await engine([items]).catchUpAllAccounts()
        try app.execute("INSERT INTO items(id, owner, revision, title) VALUES \(rows)")
        let report = try await engine([items]).catchUpAllAccounts()
        #expect(report.problems.isEmpty)
        // What each id became in this column, as the app's table holds it.
        let held = try app.cached("SELECT CAST(id AS TEXT), owner, title FROM items").rows([]) {
            ($0.text(0), $0.text(1), $0.text(2))
        }
        #expect(held.count >= 2)
        for (id, owner, title) in held {
            let word = String(title.split(separator: " ")[1])
            #expect(try await found(word) == ["thing:\(owner):\(id)"], "\(declaration): '\(title)' with id \(id)")
        }
        // An update of each is found by its id again.
        try app.execute("UPDATE items SET revision = 2, title = title || ' again'")
        _ = try await engine([items]).catchUpAllAccounts()
        #expect(try await found("again").count == held.count)
    }

    @Test func anOlderVersionNeverOverwritesANewerOneNorRevivesADeletion() async throws {
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 5, 'five')")
        _ = try await engine().catchUpAllAccounts()
        // The app's sync layer writes an older revision late.
        try app.execute("UPDATE notes SET revision = 4, title = 'four' WHERE id = 1")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("five") == ["note:alice:1"])
        #expect(try await found("four").isEmpty)

        try app.execute("DELETE FROM notes WHERE id = 1")
        _ = try await engine().catchUpAllAccounts()
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 3, 'three')")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("three").isEmpty, "a late, older row stays deleted")
        try app.execute("UPDATE notes SET revision = 9, title = 'nine' WHERE id = 1")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("nine") == ["note:alice:1"], "a newer one comes back")
    }

    @Test func aSchemaChangeIsReportedAndTheRestKeepsFlowing() async throws {
        let tasks = FollowedTable(
            database: table.database, table: "tasks", kind: "task", account: .fixed("alice"),
            idColumn: "id", versionColumn: "revision")
        try app.execute("INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'before')")
        try app.execute("INSERT INTO tasks(id, revision, title) VALUES ('t1', 1, 'first task')")
        _ = try await engine([table, tasks]).catchUpAllAccounts()
        #expect(try await found("before") == ["note:alice:1"])

        // The app migrates notes by rebuilding the table without the revision column.
        try app.execute(
            """
            CREATE TABLE notes2 (id INTEGER PRIMARY KEY, owner TEXT, title TEXT, body TEXT, gone INTEGER DEFAULT 0);
            INSERT INTO notes2 SELECT id, owner, title, body, gone FROM notes;
            DROP TABLE notes; ALTER TABLE notes2 RENAME TO notes;
            INSERT INTO notes(id, owner, title) VALUES (2, 'alice', 'after');
            """)
        try app.execute("INSERT INTO tasks(id, revision, title) VALUES ('t2', 1, 'second task')")
        let report = try await engine([table, tasks]).catchUpAllAccounts()
        #expect(report.problems.count == 2, "once per signed-in account")
        #expect(report.problems.first?.contains("table 'notes'") == true)
        #expect(report.problems.first?.contains("no column 'revision'") == true)
        #expect(try await found("second") == ["task:alice:t2"], "the other table kept flowing")
        #expect(try await found("before") == ["note:alice:1"], "what was indexed stays")
        // The checkpoint did not skip anything: once the table is fixed, the new row is found.
        try app.execute("ALTER TABLE notes ADD COLUMN revision INTEGER NOT NULL DEFAULT 1")
        let fixed = try await engine([table, tasks]).catchUpAllAccounts()
        #expect(fixed.problems.isEmpty)
        #expect(try await found("after") == ["note:alice:2"])
    }

    @Test func aTableRecreatedWithoutTheTriggersIsReadInFullAgain() async throws {
        try app.execute(
            "INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'kept'), (2, 'alice', 1, 'dropped')")
        _ = try await engine().catchUpAllAccounts()
        try app.execute(
            """
            CREATE TABLE notes2 AS SELECT * FROM notes WHERE id = 1;
            DROP TABLE notes; ALTER TABLE notes2 RENAME TO notes;
            INSERT INTO notes(id, owner, revision, title, gone) VALUES (3, 'alice', 1, 'added', 0);
            """)
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("kept") == ["note:alice:1"])
        #expect(try await found("added") == ["note:alice:3"])
        #expect(try await found("dropped").isEmpty)
    }

    @Test func onlySignedInAccountsAreFollowedAndTheAppsRowsStay() async throws {
        try app.execute(
            "INSERT INTO notes(id, owner, revision, title) VALUES (1, 'alice', 1, 'alice note'), (2, 'carol', 1, 'carol note')"
        )
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("note") == ["note:alice:1"])
        try await store.switchAccount(to: "bob")
        _ = try await engine().catchUpAllAccounts()
        #expect(try await found("note").isEmpty)
        await #expect(try store.signedInAccounts().map(\.id) == ["bob"])
        #expect(try app.scalarInt("SELECT count(*) FROM notes") == 2, "the app's database is the app's business")
    }
}

/// Names put into the triggers' SQL are quoted scalar by scalar.
@Suite struct SQLQuotingTests {
    @Test func aQuoteWithACombiningMarkIsDoubled() {
        let name = "notes\"\u{035F}; DROP TABLE x; --"
        let quoted = FollowedSQL.quote(name)
        #expect(quoted.unicodeScalars.filter { $0 == "\"" }.count == 4, "\(quoted.debugDescription)")
        #expect(FollowedSQL.literal("it'\u{0301}s").unicodeScalars.filter { $0 == "'" }.count == 4)
    }
}
