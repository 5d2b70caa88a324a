import Foundation
import Replica

/// `replica suggest`: completions for what is being typed.
enum SuggestCommand: Command {
    static let name = "suggest"
    static let summary = "complete a typed prefix from the indexed words and titles"
    static let about = """
        Completes the last word of PREFIX from the words of the signed-in accounts' items (as they are
        written, most frequent first), then offers titles that have such a word, as Core Spotlight's
        user queries suggest completions. The words before the last are kept in each suggestion.
        Before anything is shown, its item's owner is asked about it, as for replica search.

        """
    static let account = CommonOptions.accounts.help("only this account")
    static let limit = Option.integer("--limit", "N", in: 1...100, "at most N suggestions (default 10, at most 100)")
    static let json = Option.flag("--json", "one JSON object: {\"suggestions\": [...]}")
    static let options: [any OptionDeclaration] = [account, limit, json]
    static let prefix = Operand.oneOrMore("PREFIX", missing: "give the beginning of a word to complete")
    static let synopses = [Synopsis("", prefix)]

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let accounts = try accounts(&arguments)
        let limit = try arguments[Self.limit] ?? 10
        let json = try arguments[Self.json]
        let words = try arguments[operand: Self.prefix]
        let store = try context.openStore()
        let suggestions = try await store.suggestions(
            for: words.joined(separator: " "), accounts: accounts, limit: limit,
            hydration: try context.hydration(store: store))
        if json {
            Output.printJSON(.object([("suggestions", .array(suggestions.map(JSON.string)))]))
        } else {
            for suggestion in suggestions { Output.line(suggestion) }
        }
    }
}
