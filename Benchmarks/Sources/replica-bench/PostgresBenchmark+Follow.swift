import Foundation
import Replica
import ReplicaPostgres
import ReplicaSQLite
import Synchronization

/// Issue 21 §3: a followed table of the app's own database, change → searchable while the app writes
/// 1,000 rows a second (ten rows a transaction, every 10 ms): on PostgreSQL (the app's table and the
/// store in the benchmark's server, the engine woken by the trigger's notification), beside a SQLite
/// app table followed into a SQLite store in the same run (the engine looks every 100 ms and at the table
/// every second, as `replica watch` does).
extension PostgresBenchmark {
    static func follow(_ server: PostgresServer, _ options: Options) async throws {
        print("\n## A followed table while the app writes 1,000 rows a second, \(options.followSeconds) s each")
        var rows: [String: (latencies: [Double], written: Int, seconds: Double)] = [:]
        for backend in ["PostgreSQL", "SQLite"] {
            FileHandle.standardError.write(Data("follow: \(backend)\n".utf8))
            let directory = try Measure.scratchDirectory("follow")
            defer { Measure.removeDirectory(directory) }
            let store: Store
            let table: FollowedTable
            let write: @Sendable (Int, Int) throws -> Void
            if backend == "PostgreSQL" {
                try server.runAsOwner(
                    """
                    DROP SCHEMA IF EXISTS app CASCADE; CREATE SCHEMA app;
                    CREATE TABLE app.notes (id bigint PRIMARY KEY, owner text NOT NULL, revision bigint NOT NULL, title text, body text);
                    """)
                // The schema `app` first for the role that follows it, so that the log goes there too.
                let url = try require(
                    URL(string: server.ownerURL + "&options=-csearch_path%3Dapp"), "the owner's URL is not a URL")
                table = FollowedTable(
                    database: url, table: "notes", kind: "note", account: .column("owner"), versionColumn: "revision")
                store = try postgresStore(directory, url: server.appURL)
                let connection = Mutex(try server.ownerConnection())
                write = { first, count in
                    try connection.withLock { connection in
                        // One statement a transaction, as an app writing a batch would.
                        let ids = Array(first..<(first + count))
                        try connection.execute(
                            """
                            INSERT INTO app.notes(id, owner, revision, title, body)
                            SELECT id, 'alice', 1, 'note ' || id, 'written for the benchmark as w' || id || 'w' FROM unnest($1::bigint[]) AS id
                            """, [.text("{" + ids.map(String.init).joined(separator: ",") + "}")])
                    }
                }
            } else {
                let path = directory + "/app.sqlite"
                let setup = try Connection(path: path)
                try setup.execute(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, revision INTEGER NOT NULL, title TEXT, body TEXT)"
                )
                table = FollowedTable(
                    database: URL(fileURLWithPath: path), table: "notes", kind: "note", account: .column("owner"),
                    versionColumn: "revision")
                store = try Store(directory: URL(fileURLWithPath: directory + "/store"))
                let connection = Mutex(setup)
                write = { first, count in
                    try connection.withLock { connection in
                        let insert = try connection.cached(
                            "INSERT INTO notes(id, owner, revision, title, body) VALUES (?, 'alice', 1, ?, ?)")
                        try connection.transaction {
                            for id in first..<(first + count) {
                                try insert.run([
                                    .integer(Int64(id)), .text("note \(id)"),
                                    .text("written for the benchmark as w\(id)w"),
                                ])
                            }
                        }
                    }
                }
            }
            try await store.signIn("alice")
            let engine = ProjectionEngine(
                store: store, projections: ProjectionSet(indexName: Store.defaultIndexName), followedTables: [table])
            _ = try await engine.catchUpAllAccounts()
            let running = Task { await engine.run(every: .milliseconds(100)) }

            // The app: ten rows every 10 ms, each row's commit time kept.
            let committed = Mutex<[Int: ContinuousClock.Instant]>([:])
            let stop = Atomic<Bool>(false)
            let writer = Thread {
                var next = 0
                var tick = ContinuousClock.now
                while !stop.load(ordering: .relaxed) {
                    do {
                        try write(next, 10)
                        let now = ContinuousClock.now
                        committed.withLock { for id in next..<(next + 10) { $0[id] = now } }
                        next += 10
                    } catch {
                        FileHandle.standardError.write(Data("follow: a write failed: \(error)\n".utf8))
                    }
                    tick = tick.advanced(by: .milliseconds(10))
                    let wait = tick - ContinuousClock.now
                    if wait > .zero {
                        Thread.sleep(
                            forTimeInterval: Double(wait.components.attoseconds) / 1e18
                                + Double(wait.components.seconds))
                    }
                }
            }
            let start = ContinuousClock.now
            writer.start()
            // One row at a time: the last row committed, looked for in the index (every 2 ms, by its
            // identifier: a search's cost would take the cores from the engine) until it is there.
            let index = try await store.index(account: "alice")
            var latencies: [Double] = []
            while ContinuousClock.now - start < .seconds(options.followSeconds) {
                guard let (id, at) = committed.withLock({ $0.max(by: { $0.key < $1.key }) }) else {
                    try await Task.sleep(for: .milliseconds(1))
                    continue
                }
                while try await index.items(withIdentifiers: [ItemIdentifier("note:alice:\(id)")]).isEmpty {
                    guard ContinuousClock.now - at < .seconds(60) else {
                        throw BenchError("row \(id) was not in the index within 60 s")
                    }
                    try await Task.sleep(for: .milliseconds(2))
                }
                let took = ContinuousClock.now - at
                latencies.append(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
            }
            stop.store(true, ordering: .relaxed)
            while writer.isExecuting { try await Task.sleep(for: .milliseconds(5)) }
            let seconds = ContinuousClock.now - start
            running.cancel()
            _ = await running.value
            let written = committed.withLock { $0.count }
            rows[backend] = (
                latencies, written, Double(seconds.components.seconds) + Double(seconds.components.attoseconds) / 1e18
            )
        }
        func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
        print(
            """

            | followed table | rows written a second | change → searchable p50 (ms) | p99 (ms) | samples |
            |---|---|---|---|---|
            """)
        for backend in ["PostgreSQL", "SQLite"] {
            let (latencies, written, seconds) = rows[backend]!
            print(
                "| \(backend) | \(Int(Double(written) / seconds)) | \(ms(latencies, 50)) | \(ms(latencies, 99)) | \(latencies.count) |"
            )
        }
    }
}
