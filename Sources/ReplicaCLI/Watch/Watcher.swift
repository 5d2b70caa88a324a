import Dispatch
import Foundation
import Replica
#if canImport(Glibc)
import Glibc
#endif

/// `replica watch`: every source of the store followed at once, the record stores' change logs applied,
/// expirations swept and failed deletions retried — until SIGTERM or SIGINT.
///
/// Each part is a long-running task. On a signal they stop in order, each once the one before it has
/// finished: the sources first (each commits what it has in flight), then the projection engine (its
/// last catch-up applies the record stores' last changes), then the sweep, embedding and enrichment; the
/// store closes with the process. A note on standard error marks each step; it all takes a second or two.
final class Watcher: Sendable {
    let store: Store
    let configuration: ConfigurationFile
    /// How often the store's list of sources and accounts is read again.
    let reloadInterval: Duration
    let sweepInterval: Duration
    /// How often items waiting for summaries and priority are looked for: a cheap query per index when
    /// none waits, and a host waits at most this long (plus the enrichment) for its update line.
    let enrichInterval: Duration = .milliseconds(250)
    /// Print what happens as JSON lines on standard output (`--json`).
    let json: Bool

    init(store: Store, configuration: ConfigurationFile, reloadInterval: Duration = .seconds(1), sweepInterval: Duration = .seconds(60),
         json: Bool = false) {
        self.json = json
        self.store = store
        self.configuration = configuration
        self.reloadInterval = reloadInterval
        self.sweepInterval = sweepInterval
    }

    /// Runs until a signal arrives.
    func run() async {
        let stopSignal = SignalWaiter(signals: [SIGTERM, SIGINT])
        Output.note("watching \(store.directory.path); stop with SIGTERM or Ctrl-C")
        // Tasks of their own rather than one group, so that each stage is cancelled only once the one
        // before it has finished; this function awaits them all.
        let sources = Task { await self.superviseSources() }
        let projection = Task {
            let engine = ProjectionEngine(store: self.store, projections: self.configuration.projections,
                                          followedTables: self.configuration.followedTables)
            await engine.run { report in
                for entry in report.quarantined {
                    Output.note("record \(entry.kind) '\(entry.id)' of account '\(entry.account)' was not indexed: \(entry.reason)")
                }
                for problem in report.problems { Output.note(problem) }
            } onError: { error in
                Output.error("applying the record stores' changes failed: \(ReplicaError.message(of: error)); trying again")
            }
        }
        let background = [
            Task { await self.sweep() },
            Task(priority: .background) { await self.embed() },
            Task(priority: .background) { await self.enrich() },
        ]
        let signal = await stopSignal.wait()
        Output.note("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping the sources and committing what is in flight")
        sources.cancel()
        await sources.value
        Output.note("sources stopped; applying the record stores' last changes")
        projection.cancel()
        await projection.value
        Output.note("record stores caught up; stopping the sweep, embedding and enrichment")
        for task in background { task.cancel() }
        for task in background { await task.value }
        Output.note("stopped")
    }

    /// Embeds new and changed items for semantic search, at low priority, a batch at a time: searches
    /// answer by the words until an item's vectors are in. Rebuilds the ranking lists of big indexes that
    /// fell behind first (cheap when none did). A failure is reported once per failure streak, and tried
    /// again later.
    private func embed() async {
        let embeds = store.configuration.embedder != nil
        if !embeds, let reason = Context.unsaidMissingModelReason { Output.note(reason) }
        var failing = false, listsFailing = false, wordsFailing = false
        while !Task.isCancelled {
            // Words another analyzer made are made again first: the lists are built from the new ones.
            do {
                let remade = try await store.remakeStaleWords()
                if remade > 0 { Output.note("made the words of \(remade) index\(remade == 1 ? "" : "es") again for this version's analyzer") }
                wordsFailing = false
            } catch is CancellationError {
                break   // the watcher is stopping; the next start goes on from the last batch
            } catch {
                if !wordsFailing { Output.note("the words could not be made again for this version's analyzer: \(ReplicaError.message(of: error)); searches read the old words; trying again later") }
                wordsFailing = true
            }
            // The ranking lists of big indexes follow in the same quiet moments (see Store).
            do {
                try await store.rebuildStaleRankingLists(minimumItems: Embedding.rankingListsMinimumItems)
                listsFailing = false
            } catch is CancellationError {
                break   // the watcher is stopping
            } catch {
                if !listsFailing { Output.note("the ranking lists could not be rebuilt: \(ReplicaError.message(of: error)); searches score every match until they are; trying again later") }
                listsFailing = true
            }
            if embeds {
                do {
                    _ = try await store.embedPendingItems()
                    failing = false
                } catch is CancellationError {
                    break
                } catch {
                    if !failing { Output.note("embedding for semantic search failed: \(ReplicaError.message(of: error)); trying again later") }
                    failing = true
                }
            }
            try? await Task.sleep(for: reloadInterval * 2)
        }
    }

    /// Summaries and priority for new and changed items that ask for them, in the background; each item
    /// changed is announced (with `--json`, as a line on standard output).
    private func enrich() async {
        var failing = false
        while !Task.isCancelled {
            do {
                let report = try await store.enrichPendingItems()
                failing = false
                announce(report)
            } catch {
                if !failing { Output.note("enrichment failed: \(ReplicaError.message(of: error)); trying again later") }
                failing = true
            }
            try? await Task.sleep(for: enrichInterval)
        }
    }

    /// One line per index whose items enrichment changed:
    /// `{"event": "itemsUpdated", "account", "index", "items": [{"uniqueIdentifier", "changed": […]}]}`.
    private func announce(_ report: EnrichmentReport) {
        var groups: [(account: AccountID, index: String, items: [(ItemIdentifier, [AttributeKey])])] = []
        for update in report.updates {
            if let last = groups.indices.last, groups[last].account == update.account, groups[last].index == update.index {
                groups[last].items.append((update.identifier, update.changed))
            } else {
                groups.append((update.account, update.index, [(update.identifier, update.changed)]))
            }
        }
        for group in groups {
            if json {
                Output.printJSON(.object([
                    ("event", "itemsUpdated"), ("account", .string(group.account.rawValue)), ("index", .string(group.index)),
                    ("items", .array(group.items.map { identifier, changed in
                        .object([("uniqueIdentifier", .string(identifier.rawValue)), ("changed", .array(changed.map { .string($0.rawValue) }))])
                    })),
                ]))
            } else {
                Output.note("enriched \(group.items.count) item\(group.items.count == 1 ? "" : "s") of account '\(group.account)', index '\(group.index)'")
            }
        }
    }

    /// Expired items purged and failed deletions retried every `sweepInterval`; a failure is reported once
    /// per failure streak and tried again at the next sweep.
    private func sweep() async {
        var failing = false
        while !Task.isCancelled {
            try? await Task.sleep(for: sweepInterval)
            if Task.isCancelled { return }
            do {
                _ = try await store.sweep()
                failing = false
            } catch {
                if !failing { Output.error("sweeping expired items and pending deletions failed: \(ReplicaError.message(of: error)); trying again later") }
                failing = true
            }
        }
    }

    /// Keeps one task per source of a signed-in account: starts new ones, stops removed ones, restarts a
    /// failing one after a back-off.
    private func superviseSources() async {
        var running: [String: (definition: SourceDefinition, task: Task<Void, Never>)] = [:]
        while !Task.isCancelled {
            let current = (try? await store.sources()) ?? running.values.map(\.definition)
            let wanted = Dictionary(current.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for (name, entry) in running where wanted[name] != entry.definition {
                entry.task.cancel()
                await entry.task.value
                running[name] = nil
            }
            for (name, definition) in wanted where running[name] == nil {
                running[name] = (definition, Task { await self.follow(definition) })
            }
            try? await Task.sleep(for: reloadInterval)
        }
        // Sources stop first; each commits what it has in flight.
        for entry in running.values { entry.task.cancel() }
        for entry in running.values { await entry.task.value }
    }

    /// Watches one source until cancelled, restarting it with back-off when it fails.
    private func follow(_ definition: SourceDefinition) async {
        let backoff = Backoff(initial: 1, maximum: 300)
        var failures = 0
        while !Task.isCancelled {
            do {
                let source = try SourceFactory.make(definition, store: store)
                let context = try await SourceContext(definition: definition, store: store)
                try await source.watch(context)
                return
            } catch {
                if Task.isCancelled { return }
                failures += 1
                let message = ReplicaError.message(of: error)
                Output.note("source '\(definition.name)' failed: \(message); retrying in \(Int(backoff.delay(afterFailures: failures))) s")
                if let context = try? await SourceContext(definition: definition, store: store) {
                    await context.report(.failed, detail: "retrying in \(Int(backoff.delay(afterFailures: failures))) s")
                    await context.report(error: message)
                }
                try? await Task.sleep(for: .seconds(backoff.delay(afterFailures: failures)))
            }
        }
    }
}

/// Waits for one of some signals, delivered through a Dispatch source rather than a signal handler.
final class SignalWaiter: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []
    private let received = AsyncStream<Int32>.makeStream()

    init(signals: [Int32]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let continuation = received.continuation
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
    }

    func wait() async -> Int32 {
        for await number in received.stream { return number }
        return SIGTERM
    }
}

/// `replica watch`.
enum WatchCommand: Command {
    static let name = "watch"
    static let summary = "follow every source and record store until stopped"
    static let usage = """
        Usage: replica [--store DIR] watch [--json]

        The background watcher: follows every source of the store's signed-in accounts (file trees with
        inotify, git repositories' refs, plugins), applies each record store's changes as they are
        committed, embeds new and changed items for semantic search in the background at low priority,
        enriches the items that ask for summaries or priority (and says which it changed), purges
        expired items and retries queued deletions, until SIGTERM or SIGINT. Sources
        added, removed or signed out while it runs are picked up within a second. On a signal it stops
        the sources, commits what is in flight and exits within a few seconds.

        config/replica-watch.service runs it as a systemd user service at low CPU and I/O priority.
        'replica sync', 'search' and the other commands may run while it does.

        """
    static let options: [Option] = [
        .flag("--json", """
            announce changes as JSON lines on standard output; for now one kind:
            {"event": "itemsUpdated", "account", "index", "items": [{"uniqueIdentifier",
            "changed": ["textContentSummary", "isPriority"]}]} when enrichment changed items
            """),
    ]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = arguments.flag("--json")
        try arguments.finish()
        let configuration = try context.configuration()
        let store = try context.openStore(longRunning: true, enriching: true)
        await Watcher(store: store, configuration: configuration, json: json).run()
        // Everything is committed and said: the process ends here, on this thread. Returning to the main
        // task first was seen to hang under a loaded machine (in 5 of 10 full test runs the watcher printed
        // "stopped" and its main thread never resumed), and a watcher that will not exit is worse than one
        // that skips the exit handlers: SQLite needs none (its write-ahead logs are read back at next open).
        ReplicaCommand.finish(status: 0, skippingExitHandlers: true)
    }
}
