/// What a service says while it runs: a failure it will try again, or a step worth a line in a log.
///
/// Notes never quote indexed text.
public struct ServiceNote: Sendable, Equatable {
    /// The service's name.
    public var service: String
    /// One line.
    public var message: String
    /// Whether the note tells of a failure (the service retries it).
    public var isFailure: Bool

    /// Creates a note.
    public init(service: String, message: String, isFailure: Bool) {
        self.service = service
        self.message = message
        self.isFailure = isFailure
    }
}

/// Hears a service's notes.
public typealias ServiceNotes = @Sendable (ServiceNote) -> Void

/// The services that keep every index of a store fresh, as `replica watch` runs them.
///
/// For example, a host that follows everything until SIGTERM:
/// ```swift
/// let file = try ConfigurationFile.load(from: URL(fileURLWithPath: "/var/lib/notes/replica/config.json"))
/// let sources = SourceRegistry()   // register the kinds of source the app follows (see SourceRegistry)
/// let services = WatchServices.all(store: store, configuration: file, sources: sources) { note in print(note.message) }
/// try await ServiceGroup(services: services, signals: [SIGTERM, SIGINT]).run()
/// ```
public enum WatchServices {
    /// The sweep, embedding, enrichment, the record stores' projection and the sources, in the order a
    /// ``ServiceGroup`` starts them: the sources stop first and the sweep last.
    ///
    /// - Parameters:
    ///   - store: the store whose indexes the services keep fresh.
    ///   - configuration: the projections and followed tables of the record stores.
    ///   - sources: how the store's sources are made.
    ///   - rankingListsMinimumItems: how many items an index holds before it gets ranking lists.
    ///   - notes: hears each service's failures and steps.
    ///   - onEnrichment: hears each enrichment pass that changed items.
    public static func all(
        store: Store, configuration: ConfigurationFile, sources: SourceRegistry,
        rankingListsMinimumItems: Int = 10_000, notes: @escaping ServiceNotes = { _ in },
        onEnrichment: @escaping @Sendable (EnrichmentReport) -> Void = { _ in }
    ) -> [any Service] {
        let engine = ProjectionEngine(
            store: store, projections: configuration.projections, followedTables: configuration.followedTables)
        return [
            SweepService(store: store, notes: notes),
            EmbeddingService(store: store, rankingListsMinimumItems: rankingListsMinimumItems, notes: notes),
            EnrichmentService(store: store, notes: notes, onReport: onEnrichment),
            ProjectionService(engine: engine, notes: notes),
            SourceSupervisor(store: store, registry: sources, notes: notes),
        ]
    }
}

/// Keeps one task per source of a signed-in account: starts new ones, stops removed ones, restarts a
/// failing one after a back-off (1 second, doubling up to 5 minutes), and records its error for
/// `Store.sourceStatuses()`. On cancellation every source stops, each committing what it has in flight.
public struct SourceSupervisor: Service {
    public var name: String { "sources" }
    /// The store whose sources it follows.
    public let store: Store
    /// How the sources are made.
    public let registry: SourceRegistry
    /// How often the store's list of sources and accounts is read again.
    public let reloadInterval: Duration
    private let notes: ServiceNotes

    /// Creates the service.
    public init(
        store: Store, registry: SourceRegistry, reloadInterval: Duration = .seconds(1),
        notes: @escaping ServiceNotes = { _ in }
    ) {
        self.store = store
        self.registry = registry
        self.reloadInterval = reloadInterval
        self.notes = notes
    }

    public func run() async throws {
        var running: [String: (definition: SourceDefinition, task: Task<Void, Never>)] = [:]
        while !Task.isCancelled {
            let current = (try? await store.sources()) ?? running.values.map(\.definition)
            let wanted = Dictionary(current.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            for (name, entry) in running where wanted[name] != entry.definition {
                entry.task.cancel()
                await entry.task.value
                running[name] = nil
            }
            for (name, definition) in wanted where running[name] == nil {
                running[name] = (definition, Task { await follow(definition) })
            }
            try? await Task.sleep(for: reloadInterval)
        }
        for entry in running.values { entry.task.cancel() }
        for entry in running.values { await entry.task.value }
    }

    /// Watches one source until cancelled, restarting it with back-off when it fails.
    private func follow(_ definition: SourceDefinition) async {
        let backoff = Backoff(initial: 1, maximum: 300)
        var failures = 0
        while !Task.isCancelled {
            do {
                let source = try registry.makeSource(for: definition, store: store)
                let context = try await SourceContext(definition: definition, store: store)
                try await source.watch(context)
                return
            } catch {
                if Task.isCancelled { return }
                failures += 1
                let message = ReplicaError.message(of: error)
                let delay = backoff.delay(afterFailures: failures)
                notes(
                    ServiceNote(
                        service: name,
                        message: "source '\(definition.name)' failed: \(message); retrying in \(Int(delay)) s",
                        isFailure: true))
                if let context = try? await SourceContext(definition: definition, store: store) {
                    await context.report(.failed, detail: "retrying in \(Int(delay)) s")
                    await context.report(error: message)
                }
                try? await Task.sleep(for: .seconds(delay))
            }
        }
    }
}

/// Applies every record store's change log, and the followed tables, as they grow
/// (``ProjectionEngine/run(every:onReport:onError:)``); on cancellation, a last catch-up applies the last
/// changes. A catch-up that fails is a note and is tried again.
public struct ProjectionService: Service {
    public var name: String { "record stores" }
    /// The engine that applies the changes.
    public let engine: ProjectionEngine
    /// How often the record stores are checked for changes.
    public let interval: Duration
    private let notes: ServiceNotes

    /// Creates the service.
    public init(
        engine: ProjectionEngine, interval: Duration = .milliseconds(100), notes: @escaping ServiceNotes = { _ in }
    ) {
        self.engine = engine
        self.interval = interval
        self.notes = notes
    }

    public func run() async throws {
        await engine.run(every: interval) { [name, notes] report in
            for entry in report.quarantined {
                notes(
                    ServiceNote(
                        service: name,
                        message:
                            "record \(entry.kind) '\(entry.id)' of account '\(entry.account)' was not indexed: \(entry.reason)",
                        isFailure: true))
            }
            for problem in report.problems { notes(ServiceNote(service: name, message: problem, isFailure: true)) }
        } onError: { [name, notes] error in
            notes(
                ServiceNote(
                    service: name,
                    message:
                        "applying the record stores' changes failed: \(ReplicaError.message(of: error)); trying again",
                    isFailure: true))
        }
    }
}

/// Purges expired items and retries the deletions that are due (``Store/sweep(backoff:)``) every
/// `interval`; a failure is a note once per failure streak, and tried again at the next sweep.
public struct SweepService: Service {
    public var name: String { "sweep" }
    /// The store swept.
    public let store: Store
    /// How long between sweeps.
    public let interval: Duration
    private let notes: ServiceNotes

    /// Creates the service.
    public init(store: Store, interval: Duration = .seconds(60), notes: @escaping ServiceNotes = { _ in }) {
        self.store = store
        self.interval = interval
        self.notes = notes
    }

    public func run() async throws {
        var sweeping = FailureStreak(service: name, notes: notes)
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            do {
                _ = try await sweeping.run({
                    "sweeping expired items and pending deletions failed: \($0); trying again later"
                }) {
                    try await store.sweep()
                }
            } catch {
                return  // cancelled
            }
        }
    }
}

/// The background work that makes searches faster and smarter, at low priority, a pass every
/// `interval` and as soon as a load ends (a watched source's first scan): words an older analyzer made
/// are made again, big indexes' ranking lists are rebuilt when they fell behind, and new and changed
/// items are embedded for semantic search (when the store has a model). Searches answer by the words
/// meanwhile. Each failure is a note once per failure streak.
public struct EmbeddingService: Service {
    public var name: String { "embedding" }
    /// The store whose indexes it works on.
    public let store: Store
    /// How many items an index holds before it gets ranking lists.
    public let rankingListsMinimumItems: Int
    /// How long between passes.
    public let interval: Duration
    private let notes: ServiceNotes

    /// Creates the service.
    public init(
        store: Store, rankingListsMinimumItems: Int = 10_000, interval: Duration = .seconds(2),
        notes: @escaping ServiceNotes = { _ in }
    ) {
        self.store = store
        self.rankingListsMinimumItems = rankingListsMinimumItems
        self.interval = interval
        self.notes = notes
    }

    public func run() async throws {
        let embeds = store.configuration.embedder != nil
        var words = FailureStreak(service: name, notes: notes)
        var lists = words
        var vectors = words
        while !Task.isCancelled {
            let loadsEnded = store.loadsEnded
            do {
                // Words another analyzer made are made again first: the lists are built from the new ones.
                let remade = try await words.run({
                    "the words could not be made again for this version's analyzer: \($0); searches read the old words; trying again later"
                }) {
                    try await store.remakeStaleWords()
                }
                if let remade, remade > 0 {
                    notes(
                        ServiceNote(
                            service: name,
                            message:
                                "made the words of \(remade) index\(remade == 1 ? "" : "es") again for this version's analyzer",
                            isFailure: false))
                }
                _ = try await lists.run({
                    "the ranking lists could not be rebuilt: \($0); searches score every match until they are; trying again later"
                }) {
                    try await store.rebuildStaleRankingLists(minimumItems: rankingListsMinimumItems)
                }
                if embeds {
                    _ = try await vectors.run({ "embedding for semantic search failed: \($0); trying again later" }) {
                        try await store.embedPendingItems()
                    }
                }
            } catch {
                return  // cancelled: the next start goes on from the last batch
            }
            // A load that ended (a watched source's first scan) wakes it: the lists it held back are built
            // at once, not up to an interval later.
            await withTaskGroup(of: Void.self) { [store, interval] group in
                group.addTask { try? await Task.sleep(for: interval) }
                group.addTask { await store.loadEnd(after: loadsEnded) }
                await group.next()
                group.cancelAll()
            }
        }
    }
}

/// Summaries and priority for new and changed items that ask for them (``Store/enrichPendingItems(accounts:)``),
/// every `interval`: a cheap query per index when none waits. Each pass that changed items is handed to
/// `onReport`; a failure is a note once per failure streak.
public struct EnrichmentService: Service {
    public var name: String { "enrichment" }
    /// The store whose items it enriches.
    public let store: Store
    /// How long between passes: a host waits at most this long (plus the enrichment) for an update.
    public let interval: Duration
    private let notes: ServiceNotes
    private let onReport: @Sendable (EnrichmentReport) -> Void

    /// Creates the service.
    public init(
        store: Store, interval: Duration = .milliseconds(250), notes: @escaping ServiceNotes = { _ in },
        onReport: @escaping @Sendable (EnrichmentReport) -> Void = { _ in }
    ) {
        self.store = store
        self.interval = interval
        self.notes = notes
        self.onReport = onReport
    }

    public func run() async throws {
        var enriching = FailureStreak(service: name, notes: notes)
        while !Task.isCancelled {
            do {
                let report = try await enriching.run({ "enrichment failed: \($0); trying again later" }) {
                    try await store.enrichPendingItems()
                }
                if let report, !report.updates.isEmpty { onReport(report) }
            } catch {
                return  // cancelled
            }
            try? await Task.sleep(for: interval)
        }
    }
}

/// One step of a service's pass whose failures are said once per streak: the first failure, and the
/// first after a success, so that a failure retried every few seconds fills no log.
struct FailureStreak {
    let service: String
    let notes: ServiceNotes
    private var failing = false

    init(service: String, notes: @escaping ServiceNotes) {
        self.service = service
        self.notes = notes
    }

    /// Runs `step`: its value, or `nil` when it failed (said, worded by `describe` from the error's
    /// message, unless the last run failed too).
    ///
    /// - Throws: `CancellationError` only: the service is stopping.
    mutating func run<Value>(_ describe: (String) -> String, _ step: () async throws -> Value) async throws -> Value? {
        do {
            let value = try await step()
            failing = false
            return value
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if !failing {
                notes(
                    ServiceNote(service: service, message: describe(ReplicaError.message(of: error)), isFailure: true))
            }
            failing = true
            return nil
        }
    }
}
