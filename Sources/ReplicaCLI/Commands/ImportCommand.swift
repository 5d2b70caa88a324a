import Foundation
import Replica

/// `replica import`: JSON lines of searchable items into an account's index.
enum ImportCommand: Command {
    static let name = "import"
    static let summary = "index JSON lines of items into an account"
    static let about = """
        Reads searchable items, one JSON object per line, from FILE (or standard input for -) and indexes
        them into the account's index. The account must be signed in (`replica accounts sign-in ID`):
        lines for an account that is not are each refused, so a signed-out account never comes back by
        being written to.

        Each line:
          {"uniqueIdentifier": "n1", "domainIdentifier": "account.a.notes",
           "expirationDate": "2027-01-01T00:00:00Z", "isUpdate": false,
           "attributes": {"title": "…", "textContent": "…", "contentType": "public.plain-text",
                          "contentModificationDate": "2026-11-20T10:00:00Z", "keywords": ["…"]}}
        Attribute names are Core Spotlight's; dates are ISO 8601. Without an expirationDate an item
        expires after 30 days. With "isUpdate": true the attributes are merged into the stored item
        (null removes one) instead of replacing it.

        A line that cannot be read (bad JSON, no identifier, a wrong attribute type, not UTF-8, too
        large), or whose identifier belongs to an item another owner made (the record store's projection,
        a source), is reported with its number and skipped; the rest is imported, and the exit status is
        1. With --client-state, the import is one transaction: a refused line means nothing is written
        and the client state stays as it was, so the sync that sent the lines can send them again.
        With --expected-client-state as well, the import is a compare-and-swap: it is written only if the
        index's client state is still that one when it commits (checked under a lock, so of several
        imports expecting the same state, in this process or others, exactly one lands); otherwise
        nothing is written and the exit status is 1. --expect-no-client-state expects none.

        """
    static let account = CommonOptions.account.help("the account to import into (required)").required()
    static let index = CommonOptions.index.help("the named index (default: default)")
    static let clientState = Option.string(
        "--client-state", "TEXT",
        "store TEXT as the index's client state, in the same transaction as the\nitems: all of the import and its state are written, or none (none\nwhen any line was refused)"
    )
    static let expectedClientState = Option.string(
        "--expected-client-state", "TEXT",
        "with --client-state: write only if the index's client state is still TEXT\n(compare-and-swap); otherwise nothing is written"
    ).oneOf("expected state")
    static let expectNoClientState = Option.flag(
        "--expect-no-client-state", "with --client-state: write only if the index has no client state yet"
    ).oneOf("expected state")
    static let noEmbed = CommonOptions.noEmbed.help(
        "leave the items to be embedded for semantic search later (by watch\nor the next command); by default they are embedded before it exits"
    )
    static let json = Option.flag("--json", "print a summary object on standard output")
    static let options: [any OptionDeclaration] = [
        account, index, clientState, expectedClientState,
        expectNoClientState, noEmbed, Embedding.Plan.option, json,
    ]
    static let synopses = [Synopsis("", ImportFile.operand)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        try await run(&arguments, context: context, parse: SearchableItem.init(json:))
    }

    /// Imports lines each `parse` makes an item of (items here, entities for `replica entities import`).
    static func run(_ arguments: inout Arguments, context: Context, parse: (JSON) throws -> SearchableItem) async throws
    {
        let account = try requiredAccount(&arguments)
        let indexName = try indexName(&arguments)
        let clientState = try arguments[Self.clientState]
        let expectedState = try arguments[Self.expectedClientState]
        let expectsNone = try arguments[Self.expectNoClientState]
        guard clientState != nil || (expectedState == nil && !expectsNone) else {
            throw CLIError.usage(
                "--expected-client-state and --expect-no-client-state go with --client-state: give the state to write")
        }
        guard expectedState == nil || !expectsNone else {
            throw CLIError.usage("give --expected-client-state TEXT or --expect-no-client-state, not both")
        }
        let json = try arguments[Self.json]
        let embedding = try Embedding.Plan.read(&arguments)
        var reader = try LineReader(path: arguments[operand: ImportFile.operand])
        defer { reader.close() }

        let store = try context.openStore(enriching: true)
        // An account that is not signed in (or is signed out while the import runs) has every line refused.
        var refusal: ReplicaError?
        var index: SearchableIndex?
        do {
            index = try await store.index(named: indexName, account: account)
        } catch let error as ReplicaError where error.code == .accountNotSignedIn {
            refusal = error
        }
        let batch = clientState != nil ? index?.beginBatch() : nil
        var pending: [(item: SearchableItem, line: Int)] = []
        var imported = 0
        var rejected = 0
        let started = Date()

        func refuse(_ entries: [(item: SearchableItem, line: Int)], _ error: ReplicaError) {
            rejected += entries.count
            for entry in entries { Output.note("line \(entry.line): \(error.message)") }
        }
        // The first line an account that is not signed in refused: nothing from there on is written.
        var stoppedAt: Int?
        var unwritten = 0
        func stop(_ error: ReplicaError, at line: Int, unwritten count: Int) {
            refusal = error
            stoppedAt = stoppedAt ?? line
            unwritten += count
        }

        func flush() async throws {
            guard !pending.isEmpty else { return }
            defer { pending.removeAll(keepingCapacity: true) }
            if let refusal { return stop(refusal, at: pending[0].line, unwritten: pending.count) }
            guard let index else { return }
            if let batch {
                try batch.indexItems(pending.map(\.item))
                imported += pending.count
                return
            }
            do {
                try await index.indexItems(pending.map(\.item))
                imported += pending.count
            } catch let error as ReplicaError where error.code == .accountNotSignedIn {
                stop(error, at: pending[0].line, unwritten: pending.count)
            } catch let error as ReplicaError where error.code == .notOwner {
                // Some identifiers belong to another owner's items: write the lines one by one, so only
                // those are refused.
                for (position, entry) in pending.enumerated() {
                    do {
                        try await index.indexItems([entry.item])
                        imported += 1
                    } catch let error as ReplicaError where error.code == .notOwner {
                        refuse([entry], error)
                    } catch let error as ReplicaError where error.code == .accountNotSignedIn {
                        stop(error, at: entry.line, unwritten: pending.count - position)
                        break
                    }
                }
            }
        }

        // One load: the vocabulary of its transactions of 2,000 lines is added up once, at its end.
        try await store.load(accounts: [account]) {
            while let line = try reader.nextJSON() {
                do {
                    pending.append((try parse(line.get()), reader.lineNumber))
                } catch let error as ReplicaError {
                    rejected += 1
                    Output.note("line \(reader.lineNumber): \(error.message)")
                    continue
                }
                if pending.count >= 2000 || refusal != nil { try await flush() }
                if refusal != nil { break }
                let rate = Double(imported + pending.count) / max(Date().timeIntervalSince(started), 0.001)
                Progress.update(
                    "importing: \(imported + pending.count) items, \(rejected) rejected (\(Int(rate))/s)")
            }
            try await flush()
        }
        if let refusal, let stoppedAt {
            // One line for the whole refusal, not one per line: the lines left are counted, not read as items.
            unwritten += try reader.countRemainingLines()
            rejected += unwritten
            let kept =
                imported > 0
                ? " (the \(imported) item\(imported == 1 ? "" : "s") before \(imported == 1 ? "it was" : "them were") written)"
                : ""
            Output.note(
                "line \(stoppedAt): \(refusal.message); the import stopped there: \(unwritten) line\(unwritten == 1 ? "" : "s") "
                    + "from there on \(unwritten == 1 ? "was" : "were") not written\(kept)")
        }
        if let batch, let clientState {
            guard rejected == 0 else {
                Progress.clear()
                throw CLIError.failure(
                    "nothing was imported into account '\(account)' and its client state was not changed: \(rejected) line\(rejected == 1 ? " was" : "s were") refused (reasons above); fix them and import again"
                )
            }
            do {
                if expectedState != nil || expectsNone {
                    try await batch.end(
                        expectedClientState: expectedState.map { Data($0.utf8) }, newClientState: Data(clientState.utf8)
                    )
                } else {
                    try await batch.end(clientState: Data(clientState.utf8))
                }
            } catch let error as ReplicaError
                where [.notOwner, .accountNotSignedIn, .clientStateMismatch].contains(error.code)
            {
                Progress.clear()
                throw CLIError.failure(
                    "nothing was imported into account '\(account)' and its client state was not changed: \(error.message)"
                )
            }
        }
        Progress.clear()
        // Even when nothing was imported: a run killed after indexing left its ranking lists, vectors or
        // summaries to the next command (each a cheap look when nothing waits).
        let importing = Date().timeIntervalSince(started)
        let finishing = try await Embedding.bringUpToDate(store, accounts: [account], embedding: embedding)
        await Embedding.enrich(store, accounts: [account])
        let total = Date().timeIntervalSince(started)

        if json {
            Output.printJSON(
                .object([
                    ("account", .string(account.rawValue)), ("index", .string(indexName)),
                    ("imported", .number(Double(imported))), ("rejected", .number(Double(rejected))),
                    ("seconds", Embedding.Finishing.json(total)),
                ]))
        }
        let summary = "imported \(imported) item\(imported == 1 ? "" : "s") into account '\(account)'"
        if rejected > 0 {
            throw CLIError.failure("\(summary); rejected \(rejected) line\(rejected == 1 ? "" : "s") (reasons above)")
        }
        if !json { Output.note(summary + " " + finishing.took(total, work: "importing", workSeconds: importing)) }
    }
}
