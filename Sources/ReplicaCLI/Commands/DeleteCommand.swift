import Foundation
import Replica

/// `replica delete`: remove items by identifier, by domain, or all of an index's.
enum DeleteCommand: Command {
    static let name = "delete"
    static let summary = "delete items by identifier or domain"
    static let about = """
        Deletes items from an account's index: those with the identifiers given with --id, those in the
        domains given with --domain, or, with --all, every item in the index. Identifiers and domains may
        follow one option (--id a b c) or repeat it (--id a --id b).

        """
    static let account = CommonOptions.account.help("the account (required)").required()
    static let index = CommonOptions.index.help("the named index (default: default)")
    static let id = Option.list("--id", "ID", "the items with these identifiers").required().oneOf("items")
    static let domain = Option.list(
        "--domain", "DOMAIN",
        "every item in these domains or under them (account.a also deletes\naccount.a.notes, but not account.ab)"
    ).required().oneOf("items")
    static let all = Option.flag("--all", "every item in the index").required().oneOf("items")
    static let json = Option.flag("--json", "print {\"deleted\": N} on standard output")
    static let options: [any OptionDeclaration] = [account, index, id, domain, all, json]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let account = try requiredAccount(&arguments)
        let indexName = try indexName(&arguments)
        let identifiers = try arguments[Self.id]
        let domains = try arguments[Self.domain]
        let all = try arguments[Self.all]
        let json = try arguments[Self.json]
        try arguments.finish()
        let modes = [!identifiers.isEmpty, !domains.isEmpty, all].filter { $0 }.count
        guard modes == 1 else {
            throw CLIError.usage(
                modes == 0 ? "say what to delete: --id, --domain or --all" : "use one of --id, --domain and --all")
        }
        let store = try context.openStore()
        var deleted = 0
        if all {
            deleted = try await store.existingIndex(named: indexName, account: account)?.deleteAllItems() ?? 0
        } else {
            let targets =
                domains.map { PendingDeletion.Target.domain(DomainIdentifier($0)) }
                + identifiers.map { PendingDeletion.Target.identifier(ItemIdentifier($0)) }
            switch try await store.deleteReliably(targets, account: account, indexName: indexName) {
            case .deleted(let count):
                deleted = count
            case .queued(let reason):
                if json { Output.printJSON(.object([("deleted", 0), ("queued", .number(Double(targets.count)))])) }
                throw CLIError.failure(
                    "the deletion could not be done now (\(reason)); it is queued and will be retried by "
                        + "'replica sync' or 'replica watch' until it succeeds ('replica status' shows it)")
            }
        }
        if json {
            Output.printJSON(.object([("deleted", .number(Double(deleted)))]))
        } else {
            Output.note("deleted \(deleted) item\(deleted == 1 ? "" : "s") from account '\(account)'")
        }
    }
}
