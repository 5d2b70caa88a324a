import Foundation
import ReplicaCore
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// The schema on a server of the tests' own: migrations applied by an owner role, and the role the app
/// connects as held to one account's rows by the database itself, whatever SQL it sends.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct IsolationTests {
    let database: PostgresTestDatabase

    /// Each table of the schema and a column of it that holds an account's words or names.
    static let tables = [
        "items", "index_statistics", "content_types", "client_state", "meta", "checkpoints", "projections",
        "tombstones", "quarantine", "source_entries", "vectors", "embedded", "enrichment", "activities",
    ]

    init() throws {
        database = try PostgresTestServer.makeMigratedDatabase()
    }

    /// An app connection working as `account`, whose partitions it has made.
    func app(as account: String?) throws -> PostgresConnection {
        let connection = try PostgresConnection(url: database.url)
        if let account {
            try connection.execute("SELECT set_config('replica.account', $1, false)", [.text(account)])
            try connection.execute("SELECT replica.add_account()")
        }
        return connection
    }

    func insertItem(_ connection: PostgresConnection, account: String, identifier: String, words: String) throws {
        try connection.execute(
            """
            INSERT INTO replica.items(account, index_name, identifier, expires, attributes, indexed, body, words, length)
            VALUES ($1, 'default', $2, 32503680000, '{}', 0, $3, to_tsvector('simple', $3), 1)
            """, [.text(account), .text(identifier), .text(words)])
    }

    @Test func theAppRoleSeesAndChangesOnlyItsAccountsRows() throws {
        try insertItem(try app(as: "alice"), account: "alice", identifier: "a1", words: "alpine meadow")
        try insertItem(try app(as: "bob"), account: "bob", identifier: "b1", words: "alpine secret")
        let alice = try app(as: "alice")
        #expect(try alice.execute("SELECT count(*) FROM replica.items").int(0, 0) == 1)
        // Crafted to reach bob's rows: each finds nothing, changes nothing.
        #expect(try alice.execute("SELECT count(*) FROM replica.items WHERE account = 'bob'").int(0, 0) == 0)
        #expect(try alice.execute("SELECT count(*) FROM replica.items_matching('default', 'alpine')").int(0, 0) == 1)
        #expect(try alice.execute("UPDATE replica.items SET body = 'x' WHERE account = 'bob'").affectedRows == 0)
        #expect(try alice.execute("DELETE FROM replica.items WHERE identifier = 'b1'").affectedRows == 0)
        let insertForBob = #expect(throws: PostgresError.self) {
            try insertItem(alice, account: "bob", identifier: "b2", words: "planted")
        }
        #expect(insertForBob?.code == .insufficientPrivilege)
        // Moving its own row to bob is refused too.
        #expect(throws: PostgresError.self) { try alice.execute("UPDATE replica.items SET account = 'bob'") }
        for table in Self.tables {
            #expect(
                try alice.execute("SELECT count(*) FROM replica.\(table) WHERE account <> 'alice'").int(0, 0) == 0,
                "\(table)")
        }
        // Without an account named, nothing at all.
        #expect(try app(as: nil).execute("SELECT count(*) FROM replica.items").int(0, 0) == 0)
        let admin = try PostgresConnection(url: database.adminURL)
        #expect(
            try admin.execute("SELECT count(*) FROM replica.items WHERE account = 'bob' AND body = 'alpine secret'")
                .int(0, 0) == 1)
    }

    /// A partition is a table of its own, with its own row-level security: the app's role, naming another
    /// account's partition of any partitioned table, reads and changes none of its rows.
    @Test func anotherAccountsPartitionIsClosedEvenByItsName() throws {
        let bob = try app(as: "bob")
        try insertItem(bob, account: "bob", identifier: "b1", words: "bob secret")
        try bob.execute(
            "INSERT INTO replica.activities(account, index_name, persistent, type, title, date, search, prediction) "
                + "VALUES ('bob', 'default', 'p1', 'view', 'bob seen', 0, true, false)")
        let alice = try app(as: "alice")
        for table in ["items", "vectors", "enrichment", "activities", "records"] {
            let partition = try #require(
                alice.execute("SELECT replica.partition_name($1, 'bob')", [.text(table)]).string(0, 0))
            #expect(try alice.execute("SELECT count(*) FROM replica.\(partition)").int(0, 0) == 0, "\(table)")
            #expect(try alice.execute("DELETE FROM replica.\(partition)").affectedRows == 0, "\(table)")
        }
        let items = try #require(alice.execute("SELECT replica.partition_name('items', 'bob')").string(0, 0))
        #expect(try alice.execute("UPDATE replica.\(items) SET title = 'changed'").affectedRows == 0)
        #expect(try bob.execute("SELECT count(*) FROM replica.\(items) WHERE title = ''").int(0, 0) == 1)
        #expect(
            try bob.execute("SELECT identifier FROM replica.items_matching('default', 'secret')").string(0, 0) == "b1")
        #expect(try alice.execute("SELECT count(*) FROM replica.items_matching('default', 'secret')").int(0, 0) == 0)
    }

    /// replica's statements name the parent tables and run on the account's own partitions: those of every
    /// table `replica.partitioned_tables()` lists, functions and other tables left as they are.
    @Test func statementsRunOnTheAccountsOwnPartitions() throws {
        let alice = try app(as: "alice")
        // The owner's list (the app may not call it: only the functions it needs, AppFunctionsTests).
        let admin = try PostgresConnection(url: database.adminURL)
        let listed = try #require(
            admin.execute("SELECT array_to_string(replica.partitioned_tables(), ',')").string(0, 0))
        #expect(Set(listed.split(separator: ",")) == AccountPartitions.tables)
        let table = try PostgresSignIn.name("alice", on: alice)
        let suffix = try #require(alice.execute("SELECT replica.partition_name('', 'alice')").string(0, 0))
        #expect(
            table.naming(
                "INSERT INTO replica.items(account) SELECT x FROM replica.items_matching($1) JOIN replica.meta AS m ON replica.accounts"
            )
                == "INSERT INTO replica.items\(suffix) AS items(account) SELECT x FROM replica.items_matching($1) JOIN replica.meta\(suffix) AS m "
                + "ON replica.accounts")
        try insertItem(alice, account: "alice", identifier: "a1", words: "alpine meadow")
        #expect(
            try table.run("SELECT count(*) FROM replica.items WHERE account = $1", [.text("alice")], on: alice).int(
                0, 0) == 1)
        #expect(
            try table.run("SELECT count(*) FROM replica.items WHERE items.identifier = 'a1'", [], on: alice).int(0, 0)
                == 1)
    }

    @Test func theAppRoleCannotTurnThePoliciesOff() throws {
        let alice = try app(as: "alice")
        for statement in [
            "ALTER TABLE replica.items DISABLE ROW LEVEL SECURITY",
            "SET row_security = off; SELECT count(*) FROM replica.items",
            "DROP POLICY account_rows ON replica.items", "SET ROLE replica_owner",
        ] {
            #expect(throws: PostgresError.self, "\(statement)") { try alice.executeScript(statement) }
        }
    }

    /// Under a policy PostgreSQL may not use the GIN index for `@@` (it is not LEAKPROOF); the search
    /// function, run as its owner with an explicit account condition, does. Among 3,000 items a rare word
    /// is best found through the index, so a plan that may use it does.
    @Test func searchesByWordsUseTheIndexThroughTheFunction() throws {
        let alice = try app(as: "alice")
        try insertItem(alice, account: "alice", identifier: "a1", words: "alpine meadow")
        // Enough items that a word few of them have is best found through the GIN index.
        try alice.execute(
            """
            INSERT INTO replica.items(account, index_name, identifier, expires, attributes, indexed, body, words, length)
            SELECT 'alice', 'default', 'n' || i, 32503680000, '{}', 0, 'common filler', to_tsvector('simple', 'common filler ' || i), 3
            FROM generate_series(1, 3000) AS i
            """)
        try PostgresConnection(url: database.adminURL).executeScript("ANALYZE replica.items")
        try alice.executeScript("SET enable_seqscan = off")
        let direct = try alice.execute(
            "EXPLAIN SELECT id FROM replica.items WHERE account = 'alice' AND words @@ 'alpine'::tsquery"
        )
        .rows.map { $0.first.flatMap { if case .text(let line) = $0 { line } else { nil } } ?? "" }.joined(
            separator: "\n")
        #expect(
            !direct.contains("items_words") && !direct.contains("words_idx"),
            "under the policy the GIN index is not used:\n\(direct)")
        // What the function runs, as its owner runs it.
        let owner = try PostgresConnection(url: database.adminURL)
        try owner.executeScript(
            "SET ROLE replica_owner; SET enable_seqscan = off; SELECT set_config('replica.account', 'alice', false)")
        let partition = try #require(owner.execute("SELECT replica.partition_name('items', 'alice')").string(0, 0))
        let inside = try owner.execute(
            """
            EXPLAIN SELECT * FROM replica.\(partition) AS items
            WHERE items.account = 'alice' AND items.index_name = 'default' AND items.words @@ 'alpine'::tsquery
            """
        ).rows.map { $0.first.flatMap { if case .text(let line) = $0 { line } else { nil } } ?? "" }.joined(
            separator: "\n")
        #expect(inside.contains("Bitmap Index Scan") && inside.contains("words_idx"), "\(inside)")
        #expect(
            try alice.execute("SELECT identifier FROM replica.items_matching('default', 'alpine')").string(0, 0) == "a1"
        )
    }

    @Test func aNewerSchemaIsRefused() throws {
        let owner = try PostgresConnection(url: database.adminURL)
        try owner.execute(
            "INSERT INTO replica.migrations(version, name) VALUES ($1, 'from-the-future')",
            [.int(Int64(PostgresSchema.newestVersion + 1))])
        #expect { try PostgresSchema.migrate(owner) } throws: { ($0 as? ReplicaError)?.code == .newerSchema }
    }

    /// Signing out drops the account's partitions: after a checkpoint no data file of the database (tables,
    /// indexes, TOAST) holds its words, while another account's stay. The write-ahead log still does until
    /// its segments are recycled (the README says how an operator shortens that).
    @Test func signingOutLeavesNoWordOfTheAccountInTheDataFiles() throws {
        let admin = try PostgresConnection(url: database.adminURL)
        let folder = try #require(
            admin.execute(
                "SELECT current_setting('data_directory') || '/base/' || oid FROM pg_database WHERE datname = current_database()"
            ).string(0, 0))
        try #require(FileManager.default.isReadableFile(atPath: folder), "the test reads the server's files")
        let alice = try app(as: "alice")
        // Words PostgreSQL cannot compress, around the canary: stored out of line, in the TOAST table, as they are.
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let noise = (0..<4000).map { _ in String((0..<8).map { _ in letters.randomElement()! }) }
        let long = (noise[..<2000] + ["zqxalicecanary"] + noise[2000...]).joined(separator: " ")
        for number in 0..<50 {
            try insertItem(
                alice, account: "alice", identifier: "a\(number)", words: number == 0 ? long : "zqxalicecanary note")
        }
        try alice.execute(
            """
            INSERT INTO replica.activities(account, index_name, persistent, type, title, date, search, prediction)
            VALUES ('alice', 'default', 'p1', 'view', 'zqxalicecanary seen', 0, true, false)
            """)
        try alice.execute(
            "INSERT INTO replica.meta(account, index_name, key, value) VALUES ('alice', 'default', 'k', 'v')")
        try insertItem(try app(as: "bob"), account: "bob", identifier: "b1", words: "zqxbobcanary stays")
        try admin.executeScript("CHECKPOINT")
        #expect(
            try Self.files(in: folder, containing: "zqxalicecanary").count > 0,
            "the canary was written where the test looks")

        try alice.execute("SELECT replica.remove_account()")
        try admin.executeScript("CHECKPOINT")
        #expect(try Self.files(in: folder, containing: "zqxalicecanary") == [])
        #expect(try Self.files(in: folder, containing: "zqxbobcanary").count > 0)
        #expect(try admin.execute("SELECT count(*) FROM replica.meta WHERE account = 'alice'").int(0, 0) == 0)
        #expect(try app(as: "bob").execute("SELECT count(*) FROM replica.items").int(0, 0) == 1)
    }

    /// The files under `folder` whose bytes contain `word`.
    static func files(in folder: String, containing word: String) throws -> [String] {
        let needle = Data(word.utf8)
        return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().filter { name in
            guard let data = FileManager.default.contents(atPath: folder + "/" + name) else { return false }
            return data.range(of: needle) != nil
        }
    }

    /// The role the app connects as may not create the schema: it would own the tables (and could turn
    /// their policies off) and the search functions (which would then lose the GIN index).
    @Test func theAppRoleDoesNotCreateTheSchemaAndSaysWhoShould() throws {
        let fresh = try PostgresTestServer.makeDatabase()
        let app = try PostgresConnection(url: fresh.url)
        #expect {
            try PostgresSchema.migrate(app)
        } throws: { error in
            let error = try #require(error as? ReplicaError)
            return error.code == .storage && error.message.contains("replica_owner")
                && error.message.contains("BYPASSRLS")
        }
        #expect(try PostgresSchema.version(app) == 0, "nothing was created")
    }
}
