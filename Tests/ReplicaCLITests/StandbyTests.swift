import Foundation
import Replica
import ReplicaCore
import ReplicaPostgres
import ReplicaPostgresHome
import ReplicaTestSupport
import Testing

/// Searches served by a streaming-replication standby (`Store.Configuration.readDatabase`,
/// `--read-database`), against two real servers the test starts: a write is found by the next search
/// through the standby; a standby held behind sends the search to the primary past the wait; a stopped
/// standby sends searches to the primary; a paused or late standby is passed over; a wrong one is said.
@Suite(
    .serialized,
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct StandbyTests {
    static func item(_ identifier: String, _ title: String) -> SearchableItem {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = title
        attributes.textContent = "\(title) notes"
        return SearchableItem(
            uniqueIdentifier: ItemIdentifier(identifier), domainIdentifier: nil, attributeSet: attributes,
            expirationDate: .distantFuture)
    }

    static func store(
        _ pair: PostgresStandbyPair, in directory: TemporaryDirectory, replayWait: Duration,
        maximumLag: Duration = .seconds(1),
        events: Recorder<StoreEvent>? = nil
    ) throws -> Store {
        var configuration = Store.Configuration()
        configuration.readDatabase = Store.ReadDatabase(
            url: pair.standbyURL, replayWait: replayWait, maximumLag: maximumLag)
        if let events { configuration.events = { events.append($0) } }
        return try Store(
            directory: directory.url, database: .postgres(url: pair.primaryURL), configuration: configuration)
    }

    /// Makes the standby apply each transaction `delay` after its commit (`recovery_min_apply_delay`):
    /// it receives the log at once and replays it late, as a slow standby does. The standby's startup
    /// process takes the setting at its own pace, so this returns once it is seen holding a commit back
    /// (waiting on `RecoveryApplyDelay`), a new commit made on the primary until it is.
    static func delayReplay(_ pair: PostgresStandbyPair, by delay: String) async throws {
        let admin = try await PostgresConnection.opening(url: pair.standbyAdminURL)
        try await admin.runScript("ALTER SYSTEM SET recovery_min_apply_delay = '\(delay)'")
        try await admin.runScript("SELECT pg_reload_conf()")
        guard delay != "0" else { return }
        let primary = try await PostgresConnection.opening(url: pair.primaryAdminURL)
        let held = try await eventually {
            try await primary.runScript("SELECT pg_current_xact_id()")
            return try await eventually(timeout: 2) {
                try await admin.run("SELECT wait_event FROM pg_stat_activity WHERE backend_type = 'startup'").string(
                    0, 0)
                    == "RecoveryApplyDelay"
            }
        }
        try #require(held, "the standby never held a commit back for recovery_min_apply_delay")
    }

    /// Waits until the standby has replayed everything the primary has written.
    static func caughtUp(_ pair: PostgresStandbyPair) async throws -> Bool {
        let primary = try await PostgresConnection.opening(url: pair.primaryAdminURL)
        let standby = try await PostgresConnection.opening(url: pair.standbyAdminURL)
        let current = try await primary.run("SELECT pg_current_wal_lsn()::text").string(0, 0)
        let written = try #require(current.flatMap(WALPosition.init(text:)))
        return try await eventually {
            guard let text = try await standby.run("SELECT pg_last_wal_replay_lsn()::text").string(0, 0),
                let replayed = WALPosition(text: text)
            else {
                return false
            }
            return replayed >= written
        }
    }

    static func found(_ store: Store, _ text: String) async throws -> [String] {
        try await store.search(SearchQuery(text)).map(\.item.uniqueIdentifier.rawValue)
    }

    /// Whether the standby's own tables hold the item (read as its superuser, behind replica's back).
    static func standbyHolds(_ pair: PostgresStandbyPair, _ identifier: String) throws -> Bool {
        let admin = try PostgresConnection(url: pair.standbyAdminURL)
        return try admin.execute("SELECT count(*) FROM replica.items WHERE identifier = $1", [.text(identifier)]).int(
            0, 0) == 1
    }

    @Test func searchesGoToTheStandbyAndFallBackToThePrimary() async throws {
        let pair = try PostgresStandbyPair()
        let scratch = try TemporaryDirectory()
        // The schema, applied by its owner on the primary; the standby gets it by replaying.
        _ = try Store(directory: scratch.url, database: .postgres(url: pair.ownerURL))
        let admin = try await PostgresConnection.opening(url: pair.standbyAdminURL)
        #expect(try await admin.run("SELECT pg_is_in_recovery()").string(0, 0) == "t")

        // A write, then a search in the same process: the standby serves it once it has replayed the write
        // (the wait is long here so that a slow machine cannot send it to the primary).
        let store = try Self.store(pair, in: scratch, replayWait: .seconds(60))
        try await store.signIn("alice")
        try await store.index(account: "alice").indexItems([Self.item("a1", "Harbour tides")])
        #expect(try await Self.found(store, "harbour") == ["a1"])
        let routing = try #require(store.readRouting)
        #expect(
            routing.servedByStandby >= 1 && routing.servedByPrimaryAfterWaiting == 0
                && routing.servedByPrimaryStandbyUnavailable == 0,
            "\(routing)")
        #expect(!routing.replayWaits.isEmpty)

        // Log just received (this process's write) is not lag, however long ago the standby's last
        // replayed commit was: here longer than a maximum lag of a millisecond.
        let strict = try Self.store(pair, in: scratch, replayWait: .seconds(60), maximumLag: .milliseconds(1))
        try await strict.index(account: "alice").indexItems([Self.item("a0", "Pilot boat")])
        #expect(try await Self.found(strict, "pilot") == ["a0"])
        let strictRouting = try #require(strict.readRouting)
        #expect(
            strictRouting.servedByStandby >= 1 && strictRouting.servedByPrimaryStandbyStale == 0, "\(strictRouting)")

        // The standby held behind (it applies the log ten minutes late, so that a busy machine cannot
        // outwait the delay between the write and the check; and it may be an hour behind): the write
        // is not on it, and the search finds it on the primary once the wait has passed.
        try await Self.delayReplay(pair, by: "600s")
        let impatient = try Self.store(pair, in: scratch, replayWait: .milliseconds(50), maximumLag: .seconds(3_600))
        try await impatient.index(account: "alice").indexItems([Self.item("a2", "Lighthouse keeper")])
        #expect(try await Self.found(impatient, "lighthouse") == ["a2"])
        #expect(try !Self.standbyHolds(pair, "a2"))
        let heldBack = try #require(impatient.readRouting)
        #expect(
            heldBack.servedByPrimaryAfterWaiting >= 1 && heldBack.servedByStandby == 0
                && heldBack.servedByPrimaryStandbyStale == 0,
            "\(heldBack)")
        try await Self.delayReplay(pair, by: "0")

        // The command line: the same, through --read-database.
        let cli = try await ReplicaProcess.running([
            "--store", scratch.path + "/cli", "--database", pair.primaryURL,
            "--read-database", pair.standbyURL, "search", "--account", "alice", "lighthouse",
        ])
        #expect(cli.status == 0 && cli.standardOutput.hasPrefix("a2 — Lighthouse keeper"), "\(cli.standardError)")

        // The standby stopped: searches go to the primary.
        pair.stopStandby()
        try await store.index(account: "alice").indexItems([Self.item("a3", "Harbour master")])
        #expect(Set(try await Self.found(store, "harbour")) == ["a1", "a3"])
        #expect(try #require(store.readRouting).servedByPrimaryStandbyUnavailable >= 1)
    }

    /// A standby whose replay is paused, or that applies the log late (past the maximum lag), is stale: its
    /// reads go to the primary, so no face (search, get, query, suggest, the tool) returns an item deleted
    /// or an old title; the reason is said once, and status shows the standby's state and lag.
    @Test func aStaleStandbyIsPassedOverAndSaysSo() async throws {
        let pair = try PostgresStandbyPair()
        let scratch = try TemporaryDirectory()
        let writer = try Store(
            directory: scratch.url.appendingPathComponent("writer"), database: .postgres(url: pair.ownerURL))
        try await writer.signIn("alice")
        try await writer.index(account: "alice").indexItems([
            Self.item("t1", "Harbour tides"), Self.item("k1", "Lighthouse keeper"),
        ])
        #expect(try await Self.caughtUp(pair))

        let events = Recorder<StoreEvent>()
        // Its lag allowed generously: what makes it stale here is the pause (a loaded CI machine once
        // left the caught-up standby's check past a 1 s lag before the pause; the lag is tested below).
        let reader = try Self.store(
            pair, in: try TemporaryDirectory(), replayWait: .milliseconds(50), maximumLag: .seconds(30),
            events: events)
        #expect(try await Self.found(reader, "lighthouse") == ["k1"])
        #expect(try #require(reader.readRouting).servedByStandby >= 1)
        #expect(try await #require(reader.standbyStatus()).state == .serving)

        // Paused: another process retitles one item and deletes the other; once the standby is asked again
        // (status asks it now; reads do after a quarter of a second), every read sees the change.
        let admin = try await PostgresConnection.opening(url: pair.standbyAdminURL)
        try await admin.runScript("SELECT pg_wal_replay_pause()")
        try await writer.index(account: "alice").indexItems([Self.item("t1", "Harbour festival")])
        try await writer.index(account: "alice").deleteItems(withIdentifiers: ["k1"])
        let paused = try #require(await reader.standbyStatus())
        #expect(paused.state == .stale && paused.reason?.contains("paused") == true, "\(paused)")
        #expect(try await Self.found(reader, "lighthouse") == [])
        #expect(try await Self.found(reader, "festival") == ["t1"])
        #expect(
            try await reader.fetchItems(withIdentifiers: ["k1", "t1"], account: "alice").map(\.item.attributeSet.title)
                == ["Harbour festival"])
        #expect(try #require(reader.readRouting).servedByPrimaryStandbyStale >= 2)
        #expect(events.all.filter { $0.kind == .standbyPassedOver }.count == 1, "\(events.all.map(\.message))")

        // The command line, with the standby alone to read from: each face answers from the primary, and
        // the reason is said once on standard error.
        let cliStore = scratch.path + "/cli"
        func cli(_ arguments: String...) async throws -> ProcessResult {
            try await ReplicaProcess.running(
                ["--store", cliStore, "--database", pair.primaryURL, "--read-database", pair.standbyURL] + arguments)
        }
        let search = try await cli("search", "--account", "alice", "lighthouse festival")
        #expect(
            search.status == 0 && search.standardOutput.hasPrefix("t1 — Harbour festival")
                && !search.standardOutput.contains("k1"),
            "\(search.standardOutput)\(search.standardError)")
        #expect(search.standardError.components(separatedBy: "replay is paused").count == 2, "\(search.standardError)")
        let get = try await cli("get", "--account", "alice", "k1")
        #expect(get.status == 1, "\(get.standardOutput)")
        let tool = try await cli("tool", "call", #"{"query": "lighthouse festival"}"#)
        #expect(
            tool.status == 0 && tool.standardOutput.contains("t1") && !tool.standardOutput.contains("k1"),
            "\(tool.standardOutput)")
        let status = try await cli("status")
        #expect(status.standardOutput.contains("read database: a standby, stale"), "\(status.standardOutput)")

        // Resumed, it serves again; then made to apply the log ten minutes late, it is behind past its lag.
        try await admin.runScript("SELECT pg_wal_replay_resume()")
        #expect(try await Self.caughtUp(pair))
        let fresh = try Self.store(pair, in: try TemporaryDirectory(), replayWait: .milliseconds(50))
        #expect(try await #require(fresh.standbyStatus()).state == .serving)
        try await Self.delayReplay(pair, by: "600s")
        try await writer.index(account: "alice").indexItems([Self.item("t1", "Harbour regatta")])
        #expect(try await eventually { try await fresh.standbyStatus()?.state == .stale })
        #expect(try await Self.found(fresh, "regatta") == ["t1"])
        let behind = try #require(await fresh.standbyStatus())
        #expect(behind.reason?.contains("behind") == true && (behind.lag ?? .zero) > .seconds(1), "\(behind)")

        // Cut off from its primary (no WAL receiver), it cannot tell how far behind it is: stale too.
        try await Self.delayReplay(pair, by: "0")
        #expect(try await Self.caughtUp(pair))
        #expect(try await eventually { try await fresh.standbyStatus()?.state == .serving })
        try await admin.runScript("ALTER SYSTEM SET primary_conninfo = ''")
        try await admin.runScript("SELECT pg_reload_conf()")
        #expect(
            try await eventually {
                try await fresh.standbyStatus()?.reason?.contains("receiving no log") == true
            })
        #expect(try await Self.found(fresh, "regatta") == ["t1"])
    }

    /// A read database that cannot be used (not a URL, a wrong password, no server at its socket, a server
    /// that is not a standby) sends reads to the primary, says why once on standard error, and status shows it.
    @Test func aWrongReadDatabaseIsSaidOnce() async throws {
        let pair = try PostgresStandbyPair()
        let scratch = try TemporaryDirectory()
        _ = try Store(directory: scratch.url, database: .postgres(url: pair.ownerURL))
        let seeder = try Store(
            directory: scratch.url.appendingPathComponent("seed"), database: .postgres(url: pair.primaryURL))
        try await seeder.signIn("alice")
        try await seeder.index(account: "alice").indexItems([Self.item("h1", "Harbour tides")])
        let password = try #require(try PostgresConnection.parameters(in: pair.standbyURL)["password"])
        let wrongPassword = pair.standbyURL.replacingOccurrences(of: ":\(password)@", with: ":Xyzzy-not-it@")
        #expect(wrongPassword != pair.standbyURL)
        let wrong = [
            "notaurl": "notaurl", "a wrong password": wrongPassword,
            "no server": "postgresql:///replica?host=\(scratch.path)/nowhere", "the primary itself": pair.primaryURL,
        ]
        for (what, url) in wrong {
            let arguments = ["--store", scratch.path + "/cli", "--database", pair.primaryURL, "--read-database", url]
            let search = try await ReplicaProcess.running(arguments + ["search", "--account", "alice", "harbour"])
            #expect(
                search.status == 0 && search.standardOutput.hasPrefix("h1 — Harbour tides"),
                "\(what): \(search.standardError)")
            #expect(
                search.standardError.components(separatedBy: "read database").count == 2,
                "\(what): \(search.standardError)")
            #expect(!search.standardError.contains("Xyzzy"), "the password is never shown")
            let status = try await ReplicaProcess.running(arguments + ["status"])
            #expect(status.standardOutput.contains("read database: unavailable"), "\(what): \(status.standardOutput)")
        }
    }

    /// A standby named without the database it follows is refused, in the library and on the command line.
    @Test func aReadDatabaseNeedsADatabase() async throws {
        let scratch = try TemporaryDirectory()
        var configuration = Store.Configuration()
        configuration.readDatabase = Store.ReadDatabase(url: "postgresql:///replica?host=/nowhere")
        #expect(throws: ReplicaError.self) { try Store(directory: scratch.url, configuration: configuration) }
        let run = try await ReplicaProcess.running([
            "--store", scratch.path, "--read-database", "postgresql:///replica?host=/nowhere", "status",
        ])
        #expect(run.status == 2 && run.standardError.contains("no database was given"), "\(run.standardError)")
    }
}
