import Foundation
import Testing
import Replica
import ReplicaCore
import ReplicaPostgres
import ReplicaTestSupport

/// Searches served by a streaming-replication standby (`Store.Configuration.readDatabase`,
/// `--read-database`), against two real servers the test starts: a write is found by the next search
/// through the standby; a standby held behind sends the search to the primary past the wait; a stopped
/// standby sends searches to the primary.
@Suite(.serialized, .enabled(if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct StandbyTests {
    static func item(_ identifier: String, _ title: String) -> SearchableItem {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = title
        attributes.textContent = "\(title) notes"
        return SearchableItem(uniqueIdentifier: ItemIdentifier(identifier), domainIdentifier: nil, attributeSet: attributes,
                              expirationDate: .distantFuture)
    }

    static func store(_ pair: PostgresStandbyPair, in directory: TemporaryDirectory, replayWait: Duration) throws -> Store {
        var configuration = Store.Configuration()
        configuration.readDatabase = Store.ReadDatabase(url: pair.standbyURL, replayWait: replayWait)
        return try Store(directory: directory.url, database: .postgres(url: pair.primaryURL), configuration: configuration)
    }

    static func found(_ store: Store, _ text: String) async throws -> [String] {
        try await store.search(SearchQuery(text)).map(\.item.uniqueIdentifier.rawValue)
    }

    /// Whether the standby's own tables hold the item (read as its superuser, behind replica's back).
    static func standbyHolds(_ pair: PostgresStandbyPair, _ identifier: String) throws -> Bool {
        let admin = try PostgresConnection(url: pair.standbyAdminURL)
        return try admin.execute("SELECT count(*) FROM replica.items WHERE identifier = $1", [.text(identifier)]).int(0, 0) == 1
    }

    @Test func searchesGoToTheStandbyAndFallBackToThePrimary() async throws {
        let pair = try PostgresStandbyPair()
        let scratch = try TemporaryDirectory()
        // The schema, applied by its owner on the primary; the standby gets it by replaying.
        _ = try Store(directory: scratch.url, database: .postgres(url: pair.ownerURL))
        let admin = try PostgresConnection(url: pair.standbyAdminURL)
        #expect(try admin.execute("SELECT pg_is_in_recovery()").string(0, 0) == "t")

        // A write, then a search in the same process: the standby serves it once it has replayed the write
        // (the wait is long here so that a slow machine cannot send it to the primary).
        let store = try Self.store(pair, in: scratch, replayWait: .seconds(60))
        try await store.signIn("alice")
        try await store.index(account: "alice").indexItems([Self.item("a1", "Harbour tides")])
        #expect(try await Self.found(store, "harbour") == ["a1"])
        let routing = try #require(store.readRouting)
        #expect(routing.servedByStandby >= 1 && routing.servedByPrimaryAfterWaiting == 0 && routing.servedByPrimaryStandbyUnavailable == 0,
                "\(routing)")
        #expect(!routing.replayWaits.isEmpty)

        // The standby held behind (its replay paused): the write is not on it, and the search finds it on
        // the primary once the wait has passed.
        try admin.executeScript("SELECT pg_wal_replay_pause()")
        let impatient = try Self.store(pair, in: scratch, replayWait: .milliseconds(50))
        try await impatient.index(account: "alice").indexItems([Self.item("a2", "Lighthouse keeper")])
        #expect(try await Self.found(impatient, "lighthouse") == ["a2"])
        #expect(try !Self.standbyHolds(pair, "a2"))
        let heldBack = try #require(impatient.readRouting)
        #expect(heldBack.servedByPrimaryAfterWaiting >= 1 && heldBack.servedByStandby == 0, "\(heldBack)")
        try admin.executeScript("SELECT pg_wal_replay_resume()")

        // The command line: the same, through --read-database.
        let cli = try await ReplicaProcess.running(["--store", scratch.path + "/cli", "--database", pair.primaryURL,
                                                    "--read-database", pair.standbyURL, "search", "--account", "alice", "lighthouse"])
        #expect(cli.status == 0 && cli.standardOutput.hasPrefix("a2 — Lighthouse keeper"), "\(cli.standardError)")

        // The standby stopped: searches go to the primary.
        pair.stopStandby()
        try await store.index(account: "alice").indexItems([Self.item("a3", "Harbour master")])
        #expect(Set(try await Self.found(store, "harbour")) == ["a1", "a3"])
        #expect(try #require(store.readRouting).servedByPrimaryStandbyUnavailable >= 1)
    }

    /// A standby named without the database it follows is refused, in the library and on the command line.
    @Test func aReadDatabaseNeedsADatabase() async throws {
        let scratch = try TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.readDatabase = Store.ReadDatabase(url: "postgresql:///replica?host=/nowhere")
        #expect(throws: ReplicaError.self) { try Store(directory: scratch.url, configuration: configuration) }
        let run = try await ReplicaProcess.running(["--store", scratch.path, "--read-database", "postgresql:///replica?host=/nowhere", "status"])
        #expect(run.status == 2 && run.standardError.contains("no database was given"), "\(run.standardError)")
    }
}
