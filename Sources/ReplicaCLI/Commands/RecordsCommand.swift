import Foundation
import Replica

/// `replica records`: the canonical record store.
enum RecordsCommand: Command {
    static let name = "records"
    static let summary = "write records to the canonical record store"
    static let about = """
        Writes records, one JSON object per line, to the canonical record store, where they flow through
        the change log like any app write; then brings the index up to date, so what was written is
        searchable when the command returns. (A killed import leaves that to the next records import,
        sync or watch.)

        Each line:
          {"account": "a", "kind": "note", "id": "42", "version": 7, "deleted": false,
           "readers": ["a", "b"], "modified": "2026-11-20T10:00:00Z",
           "fields": {"title": "…", "body": "…"}}
        account, kind, id and version are required; version is a whole number up to 9223372036854775807
        (2^63-1), compared exactly: 1000 may be written 1e3, but a version beyond 2^53 must be written in
        plain digits, and one with a fraction is refused. A version older than the one held is ignored (and
        counted); "deleted": true removes the record's item and stays effective against older writes.
        How fields become attributes comes from the configuration's projections; see config/README.md.

        A line that cannot be read is reported with its number and skipped, and so is a record for an
        account that is not signed in (sign it in first with `replica accounts sign-in ID`: a signed-out
        account never comes back by being written to); a record whose fields do not fit its projection is
        reported (account, kind and id, never content) and kept out of the index. Any of these makes the
        exit status 1; everything else is written.

        """
    static let noEmbed = CommonOptions.noEmbed.help(
        "leave new items to be embedded for semantic search later (by watch or the next\ncommand); by default they are embedded before it exits"
    )
    static let json = Option.flag("--json", "print a summary object on standard output")
    static let options: [any OptionDeclaration] = [noEmbed, Embedding.Plan.option, json]
    static let synopses = [Synopsis("import", ImportFile.operand)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let json = try arguments[Self.json]
        let embedding = try Embedding.Plan.read(&arguments)
        let _: ImportAction = try arguments.action(of: name)
        let path = try arguments[operand: ImportFile.operand]
        let configuration = try context.configuration()
        var reader = try LineReader(path: path)
        defer { reader.close() }
        let store = try context.openStore(enriching: true)
        let started = Date()
        var pending: [(record: Record, line: Int)] = []
        var summary = RecordWriteSummary()
        var rejected = 0
        var accounts: [AccountID] = []

        // Each account's records go in one transaction; an account that is not signed in has each of its
        // lines refused, and the other accounts' records are still written.
        func flush() async throws {
            guard !pending.isEmpty else { return }
            var order: [AccountID] = []
            var byAccount: [AccountID: [(record: Record, line: Int)]] = [:]
            for entry in pending {
                if byAccount[entry.record.account] == nil { order.append(entry.record.account) }
                byAccount[entry.record.account, default: []].append(entry)
            }
            for account in order {
                let entries = byAccount[account] ?? []
                do {
                    summary = summary + (try await store.records.write(entries.map(\.record)))
                    if !accounts.contains(account) { accounts.append(account) }
                } catch let error as ReplicaError where error.code == .accountNotSignedIn {
                    rejected += entries.count
                    for entry in entries { Output.note("line \(entry.line): \(error.message)") }
                }
            }
            pending.removeAll(keepingCapacity: true)
        }

        while let line = try reader.nextJSON() {
            do {
                pending.append((try Record(json: line.get()), reader.lineNumber))
            } catch let error as ReplicaError {
                rejected += 1
                Output.note("line \(reader.lineNumber): \(error.message)")
                continue
            }
            if pending.count >= 500 { try await flush() }
            Progress.update("writing records: \(summary.written + pending.count) written, \(rejected) rejected")
        }
        try await flush()

        Progress.update("bringing the index up to date")
        let engine = ProjectionEngine(
            store: store, projections: configuration.projections, followedTables: configuration.followedTables)
        var report = CatchUpReport()
        // One load: a first projection's vocabulary is added up once, at its end.
        try await store.load(accounts: accounts) {
            for account in accounts {
                let caughtUp = try await engine.catchUp(account: account)
                report.indexed += caughtUp.indexed
                report.removed += caughtUp.removed
                report.rebuilt += caughtUp.rebuilt
                report.quarantined += caughtUp.quarantined
            }
        }
        Progress.clear()
        // Even when nothing new was indexed: a run killed after indexing left its ranking lists, vectors
        // or summaries to the next command (each a cheap look when nothing waits).
        let writing = Date().timeIntervalSince(started)
        let finishing = try await Embedding.bringUpToDate(store, accounts: accounts, embedding: embedding)
        await Embedding.enrich(store, accounts: accounts)
        let total = Date().timeIntervalSince(started)
        for entry in report.quarantined {
            Output.note(
                "record \(entry.kind) '\(entry.id)' of account '\(entry.account)' (version \(entry.version)) was not indexed: \(entry.reason)"
            )
        }
        if json {
            Output.printJSON(
                .object([
                    ("written", .number(Double(summary.written))),
                    ("ignoredOlder", .number(Double(summary.ignoredOlder))),
                    ("unchanged", .number(Double(summary.unchanged))), ("rejected", .number(Double(rejected))),
                    ("indexed", .number(Double(report.indexed))), ("removed", .number(Double(report.removed))),
                    ("quarantined", .number(Double(report.quarantined.count))),
                    ("seconds", Embedding.Finishing.json(total)),
                ]))
        }
        var text = "wrote \(summary.written) record\(summary.written == 1 ? "" : "s")"
        if summary.ignoredOlder > 0 {
            text += ", ignored \(summary.ignoredOlder) older version\(summary.ignoredOlder == 1 ? "" : "s")"
        }
        if summary.unchanged > 0 { text += ", \(summary.unchanged) already held" }
        text += "; indexed \(report.indexed), removed \(report.removed)"
        if rejected > 0 || !report.quarantined.isEmpty {
            var problems: [String] = []
            if rejected > 0 { problems.append("rejected \(rejected) line\(rejected == 1 ? "" : "s")") }
            if !report.quarantined.isEmpty {
                problems.append(
                    "\(report.quarantined.count) record\(report.quarantined.count == 1 ? "" : "s") not indexed")
            }
            throw CLIError.failure("\(text); \(problems.joined(separator: ", ")) (reasons above)")
        }
        if !json { Output.note(text + " " + finishing.took(total, work: "writing and indexing", workSeconds: writing)) }
    }
}
