import Foundation
import Replica

/// A known-item set searched in-process with one model: nDCG@10 / MRR@10 / Recall@100 by the words, by
/// meaning and hybrid, scored as `Benchmarks/quality/evaluate_replica.py` scores them. The same searches
/// as `replica search --json --limit 100` runs, without a process and a model load per question: JSQuAD's
/// 4,420 questions take minutes in all three modes, against 37 minutes a mode through the command.
/// The sets: `build_faq_set.py`, `build_debian_faq_set.py` and `language_sets.py` write them.
enum QualityBenchmark {
    struct Document: Decodable {
        var id: String
        var title: String?
        var text: String
    }

    static func run(documents path: String, queries: String, model: String, modes: [String]) async throws {
        let documents = try PostgresBenchmark.loadLines(path, as: Document.self)
        let questions = try PostgresBenchmark.loadLines(queries, as: PostgresBenchmark.QualityQuery.self)
        var configuration = Store.Configuration()
        switch model {
        case "all-MiniLM-L6-v2": configuration.embedder = try MiniLMEmbedder()
        case "multilingual-e5-small": configuration.embedder = try LazyMultilingualE5Embedder()
        default: throw BenchError("--model is all-MiniLM-L6-v2 or multilingual-e5-small, not \(model)")
        }
        let directory = try Measure.scratchDirectory("quality")
        defer { Measure.removeDirectory(directory) }
        let store = try Store(directory: URL(fileURLWithPath: directory), configuration: configuration)
        let account = AccountID("quality")
        try await store.signIn(account)
        let items = documents.map { document in
            var attributes = AttributeSet(contentType: .plainText)
            attributes.textContent = document.text
            if let title = document.title, !title.isEmpty { attributes.title = title }
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier(document.id), attributeSet: attributes, expirationDate: .distantFuture)
        }
        try await store.index(account: account).indexItems(items)
        let embedding = try await Measure.seconds { _ = try await store.embedPendingItems(accounts: [account]) }
        print(
            "\(items.count) items, \(questions.count) questions, embedded with \(model) in \(Measure.format(embedding)) s"
        )
        print("\n| search | nDCG@10 / MRR@10 / Recall@100 |\n|---|---|")
        for mode in modes {
            var found: [[String]] = []
            for question in questions {
                // The words as `replica search` gets them from the evaluation scripts' command line.
                var search = SearchQuery(question.query.split(separator: " ").joined(separator: " "), limit: 100)
                search.accounts = [account]
                search.disablesSemanticSearch = mode == "lexical"
                search.disablesLexicalSearch = mode == "semantic"
                do {
                    found.append(try await store.search(search).map(\.item.uniqueIdentifier.rawValue))
                } catch let error as ReplicaError where error.code == .invalidQuery {
                    found.append([])
                }
            }
            print("| \(mode) | \(PostgresBenchmark.Metrics(runs: found, queries: questions).text) |")
        }
    }
}
