import Foundation
import ReplicaPostgres
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Kills `replica` at random points of a long stream of changes, a projection rebuild and a
/// switch-account, restarts it, and checks that the index is exactly the projection of the records:
/// nothing lost, nothing stale, nothing duplicated, nothing of a signed-out account left. On both
/// backends: on PostgreSQL, "left" means any row of the database (checked as a superuser), on SQLite any
/// file of the store.
///
/// Every trial prints its seed; `REPLICA_CRASH_SEED=<seed>` replays one trial.
@Suite(.serialized) struct CrashTests {
    /// 20, or `REPLICA_CRASH_TRIALS` (`scripts/kill-trials.sh` runs 1,000).
    static let trials = ProcessInfo.processInfo.environment["REPLICA_CRASH_TRIALS"].flatMap(Int.init) ?? 20

    /// A deterministic random stream of records for accounts a and b: creates, edits, out-of-order and
    /// repeated deliveries, tombstones. Account a's text carries a canary.
    struct Stream {
        var lines: [String] = []
        var latest: [String: Record] = [:]
        let canary: String

        init(seed: UInt64, count: Int) {
            var generator = SplitMix(seed: seed)
            canary = "zzcanary\(seed % 1_000_000)"
            let words = [
                "launch", "supplier", "risk", "budget", "vendor", "delay", "orchid", "harbor", "quartz", "meadow",
            ]
            for _ in 0..<count {
                let account = generator.next() % 3 == 0 ? "b" : "a"
                let kind = generator.next() % 4 == 0 ? "message" : "note"
                let id = String(generator.next() % 60)
                let version = Int64(generator.next() % 7 + 1)
                // The content is a function of (record, version): repeated deliveries of a version agree.
                // Seeded from the id's number, not its hashValue (which Swift randomises per process), so a
                // printed seed replays the same trial.
                var content = SplitMix(
                    seed: (UInt64(id) ?? 0) &* 0x9E37 &+ UInt64(version) &* 7919 &+ (account == "a" ? 1 : 2))
                let deleted = content.next() % 6 == 0
                let title =
                    (0..<2).map { _ in words[Int(content.next() % UInt64(words.count))] }.joined(separator: " ")
                    + " v\(version)"
                var body = (0..<6).map { _ in words[Int(content.next() % UInt64(words.count))] }.joined(separator: " ")
                if account == "a" { body += " \(canary)" }
                let record = Record(
                    account: AccountID(account), kind: kind, id: id, version: version, isDeleted: deleted,
                    fields: deleted ? [] : [("title", .string(title)), ("body", .string(body))])
                let key = "\(account)/\(kind)/\(id)"
                if (latest[key]?.version ?? 0) < version { latest[key] = record }
                var json: [(String, JSON)] = [
                    ("account", .string(account)), ("kind", .string(kind)), ("id", .string(id)),
                    ("version", .number(Double(version))),
                ]
                if deleted { json.append(("deleted", true)) } else { json.append(("fields", .object(record.fields))) }
                lines.append(JSON.object(json).serialized())
            }
        }

        /// The items the index of `account` must hold under `projections`.
        func expectedItems(account: AccountID, projections: ProjectionSet) throws -> [ItemIdentifier: SearchableItem] {
            var items: [ItemIdentifier: SearchableItem] = [:]
            for record in latest.values where record.account == account && !record.isDeleted {
                let item = try projections.projection(for: record.kind).item(for: record, now: Date())
                items[item.uniqueIdentifier] = item
            }
            return items
        }
    }

    static let version2 = """
        { "projections": { "note": { "version": 2, "contentType": "net.daringfireball.markdown",
                                     "attributes": { "title": "body", "textContent": "title" } } } }
        """

    /// Runs replica; with a crash point, the run may end killed. Returns how many points it went through.
    @discardableResult
    static func run(_ place: CLIPlace, _ arguments: [String], input: String? = nil, crashAt point: Int? = nil)
        async throws -> (killed: Bool, points: Int)
    {
        let environment = ["REPLICA_TEST_CRASH": "*:\(point ?? Int.max / 2)"]
        let result = try await ReplicaProcess.running(
            place.arguments + arguments, input: input, environment: environment, timeout: 120)
        if !result.wasSignaled {
            #expect(result.status == 0, "replica \(arguments.joined(separator: " ")) failed: \(result.standardError)")
        }
        let points =
            result.standardError.split(separator: "\n").last { $0.contains("crash points reached") }
            .flatMap { Int($0.split(separator: " ")[2]) } ?? 0
        return (result.wasSignaled, points)
    }

    static func expectIndex(
        _ store: Store, account: AccountID, equals expected: [ItemIdentifier: SearchableItem], seed: UInt64,
        phase: String
    ) async throws {
        let items = try await store.index(account: account).allItems()
        let actual = Dictionary(items.map { ($0.uniqueIdentifier, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(items.count == actual.count, "seed \(seed), \(phase): duplicated items")
        #expect(
            Set(actual.keys) == Set(expected.keys), "seed \(seed), \(phase): items lost or stale in account \(account)")
        for (identifier, item) in expected where actual[identifier]?.attributeSet != item.attributeSet {
            Issue.record("seed \(seed), \(phase): \(identifier) is not its record's projection")
        }
    }

    /// Where `canary` is still kept: the store's files on SQLite; on PostgreSQL, the tables (partitions
    /// included) holding a row whose text has it.
    static func placesHolding(_ canary: String, _ place: CLIPlace) throws -> [String] {
        guard let adminURL = place.databaseAdminURL else { return place.directory.filesContaining(canary).map(\.path) }
        let admin = try PostgresConnection(url: adminURL)
        let tables = try admin.execute(
            """
            SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
            WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1
            """)
        return try (0..<tables.rowCount).compactMap { row in
            let table = try #require(tables.string(row, 0))
            let count = try admin.execute(
                "SELECT count(*) FROM \(table) t WHERE strpos(t::text, $1) > 0", [.text(canary)]
            ).int(0, 0)
            return count == 0 ? nil : table
        }
    }

    /// Words another analyzer made are made again by `sync`, 5,000 items a transaction. A kill in the
    /// second batch leaves the first one made and the old words answering; `status` says how far it went,
    /// and the next `sync` goes on from there and swaps the new words in.
    @Test(arguments: TestBackend.available)
    func aKilledRemakeOfTheWordsGoesOnFromItsLastBatch(_ backend: TestBackend) async throws {
        let place = CLIPlace(directory: try TemporaryDirectory())
        try await place.use(backend, signingIn: "a")
        let count = 12_000
        let lines = (0..<count).map { n in
            #"{"uniqueIdentifier": "n\#(n)", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Harbour note \#(n)", "textContent": "The inspection of berth \#(n) found the cranes idle."}}"#
        }
        try await Self.run(place, ["import", "--account", "a", "-"], input: lines.joined(separator: "\n"))
        // As an index of another analyzer would be (its words are the same here, so the old ones answer).
        if let adminURL = place.databaseAdminURL {
            _ = try await PostgresConnection.opening(url: adminURL).run(
                "UPDATE replica.meta SET value = 'an older analyzer' WHERE key = 'analyzer'")
        } else {
            try Connection(path: place.store + "/accounts/a/indexes/default.sqlite").execute(
                "UPDATE meta SET value = 'an older analyzer' WHERE key = 'analyzer'")
        }
        let killed = try await ReplicaProcess.running(
            place.arguments + ["sync"], environment: ["REPLICA_TEST_CRASH": "words.remake:2"], timeout: 120)
        #expect(killed.wasSignaled, "the second batch's crash point kills it")
        let status = try await ReplicaProcess.running(place.arguments + ["status"])
        #expect(
            status.standardOutput.contains(
                "words: made by an older analyzer, not this version's analyzer; being made again: 5000 of \(count) items"
            ),
            "\(status.standardOutput)")
        let found = try await ReplicaProcess.running(place.arguments + ["search", "--json", "cranes"])
        #expect(found.status == 0 && found.standardOutput.contains("\"n0\""), "the old words answer meanwhile")

        let synced = try await ReplicaProcess.running(place.arguments + ["sync"])
        #expect(synced.status == 0, "\(synced.standardError)")
        #expect(synced.standardError.contains("made the words of 1 index again"), "\(synced.standardError)")
        let after = try await ReplicaProcess.running(place.arguments + ["status", "--json"])
        #expect(
            after.standardOutput.contains(#""current":true"#) && !after.standardOutput.contains("an older analyzer"),
            "\(after.standardOutput)")
        let store = try place.openStore()
        #expect(try await store.index(account: "a").itemCount() == count)
        var query = SearchQuery("berth 11999")
        query.disablesSemanticSearch = true
        query.requiresAllWords = true
        #expect(try await store.search(query).map(\.item.uniqueIdentifier.rawValue) == ["n11999"])
    }

    @Test(arguments: TestBackend.available)
    func theIndexIsAlwaysTheProjectionAfterAKill(_ backend: TestBackend) async throws {
        let baseSeed =
            ProcessInfo.processInfo.environment["REPLICA_CRASH_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1..<1_000_000_000)
        let trials = ProcessInfo.processInfo.environment["REPLICA_CRASH_SEED"] == nil ? Self.trials : 1
        // How many crash points each phase goes through, measured once on an undisturbed run.
        let calibration = try TemporaryDirectory()
        let calibrationStream = Stream(seed: baseSeed, count: 1200)
        let calibrationPlace = CLIPlace(directory: calibration)
        try await calibrationPlace.use(backend, signingIn: "a", "b")
        let importPoints = try await Self.run(
            calibrationPlace, ["records", "import", "-"], input: calibrationStream.lines.joined(separator: "\n")
        ).points
        try Self.version2.write(toFile: calibrationPlace.store + "/config.json", atomically: true, encoding: .utf8)
        let rebuildPoints = try await Self.run(calibrationPlace, ["sync"]).points
        let switchPoints = try await Self.run(calibrationPlace, ["switch-account", "b"]).points
        // On PostgreSQL an account's content goes in one transaction: the switch has two points (recorded,
        // content removed) where SQLite has more (its files, one by one).
        try #require(
            importPoints > 100 && rebuildPoints > 20 && switchPoints >= (backend == .postgres ? 2 : 4),
            "crash points: import \(importPoints), rebuild \(rebuildPoints), switch \(switchPoints)")
        var kills = 0

        for trial in 0..<trials {
            let seed = baseSeed &+ UInt64(trial)
            var generator = SplitMix(seed: seed)
            let points = (
                Int(generator.next() % UInt64(importPoints)) + 1,
                Int(generator.next() % UInt64(rebuildPoints)) + 1,
                Int(generator.next() % UInt64(switchPoints)) + 1
            )
            print(
                "crash trial \(trial): seed \(seed), kill points \(points.0)/\(importPoints), \(points.1)/\(rebuildPoints), \(points.2)/\(switchPoints)"
            )
            let directory = try TemporaryDirectory()
            let place = CLIPlace(directory: directory)
            try await place.use(backend, signingIn: "a", "b")
            let stream = Stream(seed: seed, count: 1200)
            let input = stream.lines.joined(separator: "\n")

            // 1. A long stream of changes, killed, then sent again (replays change nothing).
            kills +=
                try await Self.run(place, ["records", "import", "-"], input: input, crashAt: points.0).killed ? 1 : 0
            try await Self.run(place, ["records", "import", "-"], input: input)
            var store = try place.openStore()
            for account: AccountID in ["a", "b"] {
                try await Self.expectIndex(
                    store, account: account,
                    equals: stream.expectedItems(
                        account: account, projections: ProjectionSet(indexName: Store.defaultIndexName)),
                    seed: seed, phase: "after the import")
            }

            // 2. A projection version change, rebuilt by sync, killed, and synced again.
            try Self.version2.write(toFile: place.store + "/config.json", atomically: true, encoding: .utf8)
            kills += try await Self.run(place, ["sync"], crashAt: points.1).killed ? 1 : 0
            try await Self.run(place, ["sync"])
            let projections = try ConfigurationFile.parse(Self.version2).projections
            store = try place.openStore()
            for account: AccountID in ["a", "b"] {
                try await Self.expectIndex(
                    store, account: account, equals: stream.expectedItems(account: account, projections: projections),
                    seed: seed, phase: "after the rebuild")
            }

            // 3. A switch to b, killed, then run again: nothing of a is left in any file or row.
            #expect(
                try !Self.placesHolding(stream.canary, place).isEmpty,
                "seed \(seed): the check does not see account a's text")
            kills += try await Self.run(place, ["switch-account", "b"], crashAt: points.2).killed ? 1 : 0
            try await Self.run(place, ["switch-account", "b"])
            store = try place.openStore()
            #expect(try await store.signedInAccounts().map(\.id) == ["b"], "seed \(seed)")
            #expect(try Self.placesHolding(stream.canary, place) == [], "seed \(seed): account a's text is still kept")
            try await Self.expectIndex(
                store, account: "b", equals: stream.expectedItems(account: "b", projections: projections),
                seed: seed, phase: "after the switch")
        }
        // Kill points come from one stream's count; other streams pass through about as many.
        #expect(kills >= trials * 3 * 2 / 3, "only \(kills) of \(trials * 3) runs were killed")
    }
}
