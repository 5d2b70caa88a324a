import Foundation
import Replica

// Issue 20 §6, quality: the known-item FAQ sets (Benchmarks/quality/) on both backends, scored as
// evaluate_replica.py scores them (binary relevance: nDCG@10, MRR@10, Recall@100).
extension PostgresBenchmark {
    struct QualityDocument: Decodable {
        var id: String
        var text: String
        /// A title of its own (JSQuAD's paragraphs have one; the FAQ sets' sections do not).
        var title: String?

        /// The item `evaluate_replica.py` imports for it: its text as `textContent`, its title.
        var item: SearchableItem {
            var attributes = AttributeSet(contentType: .plainText)
            attributes.textContent = text
            if let title, !title.isEmpty { attributes.title = title }
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier(id), attributeSet: attributes, expirationDate: .distantFuture)
        }
    }

    struct QualityQuery: Decodable {
        var id: String
        var query: String
        var relevant: [String]
    }

    struct Metrics {
        var ndcg = 0.0, mrr = 0.0, recall = 0.0

        /// evaluate_baselines.metrics: each query's ranked identifiers against its relevant ones, averaged.
        init(runs: [[String]], queries: [QualityQuery]) {
            for (run, query) in zip(runs, queries) {
                let relevant = Set(query.relevant)
                let dcg = run.prefix(10).enumerated().filter { relevant.contains($0.element) }.reduce(0.0) {
                    $0 + 1 / log2(Double($1.offset) + 2)
                }
                let ideal = (0..<min(relevant.count, 10)).reduce(0.0) { $0 + 1 / log2(Double($1) + 2) }
                ndcg += dcg / ideal
                mrr += run.prefix(10).firstIndex(where: relevant.contains).map { 1 / Double($0 + 1) } ?? 0
                recall += Double(relevant.intersection(run.prefix(100)).count) / Double(relevant.count)
            }
            let count = Double(max(queries.count, 1))
            ndcg /= count
            mrr /= count
            recall /= count
        }

        var text: String { "\(Measure.format(ndcg, 3)) / \(Measure.format(mrr, 3)) / \(Measure.format(recall, 3))" }
    }

    /// The identifiers each of `texts` finds, best first, at most 100, searched `by` "lexical…" (the words
    /// alone), "semantic" (meaning alone) or anything else (hybrid). A query with no word to search fails,
    /// as `replica search` does: no results.
    static func found(_ texts: [String], in store: Store, account: AccountID, by mode: String) async throws
        -> [[String]]
    {
        var found: [[String]] = []
        for text in texts {
            var search = SearchQuery(text, limit: 100)
            search.accounts = [account]
            search.disablesSemanticSearch = mode.hasPrefix("lexical")
            search.disablesLexicalSearch = mode == "semantic"
            do {
                found.append(try await store.search(search).map(\.item.uniqueIdentifier.rawValue))
            } catch let error as ReplicaError where error.code == .invalidQuery {
                found.append([])
            }
        }
        return found
    }

    static func loadLines<T: Decodable>(_ path: String, as type: T.Type) throws -> [T] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw BenchError(
                "no \(path): build the sets with python3 Benchmarks/quality/build_faq_set.py, build_debian_faq_set.py or language_sets.py (postgres: --quality DIR names their folder)"
            )
        }
        return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(T.self, from: Data($0)) }
    }

    static func quality(_ server: PostgresServer, _ options: Options) async throws {
        var configuration = Store.Configuration()
        if !options.lexicalOnly { configuration.embedder = try MiniLMEmbedder() }
        let modes = options.lexicalOnly ? ["lexical"] : ["hybrid", "lexical", "semantic"]
        print(
            """

            ## Quality: nDCG@10 / MRR@10 / Recall@100\(options.lexicalOnly ? " (by the words alone: --lexical-only)" : "")

            | set | search | replica on SQLite | replica on PostgreSQL | nDCG@10 PostgreSQL − SQLite | same top 10 (queries) |
            |---|---|---|---|---|---|
            """)
        var notes: [String] = []
        for set in ["faq", "debfaq"] {
            let documents = try loadLines(options.qualityData + "/\(set)-docs.jsonl", as: QualityDocument.self)
            let queries = try loadLines(options.qualityData + "/\(set)-queries.jsonl", as: QualityQuery.self)
            let items = documents.map(\.item)
            var runs: [String: [String: [[String]]]] = [:]
            for backend in ["sqlite", "pg"] {
                let directory = try Measure.scratchDirectory("quality")
                defer { Measure.removeDirectory(directory) }
                let store =
                    try backend == "pg"
                    ? postgresStore(directory, url: server.appURL, configuration: configuration)
                    : Store(directory: URL(fileURLWithPath: directory), configuration: configuration)
                let account = AccountID("quality-\(set)")
                try await store.signIn(account)
                let indexing = try await Measure.seconds { try await store.index(account: account).indexItems(items) }
                let embedding = try await Measure.seconds { _ = try await store.embedPendingItems(accounts: [account]) }
                let searching = try await Measure.seconds {
                    for mode in modes + ["lexical, through the ranking lists"] {
                        // The last mode after a build of the lists (a word gets one from 8 items in a set this small).
                        if mode.hasSuffix("lists") { _ = try await store.index(account: account).rebuildRankingLists() }
                        runs[backend, default: [:]][mode] = try await found(
                            queries.map(\.query), in: store, account: account, by: mode)
                    }
                }
                notes.append(
                    "\(set), \(backend == "pg" ? "PostgreSQL" : "SQLite"): \(items.count) items indexed in \(Measure.format(indexing)) s, embedding "
                        + "\(Measure.format(embedding)) s, \(modes.count) × \(queries.count) searches \(Measure.format(searching)) s"
                )
                if backend == "pg" { try await store.signOut(account) }
            }
            for mode in modes + ["lexical, through the ranking lists"] {
                let local = Metrics(runs: runs["sqlite"]![mode]!, queries: queries)
                let remote = Metrics(runs: runs["pg"]![mode]!, queries: queries)
                let same = zip(runs["sqlite"]![mode]!, runs["pg"]![mode]!).filter {
                    Array($0.prefix(10)) == Array($1.prefix(10))
                }.count
                print(
                    "| \(set) (\(queries.count) queries) | \(mode) | \(local.text) | \(remote.text) | \(String(format: "%+.3f", remote.ndcg - local.ndcg)) | \(same) of \(queries.count) |"
                )
            }
            for backend in ["sqlite", "pg"] {
                let plain = runs[backend]!["lexical"]!
                let listed = runs[backend]!["lexical, through the ranking lists"]!
                let same = zip(plain, listed).filter { Array($0.prefix(10)) == Array($1.prefix(10)) }.count
                notes.append(
                    "\(set), \(backend == "pg" ? "PostgreSQL" : "SQLite"): the same lexical top 10 with and without the ranking lists for \(same) of \(queries.count) queries"
                )
            }
        }
        print("\n" + notes.joined(separator: "\n"))
    }
}
