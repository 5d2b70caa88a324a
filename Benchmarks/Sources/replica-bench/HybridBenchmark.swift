import Foundation
import Replica

/// Search latency in-process on an existing store (issue 10): query embedding, lexical top-20 and hybrid
/// top-20, each query alternating between the two, after one warm-up pass (the model loaded, the
/// vectors read into memory); then suggestions, for ten prefixes of 2–4 letters and for ten prefixes
/// most items have.
enum HybridBenchmark {
    static let questions = [
        "module import path", "how do I read a file line by line", "thread safety of queues",
        "convert a string to bytes",
        "time zone aware datetime", "which exceptions can open raise", "sort a list of dictionaries by a key",
        "run a command and capture its output", "parse command line arguments", "format a number with commas",
    ]

    static func run(store path: String, rounds: Int) async throws {
        // The model REPLICA_MODEL names, else the default, as the command chooses it; the store's vectors
        // must be that model's (make_latency_store.py makes them with the same variable).
        let model = try require(EmbeddingModel.choice().model, "REPLICA_MODEL is off: this benchmark needs a model")
        var configuration = Store.Configuration()
        configuration.embedder = try model.lazyEmbedder()
        let store = try Store(directory: URL(fileURLWithPath: path), configuration: configuration)
        let embedder = try require(configuration.embedder, "no embedder")
        var embedding: [Double] = []
        var lexical: [Double] = []
        var hybrid: [Double] = []
        for round in 0...rounds {
            for question in questions {
                let seconds = try Measure.secondsNow { _ = try embedder.embed(query: question) }
                var words = SearchQuery(question, limit: 20)
                words.disablesSemanticSearch = true
                let lexicalSeconds = try await Measure.seconds { _ = try await store.search(words) }
                let hybridSeconds = try await Measure.seconds {
                    _ = try await store.search(SearchQuery(question, limit: 20))
                }
                guard round > 0 else { continue }  // the warm-up pass
                embedding.append(seconds)
                lexical.append(lexicalSeconds)
                hybrid.append(hybridSeconds)
            }
        }
        // Each prefix once a round after the warm-up round. The first list is the one timed from the start
        // (2–4 letters, "th" among them); the second holds prefixes that match most items, where FTS5's
        // prefix query costs the most.
        func timeSuggestions(_ prefixes: [String]) async throws -> [Double] {
            var times: [Double] = []
            for round in 0...rounds {
                for prefix in prefixes {
                    let seconds = try await Measure.seconds { _ = try await store.suggestions(for: prefix) }
                    if round > 0 { times.append(seconds) }
                }
            }
            return times
        }
        let suggesting = try await timeSuggestions([
            "mod", "imp", "th", "conv", "dat", "exc", "sor", "com", "par", "num",
        ])
        let shortest = try await timeSuggestions(["s", "t", "a", "in", "re", "the", "con", "pro", "de", "of"])
        func ms(_ value: Double) -> String { String(format: "%.1f ms", value * 1000) }
        print("\(lexical.count) searches of each kind on \(path), model \(model.rawValue)")
        print("| measure | p50 | p99 |\n|---|---|---|")
        print("| query embedding | \(ms(Measure.median(embedding))) | \(ms(Measure.percentile(embedding, 99))) |")
        print("| lexical top-20 | \(ms(Measure.median(lexical))) | \(ms(Measure.percentile(lexical, 99))) |")
        print(
            "| hybrid top-20 (embedding included) | \(ms(Measure.median(hybrid))) | \(ms(Measure.percentile(hybrid, 99))) |"
        )
        print(
            "| suggestions for a prefix | \(ms(Measure.median(suggesting))) | \(ms(Measure.percentile(suggesting, 99))) |"
        )
        print(
            "| suggestions for a prefix most items have | \(ms(Measure.median(shortest))) | \(ms(Measure.percentile(shortest, 99))) |"
        )
    }
}

/// `try #require` for a benchmark: a missing value ends the run with a message.
func require<T>(_ value: T?, _ message: String = "a required value is missing") throws -> T {
    guard let value else { throw BenchError(message) }
    return value
}
