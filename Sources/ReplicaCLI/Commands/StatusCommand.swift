import Foundation
import Replica

/// `replica status`: accounts, item counts, index sizes, client states.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "show accounts, item counts, index sizes and client states"
    static let about = """
        Shows the store's signed-in accounts, and for each its named indexes with their item counts
        (expired items not counted), sizes on disk and the client state of the last ended batch; and its
        record store: records held, changes not yet indexed, older deliveries ignored, deletions waiting
        to be retried, and records kept out of the index because they did not fit their projection; and
        each source's state (watching, degraded, failed, …), what it is doing, how many changes wait to be
        committed (its lag), when it last committed, its last error, and what it skipped and why; and
        semantic search's model, the vectors each index holds and the items waiting to be embedded (or
        why semantic search is off), and the multilingual model suggested when the model reads English
        and an account's items are mostly in other languages (a sample of each index); and enrichment:
        items given summaries or priority, waiting, and not enriched by reason (summarization.tooShort,
        priority.type, … — counts, never content).

        """
    static let json = Option.flag(
        "--json",
        """
        one JSON object: {"store": …, "semanticSearch": {"model", "problem" when it is damaged,
        "suggestion" of a model that reads the accounts' languages} or null, "standby": {"state"
        (serving, stale, unavailable), "lagSeconds", "reason", "reads": {…}} or null,
        "accounts": [{"id", "itemCount", "indexBytes", "lastClientState", "signedInAt",
        "languages": {CODE: N}, "indexes": [{"name", "itemCount", "bytes", "lastClientState",
        "vectors": {"items", "passages", "bytes", "backlog"},
        "enrichment": {"enriched", "pending", "failing", "skipped": {REASON: N}}}], "records": {"recordCount",
        "pendingChanges", "ignoredOlder", "pendingDeletions", "quarantined", "rebuilding", "waitingForFirstSync"}}],
        "sources": [{"name", "kind", "account", "state", "detail", "pending", "lastCommit",
        "lastError", "lastErrorAt", "skipped": [{"reason", "count"}]}]}
        """)
    static let options: [any OptionDeclaration] = [json]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = try arguments[Self.json]
        try arguments.finish()
        let store = try context.openStore()
        let status = try await store.status()
        let sources = try await store.sourceStatuses()
        if json {
            Output.printJSON(status.json.setting("sources", to: .array(sources.map(sourceJSON))))
            return
        }
        Output.line("store: \(status.directory.path)")
        if let database = status.database { Output.line("database: \(database)") }
        if let standby = status.standby {
            let lag = standby.lag.map { String(format: "%.1f s behind", $0.seconds) } ?? "lag unknown"
            switch standby.state {
            case .serving: Output.line("read database: a standby serving reads, \(lag)")
            case .stale: Output.line("read database: a standby, stale (\(lag)): \(standby.reason ?? "")")
            case .unavailable: Output.line("read database: unavailable: \(standby.reason ?? "")")
            }
        }
        let chosenBy = Context.openedModel.withLock { $0 }.map { " (chosen by \($0.chosenBy))" } ?? ""
        Output.line(
            status.semanticSearch.map { model in
                "semantic search: \(model)\(chosenBy)" + (status.semanticSearchProblem.map { ", damaged: \($0)" } ?? "")
            }
                ?? Context.missingModelReason ?? "semantic search is off")
        if let suggestion = status.modelSuggestion { Output.line("  suggestion: \(suggestion)") }
        if status.accounts.isEmpty {
            Output.line("no accounts signed in")
        }
        for account in status.accounts {
            Output.line("account \(account.id): \(account.itemCount) items, \(formatBytes(account.indexBytes))")
            for index in account.indexes {
                var line = "  index \(index.name): \(index.itemCount) items, \(formatBytes(index.bytes))"
                if case .string(let state) = StoreStatus.describe(clientState: index.lastClientState) {
                    line += ", client state \(state)"
                }
                if let embedding = index.embedding {
                    line +=
                        "; vectors for \(embedding.items) items (\(embedding.passages) passages, \(formatBytes(embedding.bytes)))"
                        + (embedding.backlog > 0 ? ", \(embedding.backlog) waiting to be embedded" : "")
                }
                Output.line(line)
                if let words = index.words, !words.isCurrent {
                    Output.line(
                        "    words: made by \(words.analyzer ?? "an older replica"), not this version's analyzer; "
                            + (words.remade.map {
                                "being made again: \($0) of \(words.items) items (sync or watch goes on)"
                            }
                                ?? "sync or watch makes them again") + "; searches read the old words meanwhile")
                }
                if let enrichment = index.enrichment, enrichment != EnrichmentStatus.none {
                    var facts = ["\(enrichment.enriched) enriched"]
                    if enrichment.pending > 0 {
                        facts.append(
                            "\(enrichment.pending) waiting"
                                + (enrichment.failing > 0 ? " (\(enrichment.failing) failing, retried later)" : ""))
                    }
                    let skipped = enrichment.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
                    if !skipped.isEmpty { facts.append("not enriched: " + skipped.joined(separator: ", ")) }
                    Output.line("    summaries and priority: " + facts.joined(separator: "; "))
                }
            }
            if let records = account.records, let problem = records.problem {
                Output.line("  records: cannot be read: \(problem)")
            } else if let records = account.records {
                Output.line(
                    "  records: \(records.recordCount) held, \(records.pendingChanges) changes not yet indexed, "
                        + "\(records.ignoredOlder) older deliveries ignored, \(records.pendingDeletions.count) deletions to retry, "
                        + "\(records.quarantined.count) quarantined")
                for entry in records.quarantined {
                    Output.line(
                        "    quarantined: \(entry.kind) '\(entry.id)' version \(entry.version): \(entry.reason)")
                }
                for deletion in records.pendingDeletions {
                    let target: String
                    switch deletion.target {
                    case .identifier(let identifier): target = "item '\(identifier)'"
                    case .domain(let domain): target = "domain '\(domain)'"
                    }
                    Output.line(
                        "    to delete: \(target) from index \(deletion.indexName), \(deletion.attempts) attempts, next "
                            + ISO8601.string(from: deletion.nextAttempt) + (deletion.lastError.map { " (\($0))" } ?? "")
                    )
                }
                if !records.waitingForFirstSync.isEmpty {
                    Output.line(
                        "    waiting for its first sync (replica sync or watch projects the records): "
                            + records.waitingForFirstSync.joined(separator: ", "))
                }
                if !records.rebuilding.isEmpty {
                    Output.line(
                        "    rebuilding for a new projection version: \(records.rebuilding.joined(separator: ", "))")
                }
            }
        }
        for source in sources {
            for line in describe(source) { Output.line(line) }
        }
    }

    static func sourceJSON(_ source: SourceStatus) -> JSON {
        .object(omittingNil: [
            ("name", .string(source.definition.name)), ("kind", .string(source.definition.kind.rawValue)),
            ("account", .string(source.definition.account.rawValue)), ("state", .string(source.state.rawValue)),
            ("detail", source.detail.map(JSON.string)), ("pending", .number(Double(source.pending))),
            ("lastCommit", source.lastCommit.map { .string(ISO8601.string(from: $0)) }),
            ("lastError", source.lastError.map(JSON.string)),
            ("lastErrorAt", source.lastErrorAt.map { .string(ISO8601.string(from: $0)) }),
            (
                "skipped",
                .array(
                    source.skipped.map {
                        .object([("reason", .string($0.reason)), ("count", .number(Double($0.count)))])
                    })
            ),
        ])
    }

    static func describe(_ source: SourceStatus) -> [String] {
        var line =
            "source \(source.definition.name) (\(source.definition.kind), account \(source.definition.account)): \(source.state)"
        if let detail = source.detail { line += " — \(detail)" }
        var lines = [line]
        var facts: [String] = []
        if let commit = source.lastCommit {
            let age = Int(Date().timeIntervalSince(commit))
            facts.append("last change committed \(age < 120 ? "\(age) s" : "\(age / 60) min") ago")
        }
        facts.append("\(source.pending) changes waiting")
        let skipped = source.skipped.reduce(0) { $0 + $1.count }
        if skipped > 0 {
            facts.append(
                "\(skipped) skipped ("
                    + source.skipped.prefix(3).map { "\($0.count) \($0.reason)" }.joined(separator: "; ") + ")")
        }
        lines.append("  " + facts.joined(separator: ", "))
        if let error = source.lastError {
            lines.append(
                "  last error" + (source.lastErrorAt.map { " at " + ISO8601.string(from: $0) } ?? "") + ": \(error)")
        }
        return lines
    }

    static func formatBytes(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1 << 20 { return String(format: "%.1f KiB", Double(bytes) / 1024) }
        if bytes < 1 << 30 { return String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
        return String(format: "%.2f GiB", Double(bytes) / 1_073_741_824)
    }
}
