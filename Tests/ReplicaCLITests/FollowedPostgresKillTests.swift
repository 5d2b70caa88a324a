import Foundation
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore

/// Kills `replica` with SIGKILL at a random instant while it follows a table of the app's own PostgreSQL
/// database (`sync`, and `watch` while the app writes), as ``OutsideKillTests`` does for its phases.
/// After each kill the same command runs again, and the index file is compared, with SQL of the test's
/// own, with the app's table as it is (read from the app's database): every row of a signed-in account
/// there exactly once, nothing else. `REPLICA_KILL_SEED` replays a trial, `REPLICA_KILL_TRIALS` runs more.
@Suite(
    .serialized,
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct FollowedPostgresKillTests {
    static let environment = ProcessInfo.processInfo.environment
    static let replayedSeed = environment["REPLICA_KILL_SEED"].flatMap(UInt64.init)
    static let trials = replayedSeed == nil ? environment["REPLICA_KILL_TRIALS"].flatMap(Int.init) ?? 3 : 1
    static let owners = ["a", "b", "c"]  // c is never signed in

    /// The app: its database, its connection, and what it writes.
    struct App {
        let database: PostgresTestDatabase
        let connection: PostgresConnection
        var generator: SplitMix
        var revisions: [Int: Int64] = [:]
        /// Each id's highest revision so far: a row inserted again after a delete continues from it, as
        /// the contract of a version column asks (a deletion is never undone by an older version).
        var highest: [Int: Int64] = [:]

        init(seed: UInt64) throws {
            database = try PostgresTestServer.makeDatabase()
            connection = try PostgresConnection(url: database.url)
            try connection.executeScript(
                "CREATE TABLE notes (id bigint PRIMARY KEY, owner text NOT NULL, revision bigint NOT NULL, title text, body text)"
            )
            generator = SplitMix(seed: seed)
        }

        /// `count` changes in transactions of one to ten: inserts, updates (moving a row to another
        /// owner now and then) and deletes, of 300 ids.
        mutating func write(_ count: Int, after each: (Int) -> Void = { _ in }) throws {
            var done = 0
            while done < count {
                let size = min(count - done, 1 + Int(generator.next() % 10))
                try connection.transaction {
                    for _ in 0..<size {
                        let id = Int(generator.next() % 300)
                        let owner = FollowedPostgresKillTests.owners[Int(generator.next() % 3)]
                        let text = OutsideKillTests.sentence(&generator, length: 6)
                        if let revision = revisions[id] {
                            if generator.next() % 4 == 0 {
                                try connection.execute("DELETE FROM notes WHERE id = $1", [.int(Int64(id))])
                                revisions[id] = nil
                            } else {
                                try connection.execute(
                                    "UPDATE notes SET revision = $2, owner = $3, title = $4, body = $5 WHERE id = $1",
                                    [
                                        .int(Int64(id)), .int(revision + 1), .text(owner),
                                        .text("note \(id) \(revision + 1)"), .text(text),
                                    ])
                                revisions[id] = revision + 1
                                highest[id] = revision + 1
                            }
                        } else {
                            let revision = (highest[id] ?? 0) + 1
                            try connection.execute(
                                "INSERT INTO notes(id, owner, revision, title, body) VALUES ($1, $2, $3, $4, $5)",
                                [
                                    .int(Int64(id)), .text(owner), .int(revision), .text("note \(id) \(revision)"),
                                    .text(text),
                                ])
                            revisions[id] = revision
                            highest[id] = revision
                        }
                    }
                }
                done += size
                each(done)
            }
        }

        /// What each signed-in account's index must hold of the table: its rows, by identifier.
        func expected() throws -> [String: [String: OutsideKillTests.Row]] {
            let result = try connection.execute(
                "SELECT id::text, owner, title, body FROM notes WHERE owner IN ('a', 'b')")
            var rows: [String: [String: OutsideKillTests.Row]] = ["a": [:], "b": [:]]
            for row in 0..<result.rowCount {
                let owner = result.string(row, 1)!
                rows[owner]!["note:\(owner):\(result.string(row, 0)!)"] = OutsideKillTests.Row(
                    title: result.string(row, 2)!, body: result.string(row, 3)!)
            }
            return rows
        }
    }

    static func check(store: String, table: FollowedTable, app: App, what: String) throws {
        for (account, expected) in try app.expected() {
            let rows = try OutsideKillTests.indexRows(store + "/accounts/\(account)/indexes/default.sqlite", what: what)
            OutsideKillTests.expect(rows[table.owner.rawValue], equals: expected, "\(what), account \(account)")
            #expect(
                Set(rows.keys).subtracting([table.owner.rawValue]).isEmpty,
                "\(what): items of other owners \(rows.keys)")
        }
    }

    static func runTrial(seed: UInt64, duration: TimeInterval, killed: inout Int) async throws {
        var generator = SplitMix(seed: seed ^ 0xFEED)
        let directory = try TemporaryDirectory()
        var app = try App(seed: seed)
        let store = directory.path + "/store"
        let table = FollowedTable(
            database: app.database.postgresURL, table: "notes", kind: "note", account: .column("owner"),
            versionColumn: "revision", fieldColumns: ["title", "body"])
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let follow =
            #"{"follow": [{"database": "\#(table.database.absoluteString)", "table": "notes", "kind": "note", "account": {"column": "owner"}, "version": "revision", "fields": ["title", "body"]}]}"#
        try follow.write(toFile: store + "/config.json", atomically: true, encoding: .utf8)
        for account in ["a", "b"] {
            try await OutsideKillTests.run(store, ["accounts", "sign-in", account], what: "seed \(seed)")
        }

        for round in 0..<3 {
            try app.write(400)
            let delay = Double(generator.next() % 10_000) / 10_000 * duration
            print(
                "followed PostgreSQL table kill trial: seed \(seed), round \(round), sync killed after \(String(format: "%.3f", delay)) s"
            )
            if try await OutsideKillTests.run(store, ["sync"], killAfter: delay, what: "seed \(seed)") { killed += 1 }
            try await OutsideKillTests.run(store, ["sync"], what: "seed \(seed)")
            try check(store: store, table: table, app: app, what: "seed \(seed), round \(round), after sync")
        }

        // The watcher, killed while the app writes; what it missed, the next sync applies.
        let watcher = try RunningProcess(
            replica: ["--store", store, "watch"], environment: ["REPLICA_MODEL_DIR": "off"])
        let killAt = Int(generator.next() % 300)
        try app.write(300) { done in
            if done >= killAt && watcher.waitForExit(timeout: 0) == nil { watcher.signal(SIGKILL) }
        }
        _ = await watcher.exit(within: 60)
        try await OutsideKillTests.run(store, ["sync"], what: "seed \(seed)")
        try check(store: store, table: table, app: app, what: "seed \(seed), after the watcher")
    }

    @Test func theIndexIsTheAppsTableAfterAKillAtAnyInstant() async throws {
        let baseSeed = Self.replayedSeed ?? UInt64.random(in: 1..<1_000_000_000)
        // How long an undisturbed sync of 400 changes takes here, now: kills land within that.
        let duration: TimeInterval
        do {
            let directory = try TemporaryDirectory()
            var app = try App(seed: baseSeed)
            let store = directory.path + "/store"
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
            let follow =
                #"{"follow": [{"database": "\#(app.database.postgresURL.absoluteString)", "table": "notes", "kind": "note", "account": {"column": "owner"}, "version": "revision"}]}"#
            try follow.write(toFile: store + "/config.json", atomically: true, encoding: .utf8)
            try await OutsideKillTests.run(store, ["accounts", "sign-in", "a"], what: "calibration")
            try await OutsideKillTests.run(store, ["sync"], what: "calibration")
            try app.write(400)
            duration = try await OutsideKillTests.duration {
                try await OutsideKillTests.run(store, ["sync"], what: "calibration")
            }
        }
        var killed = 0
        for trial in 0..<Self.trials {
            try await Self.runTrial(seed: baseSeed &+ UInt64(trial), duration: duration, killed: &killed)
        }
        print("followed PostgreSQL table kills: \(Self.trials) trials, \(killed) syncs killed while running")
    }
}
