import Foundation
import Replica

/// Issue 48: where the ranking lists begin to pay, by what searches gain, not by what the build costs.
/// For each size, the first N linux-doc paragraphs are indexed without lists; the ranked classes of the
/// index benchmark are timed, the lists are built, and the same queries are timed again on the same
/// index, back to back (SQLite, or PostgreSQL on a throwaway server with `--postgres`).
enum ListsThresholdBenchmark {
    static func run(corpus: String, sizes: [Int], queryCount: Int, postgres: Bool, script: String) async throws {
        let all = try Corpus.paragraphs(in: corpus, count: sizes.max() ?? 0)
        print(
            "corpus: \(all.count) paragraphs; sizes \(sizes.map(String.init).joined(separator: ", ")); "
                + "\(queryCount) queries a class; on \(postgres ? "PostgreSQL" : "SQLite")")
        let server = postgres ? try PostgresServer(script: script, name: "lists-threshold") : nil
        defer { server?.stop() }
        if let server { try PostgresBenchmark.migrate(server) }
        func ms(_ times: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(times, p) * 1000) }
        var rows: [String] = []
        for (round, size) in sizes.enumerated() {
            let paragraphs = Array(all.prefix(size))
            let (queries, commonPairs, common, _) = IndexBenchmark.rankedQueries(from: paragraphs, count: queryCount)
            let classes = [
                ("one word in >10% of items", Array(common.prefix(queryCount))),
                ("two words each in >10% of items", Array(commonPairs.prefix(queryCount))),
                ("two words", queries),
            ]
            let directory = try Measure.scratchDirectory("lists-threshold")
            defer { Measure.removeDirectory(directory) }
            let store =
                try server.map { try PostgresBenchmark.postgresStore(directory, url: $0.appURL) }
                ?? Store(directory: URL(fileURLWithPath: directory))
            let account = AccountID("bench\(round)")
            try await store.signIn(account)
            let index = try await store.index(account: account)
            try await index.indexItems(paragraphs.map(IndexBenchmark.makeItem))
            try await index.removeRankingLists()
            // A warm-up pass of each class, then the timed one.
            func timed(_ queries: [String]) async throws -> [Double] {
                for query in queries.prefix(20) { _ = try await IndexBenchmark.timedSearch(store, query, ranked: true) }
                var times: [Double] = []
                for query in queries { times.append(try await IndexBenchmark.timedSearch(store, query, ranked: true)) }
                return times
            }
            var without: [[Double]] = []
            for (_, queries) in classes { without.append(try await timed(queries)) }
            let build = try await Measure.seconds { _ = try await index.rebuildRankingLists() }
            var with: [[Double]] = []
            for (_, queries) in classes { with.append(try await timed(queries)) }
            for (position, (name, _)) in classes.enumerated() {
                let gain = Measure.percentile(without[position], 50) / Measure.percentile(with[position], 50)
                rows.append(
                    "| \(size) | \(name) | \(ms(without[position], 50)) / \(ms(without[position], 99)) | "
                        + "\(ms(with[position], 50)) / \(ms(with[position], 99)) | \(Measure.format(gain))× | "
                        + "\(Measure.format(build)) s |")
            }
        }
        print(
            """

            | items | class | no lists p50 / p99 ms | with lists p50 / p99 ms | p50 without ÷ with | lists' build |
            |---|---|---|---|---|---|
            \(rows.joined(separator: "\n"))
            """)
    }
}
