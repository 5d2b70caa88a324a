import Foundation
import ReplicaPostgres
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore

/// Kills `replica` from outside, with SIGKILL at a random instant, in each phase of a store's life:
/// `records import`, a projection rebuild, `sync` of a file tree, `watch` while files change, `sync` of
/// an exec source and `switch-account`. After each kill the same command runs again (or `sync`, after a
/// watcher), and the index files are compared with what the inputs and the declared mappings say they
/// must hold — read with SQL, not through replica's projection or search code — and checked with
/// SQLite's `integrity_check`, FTS5's own `integrity-check`, and the ranking lists against FTS5
/// (``StoreFiles/expectRankingListsMatch(_:_:)``; `sync` and `records import` build them here from 50
/// items on).
///
/// Unlike ``CrashTests``, which stops at instrumented points, a kill here lands anywhere: in SQLite, in
/// a system call, between two writes replica never thought about.
///
/// A trial prints its seed; `REPLICA_KILL_SEED=<seed>` replays it (the same inputs and the same kill
/// delays; where a delay lands depends on the machine). `REPLICA_KILL_TRIALS=1000` runs 1,000 trials
/// (`scripts/kill-trials.sh`).
///
/// On PostgreSQL the same trials run against a database of their own, and the rows are read with SQL
/// as a superuser (no row-level policy, no replica code); the server answers for its own files, so the
/// SQLite file checks and the ranking lists (SQLite's alone) are not made there. After the switch, no
/// row of any table holds the signed-out account's canary (``CrashTests/placesHolding(_:_:)``).
@Suite(.serialized) struct OutsideKillTests {

    static let environment = ProcessInfo.processInfo.environment
    static let replayedSeed = environment["REPLICA_KILL_SEED"].flatMap(UInt64.init)
    static let trials = replayedSeed == nil ? environment["REPLICA_KILL_TRIALS"].flatMap(Int.init) ?? 20 : 1

    static let phases = ["records import", "rebuild", "files sync", "watch", "exec sync", "switch-account"]

    /// A word list the inputs are made of; the canary is only ever in account a's records.
    static let words = [
        "launch", "supplier", "risk", "budget", "vendor", "delay", "orchid", "harbor", "quartz", "meadow",
        "lantern", "copper", "violet", "summit", "ember", "tundra",
    ]

    // MARK: Inputs and what they must become

    /// One trial's inputs, all derived from its seed.
    struct Inputs {
        let stream: CrashTests.Stream
        /// File contents by path relative to the tree, before and after the changes made while syncing and watching.
        var files: [String: String]
        /// The exec plugin's items in order: a key with a title and a body, or a key to delete.
        let pluginItems: [(key: String, text: (title: String, body: String)?)]

        init(seed: UInt64) {
            stream = CrashTests.Stream(seed: seed, count: 1500)
            var generator = SplitMix(seed: seed ^ 0x5EED)
            files = [:]
            for index in 0..<400 {
                files["d\(index % 7)/f\(index).txt"] = OutsideKillTests.sentence(&generator, length: 8)
            }
            var plugin: [(String, (String, String)?)] = []
            for index in 0..<500 {
                let key = "k\(generator.next() % 200)"
                if index > 100 && generator.next() % 5 == 0 {
                    plugin.append((key, nil))
                } else {
                    plugin.append(
                        (
                            key,
                            (
                                OutsideKillTests.sentence(&generator, length: 2) + " \(index)",
                                OutsideKillTests.sentence(&generator, length: 6)
                            )
                        ))
                }
            }
            pluginItems = plugin
        }

        /// Record items by identifier: title and body columns under the default projection, or, for notes,
        /// under `version2`'s (title ← body, textContent ← title).
        func recordRows(account: String, version2: Bool) -> [String: Row] {
            var rows: [String: Row] = [:]
            for record in stream.latest.values where record.account.rawValue == account && !record.isDeleted {
                let fields = Dictionary(
                    record.fields.map { ($0.0, $0.1.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
                let title = fields["title"] ?? ""
                let body = fields["body"] ?? ""
                rows["\(record.kind):\(account):\(record.id)"] =
                    version2 && record.kind == "note" ? Row(title: body, body: title) : Row(title: title, body: body)
            }
            return rows
        }

        /// File items by identifier: a text file's name is its title and its content its body.
        func fileRows(source: String) -> [String: Row] {
            Dictionary(
                uniqueKeysWithValues: files.map { path, content in
                    ("\(source):\(path)", Row(title: URL(fileURLWithPath: path).lastPathComponent, body: content))
                })
        }

        /// Plugin items by identifier: the last upsert of each key, unless a delete came after it.
        var pluginRows: [String: Row] {
            var rows: [String: Row] = [:]
            for (key, text) in pluginItems {
                rows["exec-1:\(key)"] = text.map { Row(title: $0.title, body: $0.body) }
            }
            return rows
        }
    }

    struct Row: Equatable, CustomStringConvertible {
        var title: String
        var body: String
        var description: String { "title \(title.debugDescription), body \(body.debugDescription)" }
    }

    static func sentence(_ generator: inout SplitMix, length: Int) -> String {
        (0..<length).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ")
    }

    // MARK: Running and killing

    /// Runs replica on `place`; with a delay, kills it with SIGKILL if it is still running by then.
    /// Returns whether it was killed.
    @discardableResult
    static func run(_ place: CLIPlace, _ arguments: [String], killAfter delay: TimeInterval? = nil, what: String)
        async throws -> Bool
    {
        try await run(replica: place.arguments, arguments, killAfter: delay, what: what)
    }

    /// ``run(_:_:killAfter:what:)`` on the SQLite store in the folder `store`.
    @discardableResult
    static func run(_ store: String, _ arguments: [String], killAfter delay: TimeInterval? = nil, what: String)
        async throws -> Bool
    {
        try await run(replica: ["--store", store], arguments, killAfter: delay, what: what)
    }

    private static func run(
        replica global: [String], _ arguments: [String], killAfter delay: TimeInterval?, what: String
    ) async throws -> Bool {
        // Ranking lists from 50 items on, so that kills land in their builds and in the writes they follow.
        let process = try RunningProcess(
            replica: global + arguments,
            environment: ["REPLICA_MODEL_DIR": "off", "REPLICA_RANKING_LISTS_MINIMUM_ITEMS": "50"])
        guard let status = await process.exit(within: delay ?? 120) else {
            if delay == nil {
                Issue.record("\(what): replica \(arguments.joined(separator: " ")) did not end in 120 s")
            }
            return delay != nil
        }
        #expect(status == 0, "\(what): replica \(arguments.joined(separator: " ")) failed: \(process.standardError)")
        return false
    }

    /// How long an undisturbed run of `body` takes.
    static func duration(_ body: () async throws -> Void) async rethrows -> TimeInterval {
        let start = Date()
        try await body()
        return Date().timeIntervalSince(start)
    }

    // MARK: Checking, with SQL of its own

    /// The rows of an account's default index by identifier, split by owner; on SQLite, its file must
    /// be sound.
    static func indexRows(_ place: CLIPlace, account: String, what: String) throws -> [String: [String: Row]] {
        var rows: [String: [String: Row]] = [:]
        if let admin = place.databaseAdminURL {
            let result = try PostgresConnection(url: admin).execute(
                "SELECT identifier, owner, title, body FROM replica.items WHERE account = $1 AND index_name = 'default'",
                [.text(account)])
            for row in 0..<result.rowCount {
                rows[result.string(row, 1) ?? "", default: [:]][result.string(row, 0) ?? ""] = Row(
                    title: result.string(row, 2) ?? "",
                    body: result.string(row, 3) ?? "")
            }
            return rows
        }
        return try indexRows(place.store + "/accounts/\(account)/indexes/default.sqlite", what: what)
    }

    /// The rows of an index file by identifier, split by owner; the file must be sound.
    static func indexRows(_ path: String, what: String) throws -> [String: [String: Row]] {
        var rows: [String: [String: Row]] = [:]
        let connection = try StoreFiles.expectSound(path, what)
        let statement = try connection.prepare("SELECT identifier, owner, title, body FROM items")
        for (identifier, owner, row) in try statement.rows(
            [], { ($0.text(0), $0.text(1), Row(title: $0.text(2), body: $0.text(3))) })
        {
            rows[owner, default: [:]][identifier] = row
        }
        return rows
    }

    /// Compares one owner's rows with what they must be, naming at most a few differences.
    static func expect(_ actual: [String: Row]?, equals expected: [String: Row], _ what: String) {
        let actual = actual ?? [:]
        let missing = Set(expected.keys).subtracting(actual.keys).sorted()
        let extra = Set(actual.keys).subtracting(expected.keys).sorted()
        let wrong = expected.keys.filter { actual[$0] != nil && actual[$0] != expected[$0] }.sorted()
        #expect(
            missing.isEmpty && extra.isEmpty && wrong.isEmpty,
            "\(what): \(missing.count) missing \(missing.prefix(3)), \(extra.count) stale \(extra.prefix(3)), \(wrong.count) wrong \(wrong.prefix(2).map { "\($0): \(actual[$0]!) instead of \(expected[$0]!)" })"
        )
    }

    /// Checks the store: the default index of each account holds exactly `expected` (by owner), and, on
    /// SQLite, every database file is intact.
    static func check(_ place: CLIPlace, expected: [String: [String: [String: Row]]], what: String) throws {
        for (account, owners) in expected {
            let rows = try indexRows(place, account: account, what: what)
            for owner in Set(owners.keys).union(rows.keys) {
                expect(rows[owner], equals: owners[owner] ?? [:], "\(what), account \(account), owner \(owner)")
            }
            if place.databaseURL == nil {
                try StoreFiles.expectSound(place.store + "/accounts/\(account)/records.sqlite", what)
            }
        }
    }

    // MARK: The plugin

    /// A plugin that sends the items of `items.jsonl` beside it in batches of 25, each committed with the
    /// number of lines sent so far, and starts again after the last committed batch.
    static let plugin = #"""
        import json, os, sys
        here = os.path.dirname(os.path.abspath(__file__))
        lines = open(os.path.join(here, "items.jsonl")).read().splitlines()
        start = json.loads(sys.stdin.readline())
        done = int(start.get("checkpoint") or 0)
        def send(message):
            sys.stdout.write(json.dumps(message) + "\n")
        for batch in range(done, len(lines), 25):
            for line in lines[batch:batch + 25]:
                item = json.loads(line)
                if "title" in item:
                    send({"type": "upsert", "version": "1", "item": {"uniqueIdentifier": item["key"],
                          "attributes": {"title": item["title"], "textContent": item["body"]}}})
                else:
                    send({"type": "delete", "uniqueIdentifier": item["key"]})
            send({"type": "commit", "checkpoint": str(min(batch + 25, len(lines)))})
            sys.stdout.flush()
        send({"type": "idle"})
        sys.stdout.flush()
        for line in sys.stdin:
            message = json.loads(line)
            if message.get("type") == "ping":
                send({"type": "pong", "id": message["id"]}); sys.stdout.flush()
            elif message.get("type") == "stop":
                break
        """#

    // MARK: The trial

    /// Where each phase of one trial kills, as fractions of an undisturbed run of the phase.
    struct Kills {
        var fractions: [Double]
        /// For the watch phase: after which file change the watcher is killed.
        var watchChange: Int

        init(seed: UInt64) {
            var generator = SplitMix(seed: seed ^ 0xC0FFEE)
            fractions = OutsideKillTests.phases.map { _ in Double(generator.next() % 10_000) / 10_000 }
            watchChange = Int(generator.next() % 120)
        }
    }

    /// Sets a trial up in `folder` on `backend`: accounts a and b, the tree and the plugin's folder.
    static func prepare(_ folder: TemporaryDirectory, _ backend: TestBackend, _ inputs: Inputs) async throws -> CLIPlace
    {
        let place = CLIPlace(directory: folder)
        try await place.use(backend, signingIn: "a", "b")
        let directory = folder.path
        for (path, content) in inputs.files {
            let url = URL(fileURLWithPath: directory + "/tree/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try content.write(to: url, atomically: false, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: directory + "/plugin", withIntermediateDirectories: true)
        try plugin.write(toFile: directory + "/plugin/plugin.py", atomically: true, encoding: .utf8)
        try inputs.pluginItems.map { key, text in
            JSON.object(
                [("key", .string(key))]
                    + (text.map { [("title", .string($0.title)), ("body", .string($0.body))] } ?? [])
            ).serialized()
        }.joined(separator: "\n").write(toFile: directory + "/plugin/items.jsonl", atomically: true, encoding: .utf8)
        try inputs.stream.lines.joined(separator: "\n").write(
            toFile: directory + "/records.jsonl", atomically: true, encoding: .utf8)
        return place
    }

    /// Changes the tree: edits, deletes and new files, `count` of them, calling `after` after each.
    static func changeFiles(
        _ directory: String, _ inputs: inout Inputs, seed: UInt64, count: Int, after: (Int) -> Void = { _ in }
    ) throws {
        var generator = SplitMix(seed: seed)
        for change in 0..<count {
            let paths = inputs.files.keys.sorted()
            let path = paths[Int(generator.next() % UInt64(paths.count))]
            switch generator.next() % 3 {
            case 0:
                try FileManager.default.removeItem(atPath: directory + "/tree/" + path)
                inputs.files[path] = nil
            case 1:
                let content = sentence(&generator, length: 5) + " edited \(change)"
                try content.write(toFile: directory + "/tree/" + path, atomically: false, encoding: .utf8)
                inputs.files[path] = content
            default:
                let new = "d\(generator.next() % 7)/new\(seed % 1000)-\(change).txt"
                let content = sentence(&generator, length: 4)
                try content.write(toFile: directory + "/tree/" + new, atomically: false, encoding: .utf8)
                inputs.files[new] = content
            }
            after(change)
        }
    }

    static func runTrial(_ backend: TestBackend, seed: UInt64, durations: [TimeInterval], kills killed: inout [Int])
        async throws
    {
        let kills = Kills(seed: seed)
        print(
            "outside kill trial: seed \(seed), delays \(zip(kills.fractions, durations).map { String(format: "%.3f s", $0 * $1) }.joined(separator: ", ")), watcher after change \(kills.watchChange)"
        )
        let directory = try TemporaryDirectory()
        var inputs = Inputs(seed: seed)
        let place = try await prepare(directory, backend, inputs)
        func delay(_ phase: Int) -> TimeInterval { kills.fractions[phase] * durations[phase] }
        func count(_ phase: Int, _ wasKilled: Bool) { if wasKilled { killed[phase] += 1 } }
        var expected: [String: [String: [String: Row]]] = [:]

        // 1. records import, killed, then the same file again.
        count(
            0,
            try await run(
                place, ["records", "import", directory.path + "/records.jsonl"], killAfter: delay(0),
                what: "seed \(seed)"))
        try await run(place, ["records", "import", directory.path + "/records.jsonl"], what: "seed \(seed)")
        for account in ["a", "b"] {
            expected[account] = ["records": inputs.recordRows(account: account, version2: false)]
        }
        try check(place, expected: expected, what: "seed \(seed), after the import")
        // The import built ranking lists, which the checks compare with FTS5 from here on (SQLite's alone).
        if place.databaseURL == nil {
            let lists = try StoreFiles.expectSound(place.store + "/accounts/a/indexes/default.sqlite", "seed \(seed)")
                .scalarInt("SELECT count(*) FROM ranking_lists")
            #expect(lists ?? 0 > 0, "seed \(seed): the import built no ranking lists")
        }

        // 2. A projection version change, rebuilt by sync, killed, synced again.
        try CrashTests.version2.write(toFile: place.store + "/config.json", atomically: true, encoding: .utf8)
        count(1, try await run(place, ["sync"], killAfter: delay(1), what: "seed \(seed)"))
        try await run(place, ["sync"], what: "seed \(seed)")
        for account in ["a", "b"] {
            expected[account] = ["records": inputs.recordRows(account: account, version2: true)]
        }
        try check(place, expected: expected, what: "seed \(seed), after the rebuild")

        // 3. The tree, synced and killed; changed; synced again.
        try await run(
            place, ["sources", "add", "files", "--account", "a", directory.path + "/tree"], what: "seed \(seed)")
        count(2, try await run(place, ["sync"], killAfter: delay(2), what: "seed \(seed)"))
        try changeFiles(directory.path, &inputs, seed: seed &+ 1, count: 30)
        try await run(place, ["sync"], what: "seed \(seed)")
        expected["a"]!["source:files-1"] = inputs.fileRows(source: "files-1")
        try check(place, expected: expected, what: "seed \(seed), after the tree's sync")

        // 4. The watcher, killed while files change; what it missed, the next sync finds.
        let watcher = try RunningProcess(
            replica: place.arguments + ["watch"], environment: ["REPLICA_MODEL_DIR": "off"])
        try changeFiles(directory.path, &inputs, seed: seed &+ 2, count: 120) { change in
            if change == kills.watchChange { watcher.signal(SIGKILL) }
        }
        _ = await watcher.exit(within: 60)
        killed[3] += 1
        try await run(place, ["sync"], what: "seed \(seed)")
        expected["a"]!["source:files-1"] = inputs.fileRows(source: "files-1")
        try check(place, expected: expected, what: "seed \(seed), after the watcher")

        // 5. The exec source, synced and killed, synced again: it resumes from its last commit.
        try await run(
            place, ["sources", "add", "exec", "--account", "b", "--", "python3", directory.path + "/plugin/plugin.py"],
            what: "seed \(seed)")
        count(4, try await run(place, ["sync"], killAfter: delay(4), what: "seed \(seed)"))
        try await run(place, ["sync"], what: "seed \(seed)")
        expected["b"]!["source:exec-1"] = inputs.pluginRows
        try check(place, expected: expected, what: "seed \(seed), after the exec source")

        // 6. A switch to b, killed: the next command finishes it, or nothing had changed.
        if place.databaseURL != nil {
            #expect(
                try !CrashTests.placesHolding(inputs.stream.canary, place).isEmpty,
                "seed \(seed): the check does not see account a's text")
        }
        count(5, try await run(place, ["switch-account", "b"], killAfter: delay(5), what: "seed \(seed)"))
        let accounts = try await ReplicaProcess.running(place.arguments + ["accounts"])
        if accounts.standardOutput != "b\n" {
            #expect(accounts.standardOutput == "a\nb\n", "seed \(seed): half a switch: \(accounts.standardOutput)")
            try await run(place, ["switch-account", "b"], what: "seed \(seed)")
        }
        #expect(
            try await ReplicaProcess.running(place.arguments + ["accounts"]).standardOutput == "b\n", "seed \(seed)")
        #expect(
            TemporaryDirectory.filesContaining(inputs.stream.canary, under: URL(fileURLWithPath: place.store)).isEmpty,
            "seed \(seed): account a's text is still on disk after the switch")
        if place.databaseURL != nil {
            #expect(
                try CrashTests.placesHolding(inputs.stream.canary, place) == [],
                "seed \(seed): account a's text is still kept after the switch")
        }
        expected["a"] = nil
        try check(place, expected: expected, what: "seed \(seed), after the switch")
    }

    @Test(arguments: TestBackend.available)
    func theIndexIsWhatTheInputsSayAfterAKillAtAnyInstant(_ backend: TestBackend) async throws {
        let baseSeed = Self.replayedSeed ?? UInt64.random(in: 1..<1_000_000_000)
        // How long each phase takes undisturbed, on this machine, now: kills land within that.
        var durations = [TimeInterval](repeating: 0, count: Self.phases.count)
        do {
            let directory = try TemporaryDirectory()
            var inputs = Inputs(seed: baseSeed)
            let place = try await Self.prepare(directory, backend, inputs)
            durations[0] = try await Self.duration {
                try await Self.run(
                    place, ["records", "import", directory.path + "/records.jsonl"], what: "calibration")
            }
            try CrashTests.version2.write(toFile: place.store + "/config.json", atomically: true, encoding: .utf8)
            durations[1] = try await Self.duration { try await Self.run(place, ["sync"], what: "calibration") }
            try await Self.run(
                place, ["sources", "add", "files", "--account", "a", directory.path + "/tree"], what: "calibration")
            durations[2] = try await Self.duration { try await Self.run(place, ["sync"], what: "calibration") }
            try Self.changeFiles(directory.path, &inputs, seed: 1, count: 1)
            try await Self.run(
                place,
                ["sources", "add", "exec", "--account", "b", "--", "python3", directory.path + "/plugin/plugin.py"],
                what: "calibration")
            durations[4] = try await Self.duration { try await Self.run(place, ["sync"], what: "calibration") }
            durations[5] = try await Self.duration {
                try await Self.run(place, ["switch-account", "b"], what: "calibration")
            }
        }
        var killed = [Int](repeating: 0, count: Self.phases.count)
        for trial in 0..<Self.trials {
            try await Self.runTrial(backend, seed: baseSeed &+ UInt64(trial), durations: durations, kills: &killed)
        }
        print(
            "outside kills: \(Self.trials) trials; killed while running: \(zip(Self.phases, killed).map { "\($0) \($1)" }.joined(separator: ", "))"
        )
        // A kill lands uniformly within the length of one undisturbed run, timed once at the start: on a
        // machine whose load changes, a phase may finish before its kill in every trial, so only the
        // phases together must have been killed while running (the counts are printed).
        #expect(
            Self.trials < 10 || zip(Self.phases, killed).contains { $0 != "watch" && $1 > 0 },
            "no run was killed while running")
    }
}
