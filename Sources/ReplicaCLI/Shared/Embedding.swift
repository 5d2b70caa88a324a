import Foundation
import Replica

/// What `sync`, `import` and `records import` do last: embed what they wrote, so semantic search has it
/// when they return (unless told `--no-embed`; `replica watch` embeds in the background instead).
enum Embedding {
    /// Embeds the items of `accounts` (every signed-in account when `nil`) that wait for vectors, with a
    /// progress line on a terminal. Returns how many were embedded. A missing model, or one that fails
    /// (damaged, unreadable), is one note, not an error: what was written is searchable by its words,
    /// and is embedded by a later command or `replica watch`.
    @discardableResult
    static func bringUpToDate(_ store: Store, accounts: [AccountID]?, skip: Bool) async throws -> Int {
        try await remakeStaleWords(store, accounts: accounts)
        await refreshRankingLists(store, accounts: accounts)
        guard !skip else { return 0 }
        guard store.configuration.embedder != nil else {
            if let reason = Context.unsaidMissingModelReason { Output.note(reason) }
            return 0
        }
        let started = Date()
        do {
            let count = try await store.embedPendingItems(accounts: accounts) { done, waiting in
                let rate = Double(done) / max(Date().timeIntervalSince(started), 0.001)
                Progress.update("embedding for semantic search: \(done) items, \(waiting) waiting (\(Int(rate))/s)")
            }
            Progress.clear()
            return count
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            Output.note("embedding for semantic search failed: \(ReplicaError.message(of: error)); the items are searchable by their words, and are embedded by a later command or replica watch")
            return 0
        }
    }

    /// Makes the words of indexes another analyzer made again (``Store/remakeStaleWords(accounts:progress:)``),
    /// with a progress line on a terminal; a failure is a note: searches read the old words meanwhile, and
    /// a later command goes on from the last batch.
    static func remakeStaleWords(_ store: Store, accounts: [AccountID]?) async throws {
        defer { Progress.clear() }
        do {
            let remade = try await store.remakeStaleWords(accounts: accounts) { name, done, items in
                Progress.update("making the words of index '\(name)' again for this version's analyzer: \(done) of \(items) items")
            }
            if remade > 0 { Output.note("made the words of \(remade) index\(remade == 1 ? "" : "es") again for this version's analyzer") }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            Output.note("the words could not be made again for this version's analyzer: \(ReplicaError.message(of: error)); searches read the old words, and a later command goes on from where this one stopped")
        }
    }

    /// How many items an index holds before it gets ranking lists: 10,000, or
    /// `$REPLICA_RANKING_LISTS_MINIMUM_ITEMS` (the kill tests build them on small indexes).
    static let rankingListsMinimumItems = ProcessInfo.processInfo.environment["REPLICA_RANKING_LISTS_MINIMUM_ITEMS"].flatMap(Int.init) ?? 10_000

    /// Rebuilds the ranking lists of big indexes that have none or are behind, so ranked searches of
    /// common words stay fast (``Store/rebuildStaleRankingLists(accounts:minimumItems:)``); a failure is a
    /// note: searches are exact without the lists, only slower.
    static func refreshRankingLists(_ store: Store, accounts: [AccountID]?) async {
        do {
            try await store.rebuildStaleRankingLists(accounts: accounts, minimumItems: rankingListsMinimumItems)
        } catch {
            Output.note("the ranking lists could not be rebuilt: \(ReplicaError.message(of: error)); searches score every match until a later command rebuilds them")
        }
    }

    /// Enriches what `accounts` wrote that asked for it (summaries, priority), reporting failures as
    /// notes: the items are searchable already, and enrichment is tried again later.
    static func enrich(_ store: Store, accounts: [AccountID]?) async {
        do {
            let report = try await store.enrichPendingItems(accounts: accounts)
            if report.failed > 0 { Output.note("\(report.failed) item\(report.failed == 1 ? "" : "s") could not be enriched; tried again later") }
        } catch {
            Output.note("enrichment failed: \(ReplicaError.message(of: error)); tried again later")
        }
    }
}
