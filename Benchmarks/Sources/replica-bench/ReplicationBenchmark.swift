import Foundation
import Replica
import ReplicaSQLite
import Synchronization

/// Issue 3's benchmark: change-log-to-searchable latency, projection rebuild throughput beside bulk
/// indexing (with searches running during the rebuild), and switch-account time.
enum ReplicationBenchmark {
    static func run(corpus: String, itemCount: Int, writes: Int) async throws {
        let paragraphs = try Corpus.paragraphs(in: corpus, count: itemCount)
        let queries = Corpus.queries(from: paragraphs, count: 200, seed: 7)
        print("corpus: \(paragraphs.count) paragraphs as records of kind 'doc'")
        let directory = try Measure.scratchDirectory("replication")
        defer { Measure.removeDirectory(directory) }

        // Baseline: bulk indexing of the same items, in a store of its own.
        let bulkStore = try Store(directory: URL(fileURLWithPath: directory + "/bulk"))
        try await bulkStore.signIn("bench")
        let items = try paragraphs.map { try Projection.default(for: "doc").item(for: record($0), now: Date()) }
        let bulkIndex = try await bulkStore.index(account: "bench")
        let bulkSeconds = try await Measure.seconds { try await bulkIndex.indexItems(items) }

        // The records, written through the record store, then projected into a fresh index.
        let store = try Store(directory: URL(fileURLWithPath: directory + "/store"))
        try await store.signIn("bench")
        let records = paragraphs.map(record)
        let writeSeconds = try await Measure.seconds {
            for start in stride(from: 0, to: records.count, by: 5000) {
                try await store.records.write(Array(records[start..<min(start + 5000, records.count)]))
            }
        }
        let v1 = ProjectionEngine(store: store, projections: ProjectionSet(indexName: Store.defaultIndexName))
        let firstSeconds = try await Measure.seconds { _ = try await v1.catchUp(account: "bench") }

        // A new projection version whose text differs for every item: each is replaced in place.
        var changed = Projection.default(for: "doc")
        changed.version = 2
        changed.attributes = [(.title, ["title"]), (.textContent, ["body"]), (.keywords, ["path"])]
        let v2 = ProjectionEngine(
            store: store, projections: ProjectionSet([changed], indexName: Store.defaultIndexName))
        let searching = SearchLoop(store: store, queries: queries)
        let searcher = Task.detached { await searching.run() }
        let rebuildSeconds = try await Measure.seconds { _ = try await v2.catchUp(account: "bench") }
        searching.stop()
        let duringRebuild = await searcher.value

        // A new projection version that only changes metadata: the text stays, the full-text index is untouched.
        var retyped = changed
        retyped.version = 3
        retyped.contentType = .markdown
        let v3 = ProjectionEngine(
            store: store, projections: ProjectionSet([retyped], indexName: Store.defaultIndexName))
        let metadataSeconds = try await Measure.seconds { _ = try await v3.catchUp(account: "bench") }

        // The text-changing rebuild again, with nothing searching meanwhile: what the searches cost it.
        var quiet = retyped
        quiet.version = 4
        quiet.attributes = [(.title, ["title"]), (.textContent, ["body"])]
        let v4 = ProjectionEngine(store: store, projections: ProjectionSet([quiet], indexName: Store.defaultIndexName))
        let quietSeconds = try await Measure.seconds { _ = try await v4.catchUp(account: "bench") }

        // Change log to searchable: one record written, caught up and found, many times.
        let raw = try RawFTS5(path: directory + "/raw.sqlite")
        try raw.insert(paragraphs)
        var replicaLatencies: [Double] = []
        var rawLatencies: [Double] = []
        for n in 0..<writes {
            let word = "zqfresh\(n)x"
            let fresh = Record(
                account: "bench", kind: "doc", id: "fresh\(n)", version: 1,
                fields: [("title", .string("Fresh \(n)")), ("body", .string("a newly written \(word) paragraph"))])
            replicaLatencies.append(
                try await Measure.seconds {
                    try await store.records.write([fresh])
                    _ = try await v3.catchUp(account: "bench")
                    let found = try await store.search(SearchQuery(word)).count
                    precondition(found == 1, "the fresh record must be found")
                })
            rawLatencies.append(
                try Measure.secondsNow {
                    try raw.connection.transaction {
                        try raw.connection.cached("INSERT INTO t(title, body) VALUES (?, ?)").run([
                            .text("Fresh \(n)"), .text("a newly written \(word) paragraph"),
                        ])
                    }
                    let rows = try raw.connection.cached("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT 20")
                        .rows([.text("\"\(word)\"")]) { $0.int64(0) }
                    precondition(rows.count == 1)
                })
        }

        // Switch-account: the 100,000-item account is signed out (its files deleted) and another signed in.
        try await store.signIn("other")
        try await store.index(account: "other").indexItems([items[0]])
        let switchSeconds = try await Measure.seconds { try await store.switchAccount(to: "other") }
        let tenth = max(1, paragraphs.count / 10)
        let rawDeleteSeconds = try Measure.secondsNow {
            try raw.connection.transaction { try raw.connection.execute("DELETE FROM t WHERE rowid <= \(tenth)") }
        }

        let bulkRate = Double(items.count) / bulkSeconds
        func ms(_ values: [Double], _ p: Double) -> String { Measure.format(Measure.percentile(values, p) * 1000) }
        print(
            """

            | measure | baseline | replica | ratio | target |
            |---|---|---|---|---|
            | records written to the record store (per second, batches of 5,000) | – | \(Int(Double(records.count) / writeSeconds)) | – | |
            | first projection of \(records.count) records into an empty index (items/s) vs bulk `indexItems` | \(Int(bulkRate)) | \(Int(Double(records.count) / firstSeconds)) | \(Measure.format(bulkSeconds / firstSeconds)) | |
            | rebuild for a new projection version, text changed (items/s) vs bulk `indexItems` | \(Int(bulkRate)) | \(Int(Double(records.count) / rebuildSeconds)) | \(Measure.format(bulkSeconds / rebuildSeconds)) | ≥ 0.8 |
            | rebuild for a new projection version, metadata only (items/s) vs bulk `indexItems` | \(Int(bulkRate)) | \(Int(Double(records.count) / metadataSeconds)) | \(Measure.format(bulkSeconds / metadataSeconds)) | |
            | rebuild, text changed, with no search running meanwhile (items/s) vs bulk `indexItems` | \(Int(bulkRate)) | \(Int(Double(records.count) / quietSeconds)) | \(Measure.format(bulkSeconds / quietSeconds)) | |
            | top-20 search p50 / p99 while the rebuild runs (\(duringRebuild.count) searches) | – | \(ms(duringRebuild, 50)) / \(ms(duringRebuild, 99)) ms | – | p99 < 50 ms |
            | change log to searchable, p50 / p99 (\(writes) writes) vs raw FTS5 insert + query | \(ms(rawLatencies, 50)) / \(ms(rawLatencies, 99)) ms | \(ms(replicaLatencies, 50)) / \(ms(replicaLatencies, 99)) ms | +\(Measure.format((Measure.percentile(replicaLatencies, 50) - Measure.percentile(rawLatencies, 50)) * 1000)) ms at p50 | |
            | switch-account away from an account of \(records.count) items vs raw FTS5 deleting 10% row by row | \(Measure.format(rawDeleteSeconds * 1000)) ms | \(Measure.format(switchSeconds * 1000)) ms | \(Measure.format(switchSeconds / rawDeleteSeconds)) | < 100 ms |
            """)
    }

    static func record(_ paragraph: Paragraph) -> Record {
        Record(
            account: "bench", kind: "doc", id: paragraph.identifier, version: 1,
            fields: [
                ("title", .string(paragraph.title)), ("body", .string(paragraph.body)),
                ("path", .string(paragraph.path)),
            ])
    }

    /// Searches in a loop from another task until stopped; returns each search's latency.
    final class SearchLoop: Sendable {
        let store: Store
        let queries: [String]
        private let stopped = Atomic<Bool>(false)

        init(store: Store, queries: [String]) {
            self.store = store
            self.queries = queries
        }

        func stop() { stopped.store(true, ordering: .relaxed) }

        func run() async -> [Double] {
            var latencies: [Double] = []
            var n = 0
            while !stopped.load(ordering: .relaxed) {
                let query = SearchQuery(queries[n % queries.count], limit: 20)
                n += 1
                if let seconds = try? await Measure.seconds({ _ = try await store.search(query) }) {
                    latencies.append(seconds)
                }
            }
            return latencies
        }
    }
}
