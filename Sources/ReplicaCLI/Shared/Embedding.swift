import Foundation
import Replica

/// What `sync`, `import` and `records import` do last: embed what they wrote, so semantic search has it
/// when they return (unless told `--no-embed`; `replica watch` embeds in the background instead).
enum Embedding {

    /// Embeds the items of `accounts` (every signed-in account when `nil`) that wait for vectors, with a
    /// progress line on a terminal. Returns how many were embedded; a missing model is one note, not an
    /// error: search answers by the words.
    @discardableResult
    static func bringUpToDate(_ store: Store, accounts: [AccountID]?, skip: Bool) async throws -> Int {
        guard !skip else { return 0 }
        guard store.configuration.embedder != nil else {
            if !Context.semanticSearchTurnedOff, let reason = Context.missingModelReason { Output.note(reason) }
            return 0
        }
        let started = Date()
        let count = try await store.embedPendingItems(accounts: accounts) { done, waiting in
            let rate = Double(done) / max(Date().timeIntervalSince(started), 0.001)
            Progress.update("embedding for semantic search: \(done) items, \(waiting) waiting (\(Int(rate))/s)")
        }
        Progress.clear()
        return count
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
