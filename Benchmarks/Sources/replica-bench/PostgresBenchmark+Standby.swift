import Foundation
import Replica
import ReplicaPostgres

/// Issue 21 §2–3: searches served by a streaming-replication standby on this machine (two servers on
/// loopback sockets, fsync on), beside the same searches on the primary in the same run.
extension PostgresBenchmark {
    static func standby(_ primary: PostgresServer, _ options: Options) async throws {
        let corpus = try require(options.corpus, "the standby part needs --corpus DIR")
        let paragraphs = try Corpus.paragraphs(in: corpus, count: options.itemCount)
        let standby = try PostgresServer(script: options.script, name: "standby", standbyOf: primary)
        defer { standby.stop() }
        print(
            "\n## A standby that serves searches: \(paragraphs.count) paragraphs in one account, \(options.writes) writes"
        )

        let directory = try Measure.scratchDirectory("pg-standby-store")
        defer { Measure.removeDirectory(directory) }
        let onPrimary = try postgresStore(directory + "/primary", url: primary.appURL)
        var configuration = Store.Configuration()
        configuration.readDatabase = Store.ReadDatabase(url: standby.appURL)
        let onStandby = try postgresStore(directory + "/standby", url: primary.appURL, configuration: configuration)
        let account = AccountID("standby-bench")
        try await onPrimary.signIn(account)
        try await onPrimary.index(account: account).indexItems(paragraphs.map(IndexBenchmark.makeItem))
        try settle(primary)
        let lag = try await Measure.seconds { try waitForReplay(primary: primary, standby: standby) }
        print("the standby replayed the load and VACUUM ANALYZE \(Measure.format(lag * 1000)) ms after they ended")

        // Ranked searches, no write of this process before them: each query on the primary and on the
        // standby, one after the other, the order alternating.
        let queries = Corpus.queries(from: paragraphs, count: options.queryCount, seed: 2026)
        for query in queries.prefix(10) {
            _ = try await IndexBenchmark.timedSearch(onPrimary, query, ranked: true)
            _ = try await IndexBenchmark.timedSearch(onStandby, query, ranked: true)
        }
        var primaryTimes: [Double] = []
        var standbyTimes: [Double] = []
        for (number, query) in queries.enumerated() {
            if number % 2 == 0 {
                primaryTimes.append(try await IndexBenchmark.timedSearch(onPrimary, query, ranked: true))
                standbyTimes.append(try await IndexBenchmark.timedSearch(onStandby, query, ranked: true))
            } else {
                standbyTimes.append(try await IndexBenchmark.timedSearch(onStandby, query, ranked: true))
                primaryTimes.append(try await IndexBenchmark.timedSearch(onPrimary, query, ranked: true))
            }
        }

        // Read-your-writes: a write of one item, then at once a search for its word, through each store.
        var afterWrite: [String: [Double]] = [:]
        let index = try await onStandby.index(account: account)
        let primaryIndex = try await onPrimary.index(account: account)
        for number in 0..<options.writes {
            let word = "ryw\(number)word"
            var attributes = AttributeSet(contentType: .plainText)
            attributes.title = "written \(number)"
            attributes.textContent = "a fresh note with \(word) in it"
            let item = SearchableItem(
                uniqueIdentifier: ItemIdentifier("ryw-\(number)"), domainIdentifier: nil, attributeSet: attributes,
                expirationDate: .distantFuture)
            for (name, store, target) in [("standby", onStandby, index), ("primary", onPrimary, primaryIndex)] {
                try await target.indexItems([item])
                var found = 0
                afterWrite[name, default: []].append(
                    try await Measure.seconds {
                        found = try await store.search(SearchQuery(word)).count
                    })
                guard found == 1 else {
                    throw BenchError("a search after its write on the \(name) found \(found) items, not 1")
                }
            }
        }
        let routing = try require(onStandby.readRouting, "the store with a standby has no read routing")
        let waits = routing.replayWaits.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }

        func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
        print(
            """

            | measure | on the standby | on the primary | standby ÷ primary |
            |---|---|---|---|
            | ranked top-20 search p50, \(queries.count) two-word queries (ms) | \(ms(standbyTimes, 50)) | \(ms(primaryTimes, 50)) | \(Measure.format(Measure.percentile(standbyTimes, 50) / Measure.percentile(primaryTimes, 50))) |
            | ranked top-20 search p99 (ms) | \(ms(standbyTimes, 99)) | \(ms(primaryTimes, 99)) | \(Measure.format(Measure.percentile(standbyTimes, 99) / Measure.percentile(primaryTimes, 99))) |
            | search just after a write of this process, p50 (ms) | \(ms(afterWrite["standby"]!, 50)) | \(ms(afterWrite["primary"]!, 50)) | \(Measure.format(Measure.percentile(afterWrite["standby"]!, 50) / Measure.percentile(afterWrite["primary"]!, 50))) |
            | search just after a write of this process, p99 (ms) | \(ms(afterWrite["standby"]!, 99)) | \(ms(afterWrite["primary"]!, 99)) | \(Measure.format(Measure.percentile(afterWrite["standby"]!, 99) / Measure.percentile(afterWrite["primary"]!, 99))) |
            | read-your-writes wait for the standby's replay, p50 / p99 (ms) | \(ms(waits, 50)) / \(ms(waits, 99)) | | |

            reads: \(routing.servedByStandby) served by the standby, \(routing.servedByPrimaryAfterWaiting) by the primary after waiting \
            250 ms, \(routing.servedByPrimaryStandbyStale) by the primary with the standby stale (paused, or behind past its \
            maximum lag), \(routing.servedByPrimaryStandbyUnavailable) by the primary with the standby unavailable
            """)
    }

    /// Waits until the standby has replayed everything the primary has written so far.
    static func waitForReplay(primary: PostgresServer, standby: PostgresServer) throws {
        let written = try require(
            WALPosition(
                text: try primary.ownerConnection().execute("SELECT pg_current_wal_insert_lsn()::text").string(0, 0)
                    ?? ""),
            "no WAL position from the primary")
        let connection = try PostgresConnection(url: standby.appURL)
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline {
            if let text = try connection.execute("SELECT pg_last_wal_replay_lsn()::text").string(0, 0),
                let replayed = WALPosition(text: text), replayed >= written
            {
                return
            }
            usleep(1_000)
        }
        throw BenchError("the standby did not replay the load within 10 minutes")
    }
}
