import Foundation
import Replica

/// `replica get`: read stored items back whole.
enum GetCommand: Command {
    static let name = "get"
    static let summary = "print stored items whole, by identifier"
    static let about = """
        Prints each item as the account's index holds it, once its owner has confirmed that the account may
        read it (otherwise it is reported as not there): its identifier, domain, index, owner,
        expiration date, the language its words are stemmed for, and every stored attribute by its Core
        Spotlight key, the text content included.
        Without --index, every index of the account is looked in, and an identifier held by several
        indexes is printed once for each. Identifiers that are not there (or have expired) are named
        on standard error, and the exit status is 1.

        """
    static let account = CommonOptions.account.help("the account (required; it must be signed in)").required()
    static let index = Option.repeatable("--index", "NAME", "only this named index")
    static let json = Option.flag(
        "--json",
        "one JSON object: {\"items\": [{\"uniqueIdentifier\", \"domainIdentifier\", \"account\",\n\"index\", \"owner\", \"version\", \"indexed\", \"expirationDate\", \"wordsLanguage\",\n\"attributes\": {…},\n\"updateListenerOptions\": […] when asked for, \"entity\": {\"type\", \"id\"} when one}],\n\"missing\": [identifiers not found]}"
    )
    static let options: [any OptionDeclaration] = [account, index, json]
    static let identifiers = Operand.oneOrMore("IDENTIFIER", missing: "give the identifiers of the items to print")
    static let synopses = [Synopsis("", identifiers)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let account = try requiredAccount(&arguments)
        let indexes = try arguments[Self.index]
        let json = try arguments[Self.json]
        let identifiers = try arguments[operand: Self.identifiers].map(ItemIdentifier.init(rawValue:))
        let store = try context.openStore()
        let found = try await store.fetchItems(
            withIdentifiers: identifiers, account: account,
            indexNames: indexes.isEmpty ? nil : indexes, hydration: try context.hydration(store: store))
        let present = Set(found.map(\.item.uniqueIdentifier))
        var seen = Set<ItemIdentifier>()
        let missing = identifiers.filter { !present.contains($0) && seen.insert($0).inserted }
        if json {
            Output.printJSON(
                .object([
                    ("items", .array(found.map(\.json))),
                    ("missing", .array(missing.map { .string($0.rawValue) })),
                ]))
        } else {
            for stored in found { Output.print(render(stored)) }
        }
        for identifier in missing {
            Output.error(
                "no item '\(identifier.rawValue)' in account '\(account)'"
                    + (indexes.isEmpty ? "" : " (indexes: \(indexes.joined(separator: ", ")))"))
        }
        if !missing.isEmpty { throw CLIError.quiet(status: 1) }
    }

    /// The identifier, then one line per fact and attribute, the text content last.
    static func render(_ stored: StoredItem) -> String {
        let item = stored.item
        var lines = [item.uniqueIdentifier.rawValue]
        var facts = ["account \(stored.account)", "index \(stored.indexName)", "owner \(stored.origin.owner)"]
        if let domain = item.domainIdentifier { facts.append("domain \(domain)") }
        if let expiration = item.expirationDate { facts.append("expires " + ISO8601.string(from: expiration)) }
        facts.append("words stemmed for " + (stored.wordsLanguage ?? "no language"))
        lines.append("  " + facts.joined(separator: " · "))
        for key in item.attributeSet.keys where key != .textContent {
            lines.append("  \(key): " + (item.attributeSet[key].map(QueryCommand.describe) ?? ""))
        }
        if let text = item.attributeSet.textContent {
            lines.append("  textContent: " + text.split(whereSeparator: \.isNewline).joined(separator: " "))
        }
        return lines.map(DisplayText.oneLine).joined(separator: "\n")
    }
}
