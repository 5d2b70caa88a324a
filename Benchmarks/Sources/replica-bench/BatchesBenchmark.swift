import Foundation
import Replica

/// An app's first import through the library (issue 48): the items in batches of `batchSize`, a
/// transaction each, written as they come and in a load (`Store.load`), each followed by the ranking
/// lists' build; beside raw FTS5 loading the same paragraphs in one transaction, and in the same
/// batches, in the same round. The same paragraphs as records (written before the clock starts) are
/// projected too: by a catch-up outside a load (how the watcher's first catch-up wrote them before),
/// and by a running engine's first catch-up, the watcher's. Raw FTS5 that tells each paragraph's
/// language by CLD2, as replica tells an item's, is measured beside it in one transaction and in batches.
enum BatchesBenchmark {
    static let contestants = [
        "raw", "raw, batches", "batches", "batches in a load", "records, catch-up", "records, engine's first catch-up",
        "raw, languages told", "raw, languages told, batches",
    ]

    /// A paragraph as a note record, which the default projection makes an item of.
    static func record(_ paragraph: Paragraph) -> Record {
        Record(
            account: "bench", kind: "note", id: paragraph.identifier, version: 1,
            fields: [("title", .string(paragraph.title)), ("body", .string(paragraph.body))])
    }

    /// `only`, when given, runs just those contestants (for a profiler); the table then has their rows,
    /// and without "raw" no ratio.
    static func run(corpus: String, itemCount: Int, batchSize: Int, rounds: Int, only: [String]? = nil)
        async throws
    {
        let chosen = only ?? Self.contestants
        if let unknown = chosen.first(where: { !Self.contestants.contains($0) }) {
            throw BenchError(
                "no contestant '\(unknown)': choose among \(Self.contestants.joined(separator: ";")), parted by ';'")
        }
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let items = paragraphs.map(IndexBenchmark.makeItem)
        print("corpus: \(items.count) paragraphs in batches of \(batchSize), \(rounds) rounds")
        var seconds: [String: [Double]] = [:]
        var cpu: [String: [Double]] = [:]
        for round in 0..<rounds {
            // Who goes first turns each round, so that none always gets the warmer cache.
            var contestants = chosen
            for _ in 0..<(round % contestants.count) { contestants.append(contestants.removeFirst()) }
            for contestant in contestants {
                let directory = try Measure.scratchDirectory("batches")
                defer { Measure.removeDirectory(directory) }
                let startCPU = Measure.cpuSeconds()
                if contestant.hasPrefix("raw") {
                    // "languages told": not the baseline, raw FTS5 telling each paragraph's language as replica does.
                    let raw = try RawFTS5(
                        path: directory + "/raw.sqlite", tellsLanguages: contestant.contains("languages told"))
                    let batches = contestant.hasSuffix("batches") ? batchSize : paragraphs.count
                    seconds[contestant, default: []].append(
                        try await Measure.seconds {
                            for start in stride(from: 0, to: paragraphs.count, by: batches) {
                                try raw.insert(Array(paragraphs[start..<min(start + batches, paragraphs.count)]))
                            }
                        })
                } else {
                    let store = try Store(directory: URL(fileURLWithPath: directory))
                    try await store.signIn("bench")
                    let engine = ProjectionEngine(
                        store: store, projections: ProjectionSet(indexName: Store.defaultIndexName))
                    if contestant.hasPrefix("records") {
                        for start in stride(from: 0, to: paragraphs.count, by: batchSize) {
                            try await store.records.write(
                                paragraphs[start..<min(start + batchSize, paragraphs.count)].map(record))
                        }
                    }
                    let index = try await store.index(account: "bench")
                    func write() async throws {
                        for start in stride(from: 0, to: items.count, by: batchSize) {
                            try await index.indexItems(Array(items[start..<min(start + batchSize, items.count)]))
                        }
                    }
                    let taken = try await Measure.seconds {
                        switch contestant {
                        case "batches": try await write()
                        case "batches in a load": try await store.load(accounts: ["bench"]) { try await write() }
                        case "records, catch-up": try await engine.catchUpAllAccounts()
                        default:
                            // Its first report comes once its first catch-up, a load, has ended.
                            let (reports, reported) = AsyncStream<Void>.makeStream()
                            let running = Task { await engine.run(every: .seconds(60)) { _ in reported.yield() } }
                            for await _ in reports { break }
                            running.cancel()
                            await running.value
                        }
                        guard try await store.rebuildStaleRankingLists(accounts: ["bench"]) == 1 else {
                            throw BenchError("the index got no ranking lists")
                        }
                    }
                    seconds[contestant, default: []].append(taken)
                }
                cpu[contestant, default: []].append(Measure.cpuSeconds() - startCPU)
                print("round \(round + 1): \(contestant) \(Measure.format(seconds[contestant]!.last!)) s")
            }
        }
        let raw = seconds["raw"].map(Measure.median)
        print(
            """

            | contestant | wall (median) | CPU | ÷ raw FTS5 |
            |---|---|---|---|
            """)
        for contestant in chosen {
            let wall = Measure.median(seconds[contestant]!)
            print(
                "| \(contestant) | \(Measure.format(wall)) s (\(seconds[contestant]!.map { Measure.format($0) }.joined(separator: ", "))) | \(Measure.format(Measure.median(cpu[contestant]!))) s | \(raw.map { Measure.format(wall / $0) } ?? "–") |"
            )
        }
    }
}
