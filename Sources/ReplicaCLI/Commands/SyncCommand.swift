import Foundation
import Replica
import Synchronization

/// `replica sync`: one catch-up pass of everything, then exit.
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "bring every index up to date once, then exit"
    static let about = """
        Catches every source up once (files changed, added or removed since the last pass, new commits,
        a plugin's changes), applies what the record store's change log holds that the index has not,
        finishes any rebuild a projection version change started, purges expired items and retries the
        deletions waiting in the retry queue; then embeds, for semantic search, every item that has no
        vectors yet (or as many as --embed-for's time allows), and prints a summary. On a terminal, a progress line shows files seen, indexed and
        skipped, the rate and the time left, then the embedding's progress.

        A source that fails is reported and the others go on; the exit status is then 1.

        """
    static let noEmbed = CommonOptions.noEmbed.help(
        "leave new items to be embedded later (by watch or the next command)")
    static let json = Option.flag("--json", "print the summary as a JSON object on standard output")
    static let options: [any OptionDeclaration] = [noEmbed, Embedding.Plan.option, json]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = try arguments[Self.json]
        let embedding = try Embedding.Plan.read(&arguments)
        try arguments.finish()
        let configuration = try context.configuration()
        let store = try context.openStore(enriching: true)
        let started = Date()
        var totals = SourceProgress()
        var failures: [String] = []
        let engine = ProjectionEngine(
            store: store, projections: configuration.projections, followedTables: configuration.followedTables)
        // One load: the vocabulary of the sources' transactions and the projections' is added up once, at
        // its end.
        let report = try await store.load {
            for definition in try await store.sources() {
                let sourceStart = Date()
                let shown = Mutex(SourceProgress())
                do {
                    let source = try SourceRegistry.builtIn.makeSource(for: definition, store: store)
                    let sourceContext = try await SourceContext(definition: definition, store: store) { progress in
                        shown.withLock { $0 = progress }
                        Progress.update(line(definition.name, progress, since: sourceStart))
                    }
                    try await source.sync(sourceContext)
                } catch {
                    failures.append(definition.name)
                    Output.note("source '\(definition.name)' failed: \(ReplicaError.message(of: error))")
                }
                let progress = shown.withLock { $0 }
                totals.seen += progress.seen
                totals.indexed += progress.indexed
                totals.skipped += progress.skipped
                totals.removed += progress.removed
            }
            Progress.update("applying the record store's changes")
            return try await engine.catchUpAllAccounts()
        }
        let sweep = try await store.sweep()
        Progress.clear()
        for entry in report.quarantined {
            Output.note(
                "record \(entry.kind) '\(entry.id)' of account '\(entry.account)' (version \(entry.version)) was not indexed: \(entry.reason)"
            )
        }
        for problem in report.problems { Output.note(problem) }
        let seconds = Date().timeIntervalSince(started)
        let finishing = try await Embedding.bringUpToDate(store, accounts: nil, embedding: embedding)
        await Embedding.enrich(store, accounts: nil)
        let total = Date().timeIntervalSince(started)
        if json {
            let fields: [(String, JSON)] = [
                ("filesSeen", .number(Double(totals.seen))), ("filesIndexed", .number(Double(totals.indexed))),
                ("filesSkipped", .number(Double(totals.skipped))), ("filesRemoved", .number(Double(totals.removed))),
                ("sourcesFailed", .array(failures.map(JSON.string))),
                ("changesApplied", .number(Double(report.changesApplied))),
                ("indexed", .number(Double(report.indexed))),
                ("removed", .number(Double(report.removed))), ("rebuilt", .number(Double(report.rebuilt))),
                ("quarantined", .number(Double(report.quarantined.count))), ("purged", .number(Double(sweep.purged))),
                ("deletionsRetried", .number(Double(sweep.deletionsDone))),
                ("deletionsPending", .number(Double(sweep.deletionsPostponed))),
                ("seconds", Embedding.Finishing.json(seconds)),
                ("rankingListsSeconds", Embedding.Finishing.json(finishing.rankingListsSeconds)),
                ("embedded", .number(Double(finishing.embedded))),
                ("embedSeconds", Embedding.Finishing.json(finishing.embeddingSeconds)),
                ("embedWaiting", .number(Double(finishing.stillWaiting))),
                ("totalSeconds", Embedding.Finishing.json(total)),
            ]
            Output.printJSON(.object(fields))
        } else {
            Output.line(
                "sources: \(totals.seen) files seen, \(totals.indexed) indexed, \(totals.skipped) skipped, \(totals.removed) removed; "
                    + "records: applied \(report.changesApplied) changes (indexed \(report.indexed), removed \(report.removed), "
                    + "rebuilt \(report.rebuilt), quarantined \(report.quarantined.count)); purged \(sweep.purged) expired; "
                    + "retried \(sweep.deletionsDone) deletions (\(sweep.deletionsPostponed) still pending) "
                    + finishing.took(total, work: "indexing", workSeconds: seconds))
            if finishing.embedded > 0 {
                Output.line(
                    "semantic search: embedded \(finishing.embedded) items in \(Embedding.Finishing.seconds(finishing.embeddingSeconds))"
                )
            }
        }
        if !failures.isEmpty {
            throw CLIError.failure(
                "\(failures.count) source\(failures.count == 1 ? "" : "s") failed: \(failures.joined(separator: ", ")) ('replica status' shows why)"
            )
        }
    }

    /// `files-1: 1200/12033 files, 1100 indexed, 3 skipped, 850/s, 12 s left`
    static func line(_ name: String, _ progress: SourceProgress, since start: Date) -> String {
        let elapsed = max(Date().timeIntervalSince(start), 0.001)
        let rate = Double(progress.seen) / elapsed
        var text = "\(name): \(progress.seen)"
        if let expected = progress.expected { text += "/\(expected)" }
        text += " files, \(progress.indexed) indexed, \(progress.skipped) skipped, \(Int(rate))/s"
        if let expected = progress.expected, rate > 0, expected > progress.seen {
            text += ", \(Int((Double(expected - progress.seen) / rate).rounded(.up))) s left"
        }
        return text
    }
}
