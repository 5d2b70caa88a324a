import Foundation
import Replica
import ReplicaPostgres

/// For looking at one change's effect quickly: the load part's ranked classes run again and again on a
/// store kept from an earlier run (`REPLICA_BENCH_KEEP=1 replica-bench postgres --only load`, then
/// `scripts/postgres.sh start` on the kept server's folder), beside raw `ts_rank_cd` over the same rows,
/// the two alternating query by query.
extension PostgresBenchmark {
    static func profile(
        corpus: String, items: Int, queryCount: Int, repeats: Int, url: String, ownerURL: String,
        store directory: String,
        account: String
    ) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: items)
        let common = Corpus.commonWords(from: paragraphs)
        let classes: [(name: String, queries: [String])] = [
            ("two words", Corpus.queries(from: paragraphs, count: queryCount, seed: 2026)),
            (
                "two words each in >10% of items",
                zip(common, common.dropFirst() + common.prefix(1)).map { "\($0) \($1)" }
            ),
            ("one word in >10% of items", common),
            ("eight-word questions", Corpus.questions(from: paragraphs, count: max(queryCount / 2, 1), seed: 2027)),
        ]
        let store = try postgresStore(directory, url: url)
        let raw = try RawOverReplicaRows(ownerURL: ownerURL, account: account)
        let stemmed = try classes.map { try $0.queries.map(raw.tsquery) }
        for query in classes[0].queries.prefix(10) {
            _ = try await IndexBenchmark.timedSearch(store, query, ranked: true)
        }
        print("| class | replica p50 / p99 (ms) | raw over replica's rows p50 / p99 (ms) | p50 ratio |")
        print("|---|---|---|---|")
        for (index, (name, queries)) in classes.enumerated() {
            var mine: [Double] = []
            var theirs: [Double] = []
            for _ in 0..<repeats {
                for (query, tsquery) in zip(queries, stemmed[index]) {
                    mine.append(try await IndexBenchmark.timedSearch(store, query, ranked: true))
                    theirs.append(try raw.timedSearch(tsquery))
                }
            }
            func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
            print(
                "| \(name) (\(queries.count) × \(repeats)) | \(ms(mine, 50)) / \(ms(mine, 99)) | \(ms(theirs, 50)) / \(ms(theirs, 99)) | "
                    + "\(Measure.format(Measure.percentile(mine, 50) / Measure.percentile(theirs, 50))) |")
        }
    }
}
