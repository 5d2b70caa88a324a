import Foundation
import Replica
import ReplicaPostgres
import ReplicaPostgresHome
import ReplicaSQLite
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Issue 21 §3: many processes on one store. 8 writer processes and 8 searcher processes, each a
/// `replica-bench shared-load-worker` of its own, and `replica watch` in another, share one store for a
/// while: on PostgreSQL (a primary and a streaming standby the benchmark starts; the processes read
/// through the standby with read-your-writes), then the same run on SQLite files beside it.
///
/// Writers: three through the API (`indexItems`, then at once a search for the item's word from the same
/// process, which must find it: no read staler than the standby's bound), three through the record store
/// (`records.write`; the watcher projects), two into a table of the app's own database that the watcher
/// follows. Searchers run two-word ranked searches over every account. At the end every write must be
/// in the index and a sample searchable by its word; errors are counted by kind.
enum SharedLoadBenchmark {
    static let accounts: [AccountID] = ["alice", "bob"]
    static let roles =
        ["api", "api", "api", "records", "records", "records", "table", "table"]
        + Array(repeating: "search", count: 8)
    /// The words items are made of and searches look for.
    static let vocabulary = """
        plan launch budget review meeting report draft invoice travel schedule design release backup server \
        garden recipe holiday contract market sales customer support ticket battery camera network storage \
        music video photo letter family school lesson doctor health weather train flight hotel museum river \
        mountain kitchen window printer laptop update project quarter summary
        """.split(separator: " ").map(String.init)

    /// What one worker did, as it writes it to its file at the end.
    struct Report {
        var role: String
        var writes = 0
        /// Identifiers written, by account.
        var identifiers: [String: [String]] = [:]
        /// Each write's own word with its account, for the searches of the check.
        var words: [(account: String, word: String)] = []
        var stale = 0
        var errors: [String: Int] = [:]
        var searches: [Double] = []
        /// Record writes → searchable (the one writer that waits).
        var waits: [Double] = []
        var replayWaits: [Double] = []
        var routing: [String: Int] = [:]
        var seconds = 0.0

        var json: JSON {
            .object([
                ("role", .string(role)), ("writes", .number(Double(writes))), ("stale", .number(Double(stale))),
                ("seconds", .number(seconds)),
                ("identifiers", .object(identifiers.map { ($0.key, .array($0.value.map(JSON.string))) })),
                ("words", .array(words.map { .array([.string($0.account), .string($0.word)]) })),
                ("errors", .object(errors.map { ($0.key, .number(Double($0.value))) })),
                ("searches", .array(searches.map(JSON.number))), ("waits", .array(waits.map(JSON.number))),
                ("replayWaits", .array(replayWaits.map(JSON.number))),
                ("routing", .object(routing.map { ($0.key, .number(Double($0.value))) })),
            ])
        }

        init(role: String) { self.role = role }

        init(json: JSON) throws {
            role = try require(json["role"]?.stringValue, "a worker's report has no role")
            writes = json["writes"]?.intValue ?? 0
            stale = json["stale"]?.intValue ?? 0
            seconds = json["seconds"]?.doubleValue ?? 0
            for (account, list) in json["identifiers"]?.objectValue ?? [] {
                identifiers[account] = list.arrayValue?.compactMap(\.stringValue)
            }
            words = (json["words"]?.arrayValue ?? []).compactMap { pair in
                guard let account = pair.arrayValue?.first?.stringValue, let word = pair.arrayValue?.last?.stringValue
                else { return nil }
                return (account, word)
            }
            for (reason, count) in json["errors"]?.objectValue ?? [] { errors[reason] = count.intValue ?? 0 }
            searches = json["searches"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            waits = json["waits"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            replayWaits = json["replayWaits"]?.arrayValue?.compactMap(\.doubleValue) ?? []
            for (name, count) in json["routing"]?.objectValue ?? [] { routing[name] = count.intValue ?? 0 }
        }

        mutating func note(_ error: any Error) {
            // The error's code and its first words: replica's errors never carry indexed text.
            let reason =
                (error as? ReplicaError).map { "\($0.code.rawValue): \($0.message.prefix(80))" }
                ?? String(describing: type(of: error)) + " (" + String(String(describing: error).prefix(120)) + ")"
            errors[reason, default: 0] += 1
        }
    }

    /// Where a run keeps its store and the app's table, handed to the workers in their environment.
    struct Place {
        var store: String
        var database: String?
        var readDatabase: String?
        /// The app's table's database: a `postgresql://` URL, or a SQLite file's path.
        var app: String

        var searchRate: Double?

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["REPLICA_BENCH_SEARCH_RATE"] = searchRate.map { String($0) }
            environment["REPLICA_MODEL_DIR"] = "off"
            environment["REPLICA_BENCH_STORE"] = store
            environment["REPLICA_BENCH_APP"] = app
            environment["REPLICA_DATABASE"] = database
            environment["REPLICA_READ_DATABASE"] = readDatabase
            return environment
        }

        static func fromEnvironment() throws -> Place {
            let environment = ProcessInfo.processInfo.environment
            return Place(
                store: try require(environment["REPLICA_BENCH_STORE"], "the worker needs REPLICA_BENCH_STORE"),
                database: environment["REPLICA_DATABASE"], readDatabase: environment["REPLICA_READ_DATABASE"],
                app: try require(environment["REPLICA_BENCH_APP"], "the worker needs REPLICA_BENCH_APP"),
                searchRate: environment["REPLICA_BENCH_SEARCH_RATE"].flatMap(Double.init))
        }

        func openStore() throws -> Store {
            guard let database else { return try Store(directory: URL(fileURLWithPath: store)) }
            var configuration = Store.Configuration()
            configuration.readDatabase = readDatabase.map { Store.ReadDatabase(url: $0) }
            return try Store(
                directory: URL(fileURLWithPath: store), database: .postgres(url: database), configuration: configuration
            )
        }
    }

    // MARK: The run

    /// - Parameter searchRate: searches a second, all searchers together (each waits its share between
    ///   searches); `nil`: each searcher searches again 20 ms after its last search ended.
    static func run(replica: String, script: String, seconds: Int, backends: [String], searchRate: Double?) async throws
    {
        let me = try require(Bundle.main.executablePath, "cannot tell where replica-bench is")
        print(
            "shared load: \(seconds) s a backend; 8 writer processes (3 API, 3 record store, 2 a followed table of the app's), "
                + "8 searcher processes (\(searchRate.map { "\(Measure.format($0, 1)) searches a second in all" } ?? "each 20 ms after the last"))"
                + ", `replica watch` in its own; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        for backend in backends {
            FileHandle.standardError.write(Data("shared load: \(backend)\n".utf8))
            let root = try Measure.scratchDirectory("shared-load")
            defer { Measure.removeDirectory(root) }
            var servers: [PostgresServer] = []
            defer { servers.reversed().forEach { $0.stop() } }
            let place: Place
            let followed: String
            if backend == "postgres" {
                let primary = try PostgresServer(script: script, name: "shared")
                servers.append(primary)
                try PostgresBenchmark.migrate(primary)
                let standby = try PostgresServer(script: script, name: "shared-standby", standbyOf: primary)
                servers.append(standby)
                try primary.runAsOwner(
                    """
                    CREATE SCHEMA app;
                    CREATE TABLE app.notes (id bigint PRIMARY KEY, owner text NOT NULL, revision bigint NOT NULL, title text, body text);
                    """)
                followed = primary.ownerURL + "&options=-csearch_path%3Dapp"
                place = Place(
                    store: root + "/store", database: primary.appURL, readDatabase: standby.appURL, app: followed,
                    searchRate: searchRate)
            } else {
                followed = root + "/app.sqlite"
                let app = try Connection(path: followed)
                try app.execute("PRAGMA journal_mode = WAL")
                try app.execute(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, revision INTEGER NOT NULL, title TEXT, body TEXT)"
                )
                place = Place(
                    store: root + "/store", database: nil, readDatabase: nil, app: followed, searchRate: searchRate)
            }
            let config = root + "/config.json"
            try JSON.object([
                (
                    "follow",
                    .array([
                        .object([
                            ("database", .string(followed)), ("table", "notes"), ("kind", "note"),
                            ("account", .object([("column", "owner")])), ("version", "revision"),
                        ])
                    ])
                )
            ]).serialized().write(toFile: config, atomically: true, encoding: .utf8)

            let store = try place.openStore()
            for account in accounts { try await store.signIn(account) }
            // The triggers go in before the app writes (as an app's deployment would install them).
            let tables = try ConfigurationFile.load(from: URL(fileURLWithPath: config)).followedTables
            _ = try await ProjectionEngine(
                store: store, projections: ProjectionSet(indexName: Store.defaultIndexName),
                followedTables: tables
            ).catchUpAllAccounts()

            let logs = root + "/logs"
            try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
            let watchLog = open(logs + "/watch.err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer { close(watchLog) }
            let watcher = try ChildProcess(
                [replica, "--store", place.store, "--config", config, "watch"], environment: place.environment,
                standardError: .descriptor(watchLog))
            var peak = 0
            var workers: [ChildProcess] = []
            for (number, role) in roles.enumerated() {
                workers.append(
                    try ChildProcess(
                        [me, "shared-load-worker", role, String(number), String(seconds), logs + "/\(number).json"],
                        environment: place.environment, standardError: .descriptor(watchLog)))
            }
            while workers.contains(where: \.isRunning) {
                peak = max(peak, LoadBenchmark.residentKilobytes(of: watcher.processIdentifier))
                try await Task.sleep(for: .seconds(1))
            }
            let failed = workers.enumerated().filter { (_, worker) in
                let ending = worker.waitUntilExit()
                return ending.wasSignaled || ending.status != 0
            }
            guard failed.isEmpty else {
                throw BenchError("workers \(failed.map(\.offset)) failed: see \(logs)/watch.err")
            }
            let reports = try roles.indices.map { number in
                try Report(json: JSON.parse(String(contentsOfFile: logs + "/\(number).json", encoding: .utf8)))
            }

            // Every write in the index (by identifier, within two minutes of the end), and a sample found by its word.
            let ended = Date()
            var missing: [String: [String]] = [:]
            for report in reports {
                for (account, identifiers) in report.identifiers { missing[account, default: []] += identifiers }
            }
            let written = missing.values.reduce(0) { $0 + $1.count }
            while missing.values.contains(where: { !$0.isEmpty }), Date().timeIntervalSince(ended) < 120 {
                for (account, identifiers) in missing {
                    let index = try await store.index(account: AccountID(account))
                    var still: [String] = []
                    for start in stride(from: 0, to: identifiers.count, by: 500) {
                        let chunk = Array(identifiers[start..<min(start + 500, identifiers.count)])
                        let items = try await index.items(withIdentifiers: chunk.map { ItemIdentifier($0) })
                        let found = Set(items.map { $0.uniqueIdentifier.rawValue })
                        still += chunk.filter { !found.contains($0) }
                    }
                    missing[account] = still
                }
                if missing.values.contains(where: { !$0.isEmpty }) { try await Task.sleep(for: .seconds(1)) }
            }
            let caughtUp = Date().timeIntervalSince(ended)
            let lost = missing.values.reduce(0) { $0 + $1.count }
            var generator = SystemRandomNumberGenerator()
            var unsearchable = 0
            var sampled = 0
            for report in reports where !report.words.isEmpty {
                for (account, word) in (0..<50).compactMap({ _ in report.words.randomElement(using: &generator) }) {
                    sampled += 1
                    let index = try await store.index(account: AccountID(account))
                    if try await index.search(SearchQuery(word, limit: 1)).isEmpty { unsearchable += 1 }
                }
            }
            watcher.signal(SIGTERM)
            let watchEnding = watcher.wait(timeout: 30)

            // Sizes, for the capacity plan.
            var size = ""
            if let primary = servers.first {
                let bytes =
                    try primary.queryAsOwner(
                        """
                        SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = 'replica' AND c.relkind = 'r'
                        """
                    ).int(0, 0) ?? 0
                size = "replica's tables on PostgreSQL after the run (rows, TOAST, indexes): \(bytes / 1_048_576) MiB"
            } else {
                size = "the store's folder after the run: \(directorySize(place.store) / 1_048_576) MiB"
            }

            func ms(_ values: [Double], _ p: Double) -> String {
                values.isEmpty ? "–" : Measure.format(Measure.percentile(values, p) * 1000)
            }
            let searches = reports.flatMap(\.searches)
            let waits = reports.flatMap(\.replayWaits)
            let searchable = reports.flatMap(\.waits)
            let elapsed = Double(seconds)
            print(
                "\n## \(backend == "postgres" ? "PostgreSQL (a primary and a streaming standby; reads through the standby)" : "SQLite files (one store folder)")"
            )
            print(
                "| writers | processes | writes | writes a second | not in the index 2 min after the end |\n|---|---|---|---|---|"
            )
            for role in ["api", "records", "table"] {
                let mine = reports.filter { $0.role == role }
                let count = mine.reduce(0) { $0 + $1.writes }
                let ids = Set(mine.flatMap { $0.identifiers.values.joined() })
                let gone = missing.values.joined().filter { ids.contains($0) }.count
                print("| \(role) | \(mine.count) | \(count) | \(Int(Double(count) / elapsed)) | \(gone) |")
            }
            let errors = reports.reduce(into: [String: Int]()) { sum, report in
                for (reason, count) in report.errors { sum[report.role + " " + reason, default: 0] += count }
            }
            var routing = reports.reduce(into: [String: Int]()) { sum, report in
                for (name, count) in report.routing { sum[name, default: 0] += count }
            }
            if routing.isEmpty { routing["(no standby)"] = 0 }
            print(
                """

                - items written: \(written); not in the index 2 min after the writers stopped: \(lost)\(lost == 0 ? "; the last one in the index \(Measure.format(caughtUp)) s after they stopped" : "")
                - sampled words found by a search: \(sampled - unsearchable) of \(sampled)
                - stale reads (an API write not found by a search of the same process right after it): \(reports.reduce(0) { $0 + $1.stale })
                - errors: \(errors.isEmpty ? "none" : errors.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: "; "))
                - searches: \(searches.count) (\(Int(Double(searches.count) / elapsed)) a second), ranked top 20, p50 \(ms(searches, 50)) ms, p99 \(ms(searches, 99)) ms
                - a batch of 5 records written → searchable (`records.waitUntilSearchable`; the watcher projects it): p50 \(ms(searchable, 50)) ms, p99 \(ms(searchable, 99)) ms, \(searchable.count) batches
                - read-your-writes waits for the standby: p50 \(ms(waits, 50)) ms, p99 \(ms(waits, 99)) ms, max \(ms(waits, 100)) ms
                - reads: \(routing.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                - replica watch: peak resident \(peak / 1024) MiB; ended \(watchEnding.map { $0.wasSignaled ? "by signal \($0.status)" : "with status \($0.status)" } ?? "not within 30 s")
                - \(size)
                """)
        }
    }

    static func directorySize(_ path: String) -> Int {
        guard let files = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total = 0
        for case let file as String in files {
            total += (try? FileManager.default.attributesOfItem(atPath: path + "/" + file)[.size] as? Int) ?? 0
        }
        return total
    }

    // MARK: A worker

    static func work(role: String, number: Int, seconds: Int, output: String) async throws {
        let place = try Place.fromEnvironment()
        let store = try place.openStore()
        let account = accounts[number % accounts.count]
        let deadline = ContinuousClock.now + .seconds(seconds)
        var report = Report(role: role)
        var generator = SeededGenerator(seed: UInt64(number) &+ 2026)
        func sentence(_ count: Int) -> String {
            (0..<count).map { _ in vocabulary[Int(generator.next() % UInt64(vocabulary.count))] }.joined(separator: " ")
        }
        let started = ContinuousClock.now
        var sequence = 0
        switch role {
        case "api":
            let index = try await store.index(account: account)
            while ContinuousClock.now < deadline {
                let word = "zqapi\(number)x\(sequence)"
                let identifier = "api-\(number)-\(sequence)"
                var attributes = AttributeSet(contentType: .plainText)
                attributes.title = sentence(3)
                attributes.textContent = "\(word) \(sentence(12))"
                do {
                    try await index.indexItems([
                        SearchableItem(
                            uniqueIdentifier: ItemIdentifier(identifier), attributeSet: attributes,
                            expirationDate: .distantFuture)
                    ])
                    report.writes += 1
                    report.identifiers[account.rawValue, default: []].append(identifier)
                    report.words.append((account.rawValue, word))
                    if try await store.search(SearchQuery(word, limit: 1)).isEmpty { report.stale += 1 }
                } catch { report.note(error) }
                sequence += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        case "records":
            while ContinuousClock.now < deadline {
                var batch: [Record] = []
                for _ in 0..<5 {
                    let id = "r\(number)-\(sequence)"
                    batch.append(
                        Record(
                            account: account, kind: "memo", id: id, version: 1,
                            fields: [
                                "title": .string(sentence(3)),
                                "body": .string("zqrec\(number)x\(sequence) \(sentence(12))"),
                            ]))
                    sequence += 1
                }
                do {
                    _ = try await store.records.write(batch)
                    if number == 3 {
                        // This writer waits for its batch to be searchable (the watcher, another process,
                        // projects it): the figure of write → searchable for records.
                        let written = ContinuousClock.now
                        if try await store.records.waitUntilSearchable(account: account, timeout: .seconds(60)) {
                            let took = ContinuousClock.now - written
                            report.waits.append(
                                Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
                        } else {
                            report.errors["not searchable within 60 s", default: 0] += 1
                        }
                    }
                    report.writes += batch.count
                    for record in batch {
                        report.identifiers[account.rawValue, default: []].append(
                            "memo:\(account.rawValue):\(record.id)")
                        report.words.append(
                            (account.rawValue, "zqrec\(number)x\(record.id.split(separator: "-").last!)"))
                    }
                } catch { report.note(error) }
                try await Task.sleep(for: .milliseconds(100))
            }
        case "table":
            let write = try tableWriter(place.app)
            while ContinuousClock.now < deadline {
                let rows = (0..<10).map { offset in
                    (
                        id: Int64(number) * 100_000_000 + Int64(sequence + offset), title: sentence(3),
                        body: "zqrow\(number)x\(sequence + offset) \(sentence(12))"
                    )
                }
                sequence += rows.count
                do {
                    try write(account.rawValue, rows)
                    report.writes += rows.count
                    for row in rows {
                        report.identifiers[account.rawValue, default: []].append("note:\(account.rawValue):\(row.id)")
                        report.words.append((account.rawValue, String(row.body.prefix { $0 != " " })))
                    }
                } catch { report.note(error) }
                try await Task.sleep(for: .milliseconds(100))
            }
        default:  // search
            // With a rate, each of the 8 searchers starts a search every 8/rate seconds (skipping a turn it
            // is late for), so that both backends get the same searches to serve.
            let interval = place.searchRate.map { Duration.seconds(8 / $0) }
            var next = ContinuousClock.now + (interval ?? .zero) * (Double(number % 8) / 8)
            while ContinuousClock.now < deadline {
                if let interval {
                    if next > ContinuousClock.now { try await Task.sleep(until: next, clock: .continuous) }
                    while next <= ContinuousClock.now { next += interval }
                }
                let query = SearchQuery(sentence(2), limit: 20)
                do {
                    report.searches.append(try await Measure.seconds { _ = try await store.search(query) })
                } catch { report.note(error) }
                if interval == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
        }
        let took = ContinuousClock.now - started
        report.seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
        if let routing = store.readRouting {
            report.routing = [
                "standby": routing.servedByStandby, "primary after waiting": routing.servedByPrimaryAfterWaiting,
                "primary, standby unavailable": routing.servedByPrimaryStandbyUnavailable,
            ]
            report.replayWaits = routing.replayWaits.map {
                Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
            }
        }
        try report.json.serialized().write(toFile: output, atomically: true, encoding: .utf8)
    }

    /// Writes rows of the app's table, one transaction a batch: on PostgreSQL with a statement of its
    /// own, on SQLite through a connection of its own (waiting its turn behind the other writer).
    static func tableWriter(_ app: String) throws -> (String, [(id: Int64, title: String, body: String)]) throws -> Void
    {
        if app.hasPrefix("postgresql://") {
            let connection = try PostgresConnection(url: app)
            return { owner, rows in
                try connection.transaction {
                    for row in rows {
                        try connection.execute(
                            "INSERT INTO notes(id, owner, revision, title, body) VALUES ($1, $2, 1, $3, $4)",
                            [.int(row.id), .text(owner), .text(row.title), .text(row.body)])
                    }
                }
            }
        }
        let connection = try Connection(path: app)
        return { owner, rows in
            let insert = try connection.cached(
                "INSERT INTO notes(id, owner, revision, title, body) VALUES (?, ?, 1, ?, ?)")
            try connection.transaction {
                for row in rows { try insert.run([.integer(row.id), .text(owner), .text(row.title), .text(row.body)]) }
            }
        }
    }
}
