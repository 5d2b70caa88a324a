import Foundation
import Replica
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Several `replica` processes share one PostgreSQL store: `replica watch` follows the record store
/// throughout, while an app's writes (`records import`), an API sync's compare-and-swap batches
/// (`import --client-state --expected-client-state`) and `replica mcp` sessions come and go. Any of them,
/// the watcher too, is killed with SIGKILL at a random instant. After each kill the test checks, with SQL
/// of its own as a superuser, that a killed batch landed whole or not at all (its client state says
/// which); at the end, after a `sync`, that the index holds exactly what the test wrote.
/// `REPLICA_KILL_SEED` replays a trial, `REPLICA_KILL_TRIALS` runs more.
@Suite(
    .serialized,
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct SharedDatabaseKillTests {
    static let environment = ProcessInfo.processInfo.environment
    static let replayedSeed = environment["REPLICA_KILL_SEED"].flatMap(UInt64.init)
    static let trials = replayedSeed == nil ? environment["REPLICA_KILL_TRIALS"].flatMap(Int.init) ?? 2 : 1

    /// One trial's store, and what the test wrote to it.
    final class Trial {
        let database: PostgresTestDatabase
        let directory: TemporaryDirectory
        let admin: PostgresConnection
        var generator: SplitMix
        let seed: UInt64
        /// Each record's latest version and title (`nil` once deleted).
        var records: [String: (version: Int, title: String?)] = [:]
        /// The API items of the batches that landed.
        var landed: Set<String> = []
        var clientState: String?
        var watcher: RunningProcess?
        var kills: [String: Int] = [:]

        init(seed: UInt64) throws {
            self.seed = seed
            generator = SplitMix(seed: seed)
            database = try PostgresTestServer.makeMigratedDatabase()
            directory = try TemporaryDirectory()
            admin = try PostgresConnection(url: database.adminURL)
        }

        /// The arguments that name the store, for the processes started here rather than through ``run``.
        var arguments: [String] { ["--store", directory.path + "/store", "--database", database.url] }

        func random(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }

        /// Runs replica to its end, or kills it after `delay` if it is still running by then (counted by
        /// command); returns whether it was killed.
        @discardableResult
        func run(_ command: [String], killAfter delay: TimeInterval? = nil) async throws -> Bool {
            let killed = try await OutsideKillTests.run(
                directory.path + "/store", ["--database", database.url] + command,
                killAfter: delay, what: "seed \(seed)")
            if killed { kills[command[0], default: 0] += 1 }
            return killed
        }

        func startWatcher() throws {
            watcher = try RunningProcess(replica: arguments + ["watch"], environment: ["REPLICA_MODEL_DIR": "off"])
        }

        /// Kills the watcher at once (it may be between two steps of an apply) and starts another.
        func killWatcher() throws {
            if let watcher, watcher.waitForExit(timeout: 0) == nil {
                watcher.signal(SIGKILL)
                kills["watch", default: 0] += 1
            }
            _ = watcher?.waitForExit(timeout: 30)
            try startWatcher()
        }

        func write(_ text: String, _ name: String) throws -> String {
            let path = directory.path + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        /// Sixty record changes (new records, newer versions, deletions) of 100 ids, imported with a kill
        /// at a random instant, then imported again whole: a replay changes nothing that landed.
        func records(step: Int, delay: TimeInterval) async throws {
            var lines: [String] = []
            for _ in 0..<60 {
                let id = "r\(random(100))"
                let version = (records[id]?.version ?? 0) + 1
                if records[id]?.title != nil && random(5) == 0 {
                    lines.append(
                        #"{"account": "a", "kind": "note", "id": "\#(id)", "version": \#(version), "deleted": true, "fields": {}}"#
                    )
                    records[id] = (version, nil)
                } else {
                    let title = "note \(id) version \(version) step \(step)"
                    lines.append(
                        #"{"account": "a", "kind": "note", "id": "\#(id)", "version": \#(version), "fields": {"title": "\#(title)", "body": "written at step \#(step)"}}"#
                    )
                    records[id] = (version, title)
                }
            }
            let file = try write(lines.joined(separator: "\n") + "\n", "records-\(step).jsonl")
            try await run(["records", "import", file], killAfter: delay)
            try await run(["records", "import", file])
        }

        /// Forty items in one compare-and-swap batch, killed at a random instant; the batch must have
        /// landed whole (its state stored) or not at all, and is then sent again if it did not land.
        func batch(step: Int, delay: TimeInterval) async throws {
            let names = (0..<40).map { "api-\(step)-\($0)" }
            let lines = names.map {
                #"{"uniqueIdentifier": "\#($0)", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "batch \#(step)", "textContent": "an item of batch \#(step)"}}"#
            }
            let file = try write(lines.joined(separator: "\n") + "\n", "batch-\(step).jsonl")
            let state = "s\(step)"
            let expectation = clientState.map { ["--expected-client-state", $0] } ?? ["--expect-no-client-state"]
            let command = ["import", "--account", "a", "--client-state", state] + expectation + ["--no-embed", file]
            try await run(command, killAfter: delay)
            let stored = try storedClientState()
            let present = try identifiers(like: "api-\(step)-%")
            if stored == state {
                #expect(
                    present == Set(names),
                    "seed \(seed), batch \(step): its state is stored but \(present.count) of its 40 items are")
            } else {
                #expect(
                    stored == clientState,
                    "seed \(seed), batch \(step): the state is \(stored ?? "none"), neither before nor after")
                #expect(
                    present.isEmpty,
                    "seed \(seed), batch \(step): its state is not stored but \(present.count) of its items are")
                try await run(command)
            }
            clientState = state
            landed.formUnion(names)
        }

        /// An MCP session that searches, killed at a random instant (or not, when it is done by then).
        func mcp(delay: TimeInterval) async throws {
            let messages = [
                #"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}"#,
                #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
                #"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "note version"}}}"#,
                #"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "batch item"}}}"#,
            ]
            let input = try write(messages.joined(separator: "\n") + "\n", "mcp.jsonl")
            let process = try RunningProcess(
                replica: arguments + ["mcp", "--format", "compact"],
                environment: ["REPLICA_MODEL_DIR": "off"], input: input)
            guard let status = await process.exit(within: delay) else {
                kills["mcp", default: 0] += 1
                return
            }
            #expect(status == 0, "seed \(seed): replica mcp failed: \(process.standardError)")
            #expect(process.standardOutput.split(separator: "\n").count == 3, "seed \(seed): one answer a request")
        }

        func storedClientState() throws -> String? {
            let result = try admin.execute(
                "SELECT convert_from(state, 'UTF8') FROM replica.client_state WHERE account = 'a' AND index_name = 'default'"
            )
            return result.rowCount > 0 ? result.string(0, 0) : nil
        }

        func identifiers(like pattern: String) throws -> Set<String> {
            let result = try admin.execute(
                "SELECT identifier FROM replica.items WHERE account = 'a' AND index_name = 'default' AND identifier LIKE $1",
                [.text(pattern)])
            return Set((0..<result.rowCount).compactMap { result.string($0, 0) })
        }

        /// The index holds exactly the records that stand, with their latest titles, and the batches that landed.
        func check() throws {
            let result = try admin.execute(
                "SELECT identifier, title, owner FROM replica.items WHERE account = 'a' AND index_name = 'default'")
            var notes: [String: String] = [:]
            var api: Set<String> = []
            for row in 0..<result.rowCount {
                guard let identifier = result.string(row, 0) else { continue }
                if identifier.hasPrefix("note:") {
                    notes[identifier] = result.string(row, 1)
                } else {
                    api.insert(identifier)
                }
            }
            var expected: [String: String] = [:]
            for (id, record) in records { if let title = record.title { expected["note:a:\(id)"] = title } }
            #expect(notes == expected, "seed \(seed): the record items differ from the records written")
            #expect(
                api == landed,
                "seed \(seed): \(api.subtracting(landed).count) API items too many, \(landed.subtracting(api).count) missing"
            )
            #expect(try storedClientState() == clientState)
        }
    }

    @Test func theSharedStoreIsWhatWasWrittenAfterAKillOfAnyProcess() async throws {
        let baseSeed = Self.replayedSeed ?? UInt64.random(in: 1..<1_000_000_000)
        var kills: [String: Int] = [:]
        for number in 0..<Self.trials {
            let seed = baseSeed &+ UInt64(number)
            print("shared PostgreSQL store kill trial: seed \(seed)")
            let trial = try Trial(seed: seed)
            try await trial.run(["accounts", "sign-in", "a"])
            // How long an undisturbed command takes here, now: kills land within it.
            let start = Date()
            try await trial.records(step: -1, delay: 120)
            let duration = Date().timeIntervalSince(start) / 2
            try trial.startWatcher()
            for step in 0..<8 {
                let delay = Double(trial.random(1000)) / 1000 * duration
                switch trial.random(3) {
                case 0: try await trial.records(step: step, delay: delay)
                case 1: try await trial.batch(step: step, delay: delay)
                default: try await trial.mcp(delay: delay)
                }
                if trial.random(3) == 0 { try trial.killWatcher() }
            }
            trial.watcher?.signal(SIGKILL)
            _ = await trial.watcher?.exit(within: 30)
            try await trial.run(["sync"])
            try trial.check()
            for (name, count) in trial.kills { kills[name, default: 0] += count }
        }
        print(
            "shared PostgreSQL store kills: \(Self.trials) trials; killed while running: \(kills.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
        )
    }
}
