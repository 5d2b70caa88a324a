import Foundation
import Replica
import ReplicaPostgres
import ReplicaSQLite
import Synchronization

/// Issue 45 §4: an index whose words another analyzer made, made again in the background (a batch per
/// transaction into a new full-text table, swapped in at once), beside bulk indexing of the same items
/// in the same round.
enum RemakeBenchmark {
    static func run(corpus: String, itemCount: Int, rounds: Int, batchSize: Int, postgres: Bool, script: String)
        async throws
    {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let items = paragraphs.map(IndexBenchmark.makeItem)
        print(
            "corpus: \(paragraphs.count) paragraphs, \(rounds) rounds, \(batchSize) items a transaction, on \(postgres ? "PostgreSQL" : "SQLite")"
        )
        var bulk: [Double] = []
        var listBuild: [Double] = []
        var remade: [Double] = []
        var remadeWithLists: [Double] = []
        var searchesDuring: [Double] = []
        var searchesBefore: [Double] = []
        var swaps: [Double] = []
        var remadeUnchanged: [Double] = []
        // On PostgreSQL: a throwaway server (fsync on), each round an account of its own.
        let server = postgres ? try PostgresServer(script: script, name: "remake") : nil
        defer { server?.stop() }
        if let server { try PostgresBenchmark.migrate(server) }
        func open(_ directory: String) throws -> Store {
            guard let server else { return try Store(directory: URL(fileURLWithPath: directory)) }
            return try PostgresBenchmark.postgresStore(directory, url: server.appURL)
        }
        for round in 0..<rounds {
            let directory = try Measure.scratchDirectory("remake")
            defer { Measure.removeDirectory(directory) }
            var store = try open(directory)
            let account = AccountID("bench\(round)")
            try await store.signIn(account)
            var index = try await store.index(account: account)
            bulk.append(try await Measure.seconds { try await index.indexItems(items) })
            let path = directory + "/accounts/\(account)/indexes/default.sqlite"
            // Without ranking lists, then with them (the remake builds them again after the swap); then
            // with them, after a version change that changes no word.
            for (lists, changed) in [(false, true), (true, true), (true, false)] {
                if lists && changed {
                    listBuild.append(try await Measure.seconds { try await index.rebuildRankingLists() })
                }
                if let server {
                    // Every item's words as another analyzer's would be: the same words without their
                    // positions, so no item's are the new analyzer's and every one is written again.
                    if changed {
                        try server.runAsOwner(
                            "UPDATE replica.items SET words = strip(words) WHERE account = '\(account)'")
                        try server.runAsOwner("VACUUM ANALYZE replica.items")
                    }
                    try server.runAsOwner(
                        "UPDATE replica.meta SET value = 'an older analyzer' WHERE key = 'analyzer' AND account = '\(account)'"
                    )
                } else {
                    try Connection(path: path).execute(
                        "UPDATE meta SET value = 'an older analyzer' WHERE key = 'analyzer'")
                }
                store = try open(directory)
                index = try await store.index(account: account)
                if lists && changed {
                    for _ in 0..<50 {
                        searchesBefore.append(
                            try await IndexBenchmark.timedSearch(store, "memory allocation", ranked: true))
                    }
                }
                let searching = Task { [store] in
                    // Searches while the words are made again (in the pass with lists; the pass without
                    // them is timed alone): ranked two-word queries, one every 20 ms.
                    var times: [Double] = []
                    while lists && changed && !Task.isCancelled {
                        times.append(try await IndexBenchmark.timedSearch(store, "memory allocation", ranked: true))
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    return times
                }
                let lastBatch = Mutex(Date())
                let started = Date()
                try await index.remakeWords(batchSize: batchSize) { _, _ in lastBatch.withLock { $0 = Date() } }
                let seconds = Date().timeIntervalSince(started)
                if lists && changed { swaps.append(Date().timeIntervalSince(lastBatch.withLock { $0 })) }
                searching.cancel()
                if let times = try? await searching.value, lists && changed { searchesDuring += times }
                switch (lists, changed) {
                case (_, false): remadeUnchanged.append(seconds)
                case (true, true): remadeWithLists.append(seconds)
                case (false, true): remade.append(seconds)
                }
                guard try await index.wordsStatus().isCurrent else { throw BenchError("the words were not made again") }
            }
        }
        let n = Double(items.count)
        let bulkRate = n / Measure.median(bulk)
        let ratios = zip(remade, bulk).map { $1 / $0 }
        let withLists = zip(zip(remadeWithLists, bulk), listBuild).map { pair, build in (pair.1 + build) / pair.0 }
        func ms(_ p: Double, _ times: [Double]? = nil) -> String {
            Measure.format(Measure.percentile(times ?? searchesDuring, p) * 1000)
        }
        print(
            """

            | measure | bulk indexing (same round) | words made again | made again ÷ bulk |
            |---|---|---|---|
            | items/s, no ranking lists (median of \(rounds)) | \(Int(bulkRate)) | \(Int(n / Measure.median(remade))) | \(Measure.format(Measure.median(ratios))) (rounds \(Measure.format(ratios.min()!))–\(Measure.format(ratios.max()!))) |
            | items/s with the ranking lists (bulk: indexing then the lists' build; the remake with searches running) | \(Int(n / Measure.median(zip(bulk, listBuild).map(+)))) | \(Int(n / Measure.median(remadeWithLists))) | \(Measure.format(Measure.median(withLists))) |
            | items/s when the new version changes no word (lists kept) | \(Int(bulkRate)) | \(Int(n / Measure.median(remadeUnchanged))) | \(Measure.format(n / Measure.median(remadeUnchanged) / bulkRate)) |

            \(server == nil ? "SQLite makes every item's words again into a new table whether they change or not." : "On PostgreSQL every item's words differ before the first two (stripped of their positions), so every row is written again; in the third none differ, and only the analyzer's version is written.")

            The swap at the end (the new table in, the vocabulary counted again, the lists built), with lists: \(Measure.format(Measure.median(swaps))) s
            of the remake's \(Measure.format(Measure.median(remadeWithLists))) s; the lists' build alone after bulk indexing: \(Measure.format(Measure.median(listBuild))) s.
            Ranked two-word searches during the remake with lists (\(searchesDuring.count), old words): p50 \(ms(50)) ms, p99 \(ms(99)) ms;
            the same search just before it (\(searchesBefore.count)): p50 \(ms(50, searchesBefore)) ms, p99 \(ms(99, searchesBefore)) ms.
            """)
    }
}
