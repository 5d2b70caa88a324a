import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import Synchronization

// Many items at once: rows prepared on a second core, and the secondary indexes built once at the end
// of a large load instead of row by row.
extension SQLiteIndexWriter {
    /// Indexes many items, each with its own origin (the projection engine's records have their versions).
    /// Rows are prepared (text columns, attribute JSON and, for as many rows as keep the writer busy, the
    /// text's tokens: pure work) on other threads, a chunk or two ahead of the one being written, so a
    /// second core takes that work off the writer's path.
    package func index(contentsOf entries: [(SearchableItem, ItemOrigin)]) throws {
        guard entries.count > Self.bulkThreshold else {
            for (item, origin) in entries { try index(item, origin: origin) }
            return
        }
        try withSecondaryIndexesDeferred(forAdding: entries) {
            try pipeline(entries, chunkSize: LoadChunks.size(for: entries.count, atMost: Self.chunkSize))
        }
    }

    /// From how many items a call takes the pipelined path (below, they are written one by one). It was
    /// 512: a file tree's transactions of a few hundred large files (cut at 16 MiB) were written one by
    /// one, their text analyzed on the writer's thread.
    static let bulkThreshold = 64
    /// The most items prepared together (``LoadChunks/size(for:atMost:)``).
    static let chunkSize = 512

    private func pipeline(_ entries: [(SearchableItem, ItemOrigin)], chunkSize: Int) throws {
        let now = self.now
        let lifetime = self.defaultLifetime
        // How many of a chunk's rows have their text analyzed on the preparing thread: as many as keep
        // the writer from waiting for it. Small items give that thread most of its work already
        // (language, attribute JSON) and a file's long text gives the writer most of its: the share
        // moves by ``aheadStep`` after each chunk, down when the writer waited for rows, else up, and
        // the writer keeps it for its next load in the same transaction (a writer is made for each).
        let share = AheadShare(percent: analyzesAhead ? aheadPercent : 0)
        let adapts = analyzesAhead
        var lastEnd: UInt64?
        // A load cut into its eight chunks (a tree's transaction of a few hundred files) prepares two
        // ahead: a chunk's preparation takes as long as its files are big, and one dearer than the chunk
        // before it kept the writer waiting (a sync of the linux-doc tree waited 0.25 s of 2.3 s written,
        // against 0.36-0.48 s one ahead). A long load of small items keeps one: there the writer is the
        // slower, and a third thread on two cores slowed it (bulk 0.55-0.61 of raw FTS5 against
        // 0.63-0.68: `docs/benchmarks/indexing.md`, 2026-12-06).
        //
        // The writer prepares the first chunk itself, its text analyzed as it is written, while the
        // other threads prepare the next ones: it waited for that chunk before. An app's import in
        // batches of 1,000 items, a transaction each, waited 0.67-0.78 s for rows in 100 batches, and
        // 0.40-0.47 s so; the batches took less time in each of six alternating pairs, 1-16 % (median 7 %)
        // (`docs/benchmarks/indexing.md`, 2026-12-07, eleventh stop).
        @Sendable func rows(_ chunk: ArraySlice<(SearchableItem, ItemOrigin)>, ahead: Int) -> [PreparedRow?] {
            chunk.enumerated().map { offset, entry -> PreparedRow? in
                let (item, origin) = entry
                guard !item.isUpdate else { return nil }
                let row = PreparedRow(item, origin: origin, now: now, defaultLifetime: lifetime)
                return offset < ahead ? row.preanalyzed() : row
            }
        }
        try Prefetch.pipelined(
            entries, chunkSize: chunkSize, ahead: chunkSize < Self.chunkSize ? 2 : 1,
            prepareFirstHere: { rows($0, ahead: 0) },
            prepare: { chunk in rows(chunk, ahead: share.percent.load(ordering: .relaxed) * chunk.count / 100) }
        ) { chunk, rows in
            let start = DispatchTime.now().uptimeNanoseconds
            // By place: an item is copied (a retain for each of its parts) only when it has no row.
            for (index, row) in zip(chunk.indices, rows) {
                if let row { try upsert(row) } else { try self.index(chunk[index].0, origin: chunk[index].1) }
            }
            let end = DispatchTime.now().uptimeNanoseconds
            if adapts, let lastEnd {
                let waited = start - lastEnd
                let worked = end - start
                let percent = share.percent.load(ordering: .relaxed)
                share.percent.store(
                    waited > worked / 20 ? max(0, percent - Self.aheadStep) : min(100, percent + Self.aheadStep),
                    ordering: .relaxed)
            }
            lastEnd = end
        }
        if adapts { aheadPercent = share.percent.load(ordering: .relaxed) }
    }

    /// How many points the share of a chunk's rows analyzed ahead moves after each chunk. A change
    /// reaches the writer a chunk or two later (those prepared already keep theirs), so 25 swung the
    /// share between 0 and 100 % on 100,000 paragraphs and kept the writer waiting for 15 % of its
    /// chunks' time; by 5 it moves between about 35 and 100 %, with a third less waiting and 9 % more
    /// items/s (`docs/benchmarks/indexing.md`, 2026-12-07, seventh stop).
    static let aheadStep = 5

    /// The share of a chunk's rows analyzed ahead, read by the preparing thread.
    private final class AheadShare: Sendable {
        let percent: Atomic<Int>
        init(percent: Int) { self.percent = Atomic(percent) }
    }

    /// For a load much larger than what the index holds, drops the domain and expiration indexes for the
    /// length of `body` and builds them again afterwards: one sorted build costs less than an index
    /// insert per row ([SQLite's advice for bulk loads](https://www.sqlite.org/faq.html#q19)). Into an
    /// empty index, a load of distinct new items (no updates) drops the identifier index too. It all
    /// happens in the caller's transaction, so a failure or a crash leaves the indexes as they were.
    private func withSecondaryIndexesDeferred(
        forAdding entries: [(SearchableItem, ItemOrigin)], _ body: () throws -> Void
    ) throws {
        let count = entries.count
        let existing = count >= 20_000 ? (try connection.scalarInt("SELECT count(*) FROM items") ?? 0) : .max
        guard existing < count / 4 else { return try body() }
        var names = ["items_domain", "items_expires"]
        let allNew =
            existing == 0 && !entries.contains { $0.0.isUpdate }
            && Set(entries.lazy.map(\.0.uniqueIdentifier)).count == count
        if allNew { names.append("items_identifier") }
        let definitions = try connection.prepare(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items' AND name IN (\(names.map { "'\($0)'" }.joined(separator: ", ")))"
        ).rows { ($0.text(0), $0.text(1)) }
        for (name, _) in definitions { try connection.execute("DROP INDEX \(name)") }
        insertsAreNew = allNew
        defer { insertsAreNew = false }
        try body()
        insertsAreNew = false
        for (_, sql) in definitions { try connection.execute(sql) }
    }
}
