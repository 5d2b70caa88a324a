import Foundation
import Replica

/// A known-item set searched in-process with one model: nDCG@10 / MRR@10 / Recall@100 by the words, by
/// meaning and hybrid, scored as `Benchmarks/quality/evaluate_replica.py` scores them. The same searches
/// as `replica search --json --limit 100` runs, without a process and a model load per question: JSQuAD's
/// 4,420 questions take minutes in all three modes, against 37 minutes a mode through the command.
/// The sets: `build_faq_set.py`, `build_debian_faq_set.py` and `language_sets.py` write them.
///
/// `queries` may name several files, each searched over the same items, embedded once: one language's
/// sentences asked in each of the others (`language_sets.py --across`).
enum QualityBenchmark {
    static func run(documents path: String, queries files: [String], model: String, modes: [String]) async throws {
        guard let chosen = EmbeddingModel(rawValue: model) else {
            throw BenchError(
                "--model is one of \(EmbeddingModel.allCases.map(\.rawValue).joined(separator: ", ")), not \(model)")
        }
        let documents = try PostgresBenchmark.loadLines(path, as: PostgresBenchmark.QualityDocument.self)
        var configuration = Store.Configuration()
        configuration.embedder = try chosen.lazyEmbedder()
        let directory = try Measure.scratchDirectory("quality")
        defer { Measure.removeDirectory(directory) }
        let store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration)
        let account = AccountID("quality")
        try await store.signIn(account)
        let items = documents.map(\.item)
        try await store.index(account: account).indexItems(items)
        let embedding = try await Measure.seconds { _ = try await store.embedPendingItems(accounts: [account]) }
        print("\(items.count) items, embedded with \(model) in \(Measure.format(embedding)) s")
        for file in files {
            let questions = try PostgresBenchmark.loadLines(file, as: PostgresBenchmark.QualityQuery.self)
            print("\n\(questions.count) questions: \(file)\n\n| search | nDCG@10 / MRR@10 / Recall@100 |\n|---|---|")
            // The words as `replica search` gets them from the evaluation scripts' command line.
            let texts = questions.map { $0.query.split(separator: " ").joined(separator: " ") }
            for mode in modes {
                let found = try await PostgresBenchmark.found(texts, in: store, account: account, by: mode)
                print("| \(mode) | \(PostgresBenchmark.Metrics(runs: found, queries: questions).text) |")
            }
        }
    }
}
