import Foundation
import ReplicaPostgres
import ReplicaPostgresHome
import ReplicaPostgresStore
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// What is particular to a store kept in PostgreSQL: several `Store` values (several app processes) on
/// one database, nothing of an account's content on the local disk, a sign-out that removes every row of
/// the account and waits for the writes that checked their sign-in, and the schema's owner. What both
/// homes share is tested on both by the suites that take a backend as their argument.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct PostgresStoreTests {
    let database: PostgresTestDatabase
    let first: TemporaryDirectory
    let second: TemporaryDirectory

    init() throws {
        database = try PostgresTestServer.makeMigratedDatabase()
        first = try TemporaryDirectory()
        second = try TemporaryDirectory()
    }

    func store(_ directory: TemporaryDirectory) throws -> Store {
        try Store(directory: directory.url, database: .postgres(url: database.url))
    }

    /// Every row of `account` in replica's tables, and its partitions, counted as the superuser (no
    /// policy applies to it).
    func leftovers(of account: String) throws -> [String: Int64] {
        let admin = try PostgresConnection(url: database.adminURL)
        let tables = try admin.execute(
            """
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
            WHERE n.nspname = 'replica' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND a.attname = 'account'
            """)
        var found: [String: Int64] = [:]
        for row in 0..<tables.rowCount {
            let table = tables.string(row, 0)!
            let count =
                try admin.execute("SELECT count(*) FROM replica.\(table) WHERE account = $1", [.text(account)]).int(
                    0, 0) ?? 0
            if count > 0 { found[table] = count }
        }
        let partitions =
            try admin.execute(
                """
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'replica' AND c.relispartition AND pg_get_expr(c.relpartbound, c.oid) = format('FOR VALUES IN (%L)', $1::text)
                """, [.text(account)]
            ).int(0, 0) ?? 0
        if partitions > 0 { found["partitions"] = partitions }
        return found
    }

    @Test func twoStoresOnOneDatabaseSeeEachOthersWritesAndSignOuts() async throws {
        let app = try store(first)
        let other = try store(second)
        try await app.signIn("alice")
        let index = try await app.index(named: "notes", account: "alice")
        try await index.indexItems([Fixtures.item("n1", title: "Launch plan", text: "the quarterly launch is at risk")])

        #expect(try await other.signedInAccounts().map(\.id) == ["alice"])
        #expect(try await other.indexNames(for: "alice") == ["notes"])
        #expect(try await other.search(SearchQuery("launch risk")).map(\.item.uniqueIdentifier) == ["n1"])

        try await other.signOut("alice")
        await #expect(
            performing: { try await index.indexItems([Fixtures.item("n2", text: "written late")]) },
            throws: { ($0 as? ReplicaError)?.code == .accountNotSignedIn })
        #expect(try await app.search(SearchQuery("launch")).isEmpty)
        #expect(try leftovers(of: "alice") == [:])
    }

    @Test func recordsAndTheirIndexLeaveNothingBehindAtSignOut() async throws {
        let app = try store(first)
        try await app.signIn("alice")
        try await app.signIn("bob")
        try await app.records.write([
            Record(account: "alice", kind: "note", id: "1", version: 1, fields: [("title", .string("Canary"))])
        ])
        try await ProjectionEngine(store: app, projections: ProjectionSet(indexName: Store.defaultIndexName)).catchUp(
            account: "alice")
        #expect(try await app.search(SearchQuery("canary")).count == 1)
        #expect(try leftovers(of: "alice")["records"] == 1)

        try await app.switchAccount(to: "bob")
        #expect(try leftovers(of: "alice") == [:])
        #expect(try await app.signedInAccounts().map(\.id) == ["bob"])
    }

    /// A sign-out through the store removes the account's words from every data file of the database
    /// (tables, indexes, TOAST) at the next checkpoint, records and items alike, and leaves the other
    /// account's. The write-ahead log still holds them until its segments are recycled: the test says
    /// how many of its files do, as docs/postgres.md does.
    @Test func signingOutLeavesNoWordOfTheAccountInTheDataFiles() async throws {
        let admin = try await PostgresConnection.opening(url: database.adminURL)
        let data = try #require(try await admin.run("SELECT current_setting('data_directory')").string(0, 0))
        let oid = try await admin.run("SELECT oid FROM pg_database WHERE datname = current_database()")
        let folder = data + "/base/" + (try #require(oid.string(0, 0)))
        try #require(FileManager.default.isReadableFile(atPath: folder), "the test reads the server's files")
        let app = try store(first)
        let engine = ProjectionEngine(store: app, projections: ProjectionSet(indexName: Store.defaultIndexName))
        for account: AccountID in ["alice", "bob"] {
            let canary = "zqx\(account)canary"
            try await app.signIn(account)
            try await app.index(named: "notes", account: account).indexItems([
                Fixtures.item("n1", title: canary, text: "\(canary) body")
            ])
            try await app.records.write([
                Record(account: account, kind: "note", id: "1", version: 1, fields: [("title", .string(canary))])
            ])
            try await engine.catchUp(account: account)
        }
        try await admin.runScript("CHECKPOINT")
        func files(containing word: String, in folder: String) throws -> [String] {
            let needle = Data(word.utf8)
            return try FileManager.default.contentsOfDirectory(atPath: folder).sorted().filter { name in
                FileManager.default.contents(atPath: folder + "/" + name)?.range(of: needle) != nil
            }
        }
        #expect(
            try files(containing: "zqxalicecanary", in: folder).count > 0, "the canary was written where the test looks"
        )

        try await app.signOut("alice")
        try await admin.runScript("CHECKPOINT")
        #expect(try files(containing: "zqxalicecanary", in: folder) == [])
        #expect(try files(containing: "zqxbobcanary", in: folder).count > 0)
        let wal = try files(containing: "zqxalicecanary", in: data + "/pg_wal")
        print(
            "after the sign-out and a checkpoint, \(wal.count) write-ahead log file(s) still hold the signed-out account's words"
        )
    }

    /// Writers of one account in two stores (two processes) at once, while a third follows the change log:
    /// the log's numbers follow the commits' order, so a follower that has seen a number has seen every
    /// change before it, and none is skipped. (Numbers taken from a shared sequence would be given before
    /// the commits, out of their order, and a follower could pass a change that commits late.)
    @Test func aFollowerSkipsNoChangeOfWritersCommittingAtOnce() async throws {
        let writers = [try store(first), try store(second)]
        try await writers[0].signIn("alice")
        let follower = try store(try TemporaryDirectory())
        let engine = ProjectionEngine(store: follower, projections: ProjectionSet(indexName: Store.defaultIndexName))
        // Following from the start: every write below reaches the index through the log, none through a rebuild.
        try await engine.catchUp(account: "alice")
        let writersDone = Atomic<Bool>(false)
        let perWriter = 60
        async let following: Void = {
            while !writersDone.load(ordering: .acquiring) { try await engine.catchUp(account: "alice") }
        }()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (number, writer) in writers.enumerated() {
                group.addTask {
                    for id in 0..<perWriter {
                        try await writer.records.write([
                            Record(
                                account: "alice", kind: "note", id: "\(number)-\(id)", version: 1,
                                fields: [("title", .string("note \(number) \(id)"))])
                        ])
                    }
                }
            }
            try await group.waitForAll()
        }
        writersDone.store(true, ordering: .releasing)
        try await following
        // What the follower applied while the writers ran, and nothing after: a skipped change would be
        // missing for good, since the checkpoint has passed it.
        try await engine.catchUp(account: "alice")
        #expect(try await follower.index(account: "alice").itemCount() == writers.count * perWriter)
    }

    @Test func nothingOfAnAccountIsWrittenToTheLocalFolder() async throws {
        let app = try store(first)
        try await app.signIn("alice")
        let index = try await app.index(account: "alice")
        try await index.indexItems([Fixtures.item("n1", text: "kept in the database")])
        try await app.records.write([
            Record(account: "alice", kind: "note", id: "1", version: 1, fields: [("title", .string("Database"))])
        ])
        #expect(first.allFiles() == [])
    }

    /// Recording a sign-out waits for a write that checked its sign-in (it holds the account's catalog row
    /// in share mode); the write commits, then the sign-out removes what it wrote.
    @Test func aSignOutWaitsForAWriteThatCheckedItsSignIn() async throws {
        let app = try store(first)
        let record = try await app.signIn("alice")
        let writer = try await PostgresConnection.opening(url: database.url)
        try await writer.runScript("BEGIN")
        try await writer.run("SELECT set_config('replica.account', 'alice', true)")
        try await writer.run(
            "SELECT 1 FROM replica.accounts WHERE account = 'alice' AND generation = $1 AND state = 'signedIn' FOR SHARE",
            [.int(record.generation)])
        try await writer.run(
            "INSERT INTO replica.meta(account, index_name, key, value) VALUES ('alice', 'late', 'created', '1')")

        let signOut = Task { try await app.signOut("alice") }
        // The sign-out's update is seen waiting for the writer's lock before the writer commits.
        let admin = try await PostgresConnection.opening(url: database.adminURL)
        let waiting = try await eventually {
            try await admin.run(
                """
                SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE replica.accounts%'
                """, [.text(database.name)]
            ).int(0, 0) == 1
        }
        #expect(waiting, "the sign-out waits for the write's lock")
        try await writer.runScript("COMMIT")
        #expect(try await signOut.value)
        #expect(try leftovers(of: "alice") == [:])
    }

    /// A read names the account's own partitions. A sign-out that commits between the read's check of its
    /// sign-in and its statements drops them: the read ends as one begun after the sign-out would, not with
    /// the database's "relation does not exist".
    @Test func aReadOvertakenByASignOutEndsAsSignedOut() async throws {
        let app = try store(first)
        let record = try await app.signIn("alice")
        try await app.index(named: "notes", account: "alice").indexItems([
            Fixtures.item("n1", text: "the quarterly launch")
        ])
        let storage = try await Blocking.run { [database] in
            try PostgresIndexStorage(
                pool: PostgresPool(url: database.url, maximumConnections: 1), account: "alice", indexName: "notes",
                generation: record.generation)
        }
        #expect(try await storage.read(now: Date(), prepare: {}) { try $0.count() } == 1)

        let other = try store(second)
        await #expect(
            performing: {
                // `prepare` runs in the read's transaction, after its check.
                try await storage.read(now: Date(), prepare: { _ = try other.signOut("alice") }) { try $0.count() }
            }, throws: { ($0 as? ReplicaError)?.code == .accountNotSignedIn })
        #expect(try leftovers(of: "alice") == [:])
    }

    @Test func theAppRoleOnADatabaseWithoutTheSchemaIsToldWhoCreatesIt() throws {
        let empty = try PostgresTestServer.makeDatabase()
        #expect {
            try Store(directory: first.url, database: .postgres(url: empty.url))
        } throws: { error in
            let error = error as? ReplicaError
            return error?.code == .storage && error?.message.contains("replica_owner") == true
        }
    }

    @Test func statusNamesTheDatabaseWithoutItsPassword() async throws {
        let app = try store(first)
        try await app.signIn("alice")
        let status = try await app.status()
        let described = try #require(status.database)
        #expect(described.contains(database.name))
        #expect(!described.contains(database.parameters["password"] ?? "no password"))
    }
}
