import Foundation
import Replica

/// `replica activities`: user activities donated and deleted.
enum ActivitiesCommand: Command {
    static let name = "activities"
    static let summary = "donate or delete user activities (views, opens) of an account"
    static let about = """
        donate reads user activities, one JSON object per line, as NSUserActivity donates them:
          {"activityType": "com.example.notes.view", "persistentIdentifier": "view:note:42",
           "title": "Launch plan", "relatedUniqueIdentifier": "note:alice:42", "keywords": ["launch"],
           "date": "2026-11-23T09:00:00Z", "eligibleForSearch": true, "eligibleForPrediction": true,
           "attributes": {…}, "entity": {"type": "LandmarkEntity", "id": "42"}}
        An activity about an indexed item (relatedUniqueIdentifier) raises that item in search by
        engagement: recency halving every 7 days times min(1, log2(1 + views) / 4), at most 0.05 of a
        0-1 score, so it never passes a clearly better match. Donating the same persistentIdentifier
        again counts one more view. A search-eligible activity about nothing indexed is searchable
        itself (as activity:PID). Prediction-eligible activities feed replica recent. Activities are
        deleted with the account at sign-out. Lines that cannot be read are reported and skipped (exit 1).

        delete removes activities by persistent identifier (--id, repeatable or several after one) or
        all of them (--all), with the items made of them.

        """
    static let account = CommonOptions.account.help("the account (required; it must be signed in)").required()
    static let index = CommonOptions.index.help(
        "the named index holding the activities (default: default); use the index of\nthe items they are about")
    static let id = Option.list(
        "--id", "PID", only: ["delete"], "the activities with these persistent identifiers"
    ).required().oneOf("activities")
    static let all = Option.flag("--all", only: ["delete"], "every activity of the index").required().oneOf(
        "activities")
    static let options: [any OptionDeclaration] = [account, index, id, all]

    enum Action: String, CaseIterable { case donate, delete }
    static let file = Operand.one(
        "FILE|-", missing: "name the file of activities, or - for standard input",
        tooMany: "name the file of activities, or - for standard input")
    static let synopses = [Synopsis("donate", file), Synopsis("delete")]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let action: Action = try arguments.action(of: name)
        let account = try requiredAccount(&arguments)
        let indexName = try indexName(&arguments)
        switch action {
        case .donate:
            var reader = try LineReader(path: arguments[operand: Self.file])
            defer { reader.close() }
            let index = try await context.openStore().index(named: indexName, account: account)
            var activities: [UserActivity] = []
            var rejected = 0
            while let line = try reader.nextJSON() {
                do {
                    // Checked line by line, so one bad line is reported and skipped rather than
                    // refusing the whole donation when it is made.
                    let activity = try UserActivity(json: line.get())
                    try activity.validate()
                    activities.append(activity)
                } catch let error as ReplicaError {
                    rejected += 1
                    Output.note("line \(reader.lineNumber): \(error.message)")
                }
            }
            try await index.donateUserActivities(activities)
            Output.note(
                "donated \(activities.count) activit\(activities.count == 1 ? "y" : "ies") to account '\(account)'")
            if rejected > 0 { throw CLIError.quiet(status: 1) }
        case .delete:
            let identifiers = try arguments[Self.id]
            let all = try arguments[Self.all]
            try arguments.finish()
            guard identifiers.isEmpty != !all else { throw CLIError.usage("say what to delete: --id PID… or --all") }
            guard let index = try await context.openStore().existingIndex(named: indexName, account: account) else {
                throw CLIError.failure("account '\(account)' has no index '\(indexName)', or is not signed in")
            }
            let deleted =
                all
                ? try await index.deleteAllSavedUserActivities()
                : try await index.deleteSavedUserActivities(withPersistentIdentifiers: identifiers)
            Output.note("deleted \(deleted) activit\(deleted == 1 ? "y" : "ies")")
        }
    }
}

/// `replica recent`: what the person is likely to want next.
enum RecentCommand: Command {
    static let name = "recent"
    static let summary = "the items an account's person is likely to want next"
    static let about = """
        Lists the items of prediction-eligible user activities (replica activities donate), most engaged
        first: engagement is recency (halving every 7 days) times min(1, log2(1 + views) / 4).
        Before anything is shown, its item's owner is asked about it, as for replica search.

        """
    static let account = CommonOptions.accounts.help("only this account")
    static let limit = Option.integer("--limit", "N", in: 1...100, "at most N items (default 10, at most 100)")
    static let json = Option.flag(
        "--json",
        "{\"recent\": [{\"account\", \"index\", \"uniqueIdentifier\", \"title\", \"activityType\",\n\"lastViewed\", \"views\", \"engagement\", \"entity\"}]}"
    )
    static let options: [any OptionDeclaration] = [account, limit, json]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let accounts = try accounts(&arguments)
        let limit = try arguments[Self.limit] ?? 10
        let json = try arguments[Self.json]
        try arguments.finish()
        let store = try context.openStore()
        let recent = try await store.recentActivities(
            accounts: accounts, limit: limit, hydration: try context.hydration(store: store))
        if json {
            Output.printJSON(
                .object([
                    (
                        "recent",
                        .array(
                            recent.map { entry in
                                .object(omittingNil: [
                                    ("account", .string(entry.account.rawValue)), ("index", .string(entry.indexName)),
                                    ("uniqueIdentifier", .string(entry.activity.identifier.rawValue)),
                                    ("title", entry.activity.title.map(JSON.string)),
                                    ("activityType", .string(entry.activity.activityType)),
                                    ("lastViewed", .string(ISO8601.string(from: entry.activity.lastViewed))),
                                    ("views", .integer(Int64(entry.activity.views))),
                                    ("engagement", .number((entry.activity.engagement * 1000).rounded() / 1000)),
                                    ("entity", entry.activity.entity?.json),
                                ])
                            })
                    )
                ]))
            return
        }
        if recent.isEmpty { Output.note("nothing recent") }
        for entry in recent {
            Output.print(
                DisplayText.oneLine(
                    entry.activity.identifier.rawValue + (entry.activity.title.map { " — " + $0 } ?? ""))
                    + "\n  account \(entry.account) · \(entry.activity.views) view\(entry.activity.views == 1 ? "" : "s") · last "
                    + ISO8601.string(from: entry.activity.lastViewed)
                    + String(format: " · engagement %.2f", entry.activity.engagement))
        }
    }
}
