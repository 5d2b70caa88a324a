import Dispatch
import Foundation
import Replica

#if canImport(Glibc)
import Glibc
#endif

/// `replica watch`'s wiring: the library's watch services in a ``ServiceGroup`` that stops on SIGTERM or
/// SIGINT, with what they say written to standard error (and enrichment's changes, with `--json`, to
/// standard output).
struct Watcher: Sendable {
    let store: Store
    let configuration: ConfigurationFile
    /// Print what happens as JSON lines on standard output (`--json`).
    let json: Bool
    /// How long the services may take to stop once a signal came; then the watcher exits without them.
    static let maximumShutdownTime = Duration.seconds(30)

    /// Runs until a signal arrives and every service has stopped.
    ///
    /// - Throws: ``ServiceGroupError`` when a service failed or would not stop in time.
    func run() async throws {
        if store.configuration.embedder == nil, let reason = Context.unsaidMissingModelReason { Output.note(reason) }
        let services = WatchServices.all(
            store: store, configuration: configuration, sources: .builtIn,
            rankingListsMinimumItems: Embedding.rankingListsMinimumItems,
            notes: { Output.note($0.message) },
            onEnrichment: { [json] in Self.announce($0, json: json) })
        Output.note("watching \(store.directory.path); stop with SIGTERM or Ctrl-C")
        let group = ServiceGroup(
            services: services, signals: [SIGTERM, SIGINT], maximumShutdownTime: Self.maximumShutdownTime,
            onEvent: Self.say)
        try await group.run()
    }

    /// A note on standard error for each step of the shutdown.
    @Sendable private static func say(_ event: ServiceGroup.Event) {
        switch event {
        case .started, .stoppingService:
            break
        case .stopping(.signal(let number)):
            let name = number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
            Output.note(
                "received \(name); stopping the sources and committing what is in flight, then the rest in order (a second \(name) stops everything at once)"
            )
        case .stopping(let reason):
            Output.note("stopping (\(reason)); the sources first")
        case .stopped(let service):
            Output.note("\(service) stopped")
        case .failed(let service, let message):
            Output.error("\(service) failed: \(message)")
        case .abandoned(let service):
            Output.note("\(service) cancelled; not waiting for it to stop")
        case .finished:
            Output.note("stopped")
        }
    }

    /// One line per index whose items enrichment changed:
    /// `{"event": "itemsUpdated", "account", "index", "items": [{"uniqueIdentifier", "changed": […]}]}`.
    private static func announce(_ report: EnrichmentReport, json: Bool) {
        var groups: [(account: AccountID, index: String, items: [(ItemIdentifier, [AttributeKey])])] = []
        for update in report.updates {
            if let last = groups.indices.last, groups[last].account == update.account,
                groups[last].index == update.index
            {
                groups[last].items.append((update.identifier, update.changed))
            } else {
                groups.append((update.account, update.index, [(update.identifier, update.changed)]))
            }
        }
        for group in groups {
            if json {
                Output.printJSON(
                    .object([
                        ("event", "itemsUpdated"), ("account", .string(group.account.rawValue)),
                        ("index", .string(group.index)),
                        (
                            "items",
                            .array(
                                group.items.map { identifier, changed in
                                    .object([
                                        ("uniqueIdentifier", .string(identifier.rawValue)),
                                        ("changed", .array(changed.map { .string($0.rawValue) })),
                                    ])
                                })
                        ),
                    ]))
            } else {
                Output.note(
                    "enriched \(group.items.count) item\(group.items.count == 1 ? "" : "s") of account '\(group.account)', index '\(group.index)'"
                )
            }
        }
    }
}

/// `replica watch`.
enum WatchCommand: Command {
    static let name = "watch"
    static let summary = "follow every source and record store until stopped"
    static let about = """
        The background watcher: follows every source of the store's signed-in accounts (file trees with
        inotify, git repositories' refs, plugins), applies each record store's changes as they are
        committed, embeds new and changed items for semantic search in the background at low priority,
        enriches the items that ask for summaries or priority (and says which it changed), purges
        expired items and retries queued deletions, until SIGTERM or SIGINT. Sources
        added, removed or signed out while it runs are picked up within a second. On a signal its parts
        stop one at a time, the sources first, each committing what is in flight, and it exits within a
        few seconds; a part still running 30 s after the signal is left behind (exit status 1), and a
        second signal stops everything at once.

        config/replica-watch.service runs it as a systemd user service at low CPU and I/O priority.
        'replica sync', 'search' and the other commands may run while it does.

        """
    static let json = Option.flag(
        "--json",
        """
        announce changes as JSON lines on standard output; for now one kind:
        {"event": "itemsUpdated", "account", "index", "items": [{"uniqueIdentifier",
        "changed": ["textContentSummary", "isPriority"]}]} when enrichment changed items
        """)
    static let options: [any OptionDeclaration] = [json]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = try arguments[Self.json]
        try arguments.finish()
        let configuration = try context.configuration()
        let store = try context.openStore(longRunning: true, enriching: true)
        try await Watcher(store: store, configuration: configuration, json: json).run()
    }
}
