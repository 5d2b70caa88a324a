import Foundation
import Replica
import Synchronization

/// What `sync`, `import` and `records import` do last: make words of another analyzer again, build the
/// ranking lists of big indexes, and embed what they wrote, so semantic search has it when they return
/// (unless told `--no-embed`; `replica watch` does all of it in the background instead).
enum Embedding {
    /// How much a command embeds before it exits: everything waiting (the default), nothing
    /// (`--no-embed`), or as much as it can in a time (`--embed-for SECONDS`): on a slow processor a
    /// big first index takes an hour to embed, and a command (or a script, a timer) may not wait that long.
    enum Plan: Equatable {
        case everything
        case nothing
        case atMost(seconds: TimeInterval)

        /// The option every command that embeds takes beside its own `--no-embed`.
        static let option = Option.string(
            "--embed-for", "SECONDS",
            "embed for at most SECONDS (the batch under way is finished), then leave\nthe rest to watch or the next command; replica status counts what waits"
        ).oneOf("embedding")

        /// Reads `--no-embed` and `--embed-for`.
        ///
        /// - Throws: a usage error for both at once, or for a time that is not a number of seconds.
        static func read(_ arguments: inout Arguments) throws -> Plan {
            let skip = try arguments[CommonOptions.noEmbed]
            guard let text = try arguments[option] else { return skip ? .nothing : .everything }
            guard !skip else { throw CLIError.usage("give --no-embed or --embed-for SECONDS, not both") }
            guard let seconds = TimeInterval(text), seconds.isFinite, seconds >= 0 else {
                throw CLIError.usage("--embed-for takes a number of seconds, such as 300; '\(text)' is not one")
            }
            return .atMost(seconds: seconds)
        }
    }

    /// What ``bringUpToDate(_:accounts:embedding:)`` did, and how long each part took.
    struct Finishing {
        var embedded = 0
        /// Items left waiting for vectors when `--embed-for`'s time ran out (0 when all were embedded).
        var stillWaiting = 0
        var wordsSeconds = 0.0
        var rankingListsSeconds = 0.0
        var embeddingSeconds = 0.0

        /// The whole time a command took, for its summary line, with its parts when there are two or more
        /// of a tenth of a second or more: `in 8.4 s (indexing 4.1 s, ranking lists 4.3 s)`.
        func took(_ total: TimeInterval, work: String, workSeconds: TimeInterval) -> String {
            let parts = [
                (work, workSeconds), ("making words again", wordsSeconds), ("ranking lists", rankingListsSeconds),
                ("embedding", embeddingSeconds),
            ].filter { $0.1 >= 0.1 }
            let whole = "in " + Self.seconds(total)
            return parts.count < 2
                ? whole : whole + " (" + parts.map { "\($0.0) \(Self.seconds($0.1))" }.joined(separator: ", ") + ")"
        }

        /// `4.3 s`.
        static func seconds(_ seconds: TimeInterval) -> String { String(format: "%.1f s", seconds) }

        /// Seconds for a JSON summary, to the millisecond.
        static func json(_ seconds: TimeInterval) -> JSON { .number((seconds * 1000).rounded() / 1000) }
    }

    /// Makes the words of indexes another analyzer made again, builds the ranking lists of big indexes
    /// that need them, and embeds the items of `accounts` (every signed-in account when `nil`) that wait
    /// for vectors, each with a progress line on a terminal. A missing model, or one that fails
    /// (damaged, unreadable), is one note, not an error: what was written is searchable by its words,
    /// and is embedded by a later command or `replica watch`.
    @discardableResult
    static func bringUpToDate(_ store: Store, accounts: [AccountID]?, embedding plan: Plan) async throws -> Finishing {
        var finishing = Finishing()
        let remaking = Date()
        try await remakeStaleWords(store, accounts: accounts)
        finishing.wordsSeconds = Date().timeIntervalSince(remaking)
        let building = Date()
        await refreshRankingLists(store, accounts: accounts)
        finishing.rankingListsSeconds = Date().timeIntervalSince(building)
        guard plan != .nothing else { return finishing }
        guard store.configuration.embedder != nil else {
            if let reason = Context.unsaidMissingModelReason { Output.note(reason) }
            return finishing
        }
        let started = Date()
        let deadline: Date? = if case .atMost(let seconds) = plan { started + seconds } else { nil }
        let waiting = Mutex(0)
        do {
            finishing.embedded = try await store.embedPendingItems(accounts: accounts, until: deadline) { done, left in
                waiting.withLock { $0 = left }
                let rate = Double(done) / max(Date().timeIntervalSince(started), 0.001)
                Progress.update("embedding for semantic search: \(done) items, \(left) waiting (\(Int(rate))/s)")
            }
            Progress.clear()
            if deadline != nil {
                finishing.stillWaiting = try await store.embeddingBacklog(accounts: accounts)
                if finishing.stillWaiting > 0 {
                    let count = finishing.stillWaiting
                    Output.note(
                        "semantic search: \(count) item\(count == 1 ? " still waits" : "s still wait") to be embedded (--embed-for's time ran out); searches find \(count == 1 ? "it" : "them") by \(count == 1 ? "its" : "their") words, and replica watch or the next command embeds \(count == 1 ? "it" : "them")"
                    )
                }
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            Output.note(
                "embedding for semantic search failed: \(ReplicaError.message(of: error)); the items are searchable by their words, and are embedded by a later command or replica watch"
            )
        }
        finishing.embeddingSeconds = Date().timeIntervalSince(started)
        return finishing
    }

    /// Makes the words of indexes another analyzer made again (``Store/remakeStaleWords(accounts:progress:)``),
    /// with a progress line on a terminal; a failure is a note: searches read the old words meanwhile, and
    /// a later command goes on from the last batch.
    static func remakeStaleWords(_ store: Store, accounts: [AccountID]?) async throws {
        defer { Progress.clear() }
        do {
            let remade = try await store.remakeStaleWords(accounts: accounts) { name, done, items in
                Progress.update(
                    "making the words of index '\(name)' again for this version's analyzer: \(done) of \(items) items")
            }
            if remade > 0 {
                Output.note(
                    "made the words of \(remade) index\(remade == 1 ? "" : "es") again for this version's analyzer")
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            Output.note(
                "the words could not be made again for this version's analyzer: \(ReplicaError.message(of: error)); searches read the old words, and a later command goes on from where this one stopped"
            )
        }
    }

    /// How many items an index holds before it gets ranking lists: 10,000, or
    /// `$REPLICA_RANKING_LISTS_MINIMUM_ITEMS` (the kill tests build them on small indexes).
    static let rankingListsMinimumItems =
        ProcessInfo.processInfo.environment["REPLICA_RANKING_LISTS_MINIMUM_ITEMS"].flatMap(Int.init) ?? 10_000

    /// Rebuilds the ranking lists of big indexes that have none or are behind, so ranked searches of
    /// common words stay fast (``Store/rebuildStaleRankingLists(accounts:minimumItems:)``); a failure is a
    /// note: searches are exact without the lists, only slower.
    static func refreshRankingLists(_ store: Store, accounts: [AccountID]?) async {
        defer { Progress.clear() }
        do {
            try await store.rebuildStaleRankingLists(accounts: accounts, minimumItems: rankingListsMinimumItems) {
                account, name in
                Progress.update(
                    "building the ranking lists of index '\(name)' of account '\(account)' for fast ranked search",
                    immediately: true)
            }
        } catch {
            Output.note(
                "the ranking lists could not be rebuilt: \(ReplicaError.message(of: error)); searches score every match until a later command rebuilds them"
            )
        }
    }

    /// Enriches what `accounts` wrote that asked for it (summaries, priority), reporting failures as
    /// notes: the items are searchable already, and enrichment is tried again later.
    static func enrich(_ store: Store, accounts: [AccountID]?) async {
        do {
            let report = try await store.enrichPendingItems(accounts: accounts)
            if report.failed > 0 {
                Output.note(
                    "\(report.failed) item\(report.failed == 1 ? "" : "s") could not be enriched; tried again later")
            }
        } catch {
            Output.note("enrichment failed: \(ReplicaError.message(of: error)); tried again later")
        }
    }
}
