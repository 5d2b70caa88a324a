import Foundation
import Replica

/// `replica query`: the items that satisfy a Core Spotlight query string.
enum QueryCommand: Command {
    static let name = "query"
    static let summary = "list the items that satisfy a Core Spotlight query string"
    static let about = """
        Lists the items of the signed-in accounts whose attributes satisfy QUERY_STRING, newest first
        within each index, as Core Spotlight's CSSearchQuery does. For example:

          replica query 'title == "launch*"cd && contentModificationDate > $time.today(-7)'
          replica query 'authorNames == "ada"cdw || (keywords == "q4" && !(contentType == "public.email-message"))'
          replica query 'InRange(contentCreationDate, $time.iso(2026-01-01), $time.this_month)'

        A comparison is ATTRIBUTE OP VALUE. ATTRIBUTE is a Core Spotlight key (title, textContent,
        authorNames, contentType, contentModificationDate, …), a custom key, or * for any text attribute.
        OP is one of == != < > <= >=; InRange(ATTRIBUTE, LOW, HIGH) includes both ends. Combine them with
        && || ! and parentheses.
          text    "…" in double quotes (\\" for a quote); * matches any run of characters and ? one (\\* and
                  \\? are themselves). After the closing quote: c ignores case, d ignores diacritics, w
                  matches words (also split where a small letter meets a capital), t matches tokens.
                  Text compares with == and != only.
          numbers 42, -1.5; flags true, false
          dates   $time.now(±SECONDS), $time.today(±DAYS), $time.yesterday, $time.tomorrow,
                  $time.this_week(±N), $time.next_week, $time.this_month(±N), $time.next_month,
                  $time.this_year(±N), $time.next_year, $time.iso(2026-11-20T10:00:00Z), or "2026-11-20"
        An item without the attribute matches no comparison on it, != included. A mistake in the string
        is shown with the column where it is (exit status 2).

        """
    static let account = CommonOptions.accounts.help("only this account")
    static let index = Option.repeatable("--index", "NAME", "only this named index")
    static let fetch = Option.string(
        "--fetch", "ATTR,…",
        "print these attributes of each item (default: the title, type and dates;\nwith --json, every attribute but textContent)"
    )
    static let limit = Option.integer(
        "--limit", "N", in: 1...SearchQuery.maximumLimit, "at most N items (default 100, at most 10000)")
    static let json = Option.flag(
        "--json",
        "one JSON object: {\"items\": [{\"account\", \"index\", \"uniqueIdentifier\",\n\"domainIdentifier\", \"owner\", \"attributes\": {…}}], \"found\": N}"
    )
    static let options: [any OptionDeclaration] = [account, index, fetch, limit, json]
    static let queryString = Operand.one(
        "QUERY_STRING", missing: "give a query string, such as 'title == \"draft*\"c'",
        tooMany: "give the query string as one argument: put it in single quotes")
    static let synopses = [Synopsis("", queryString)]
    static let notes = """
        Before an item is printed, its owner is asked about it, as for replica search.
        """

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        let accounts = try accounts(&arguments)
        let indexes = try arguments[Self.index]
        let fetch = try arguments[Self.fetch].map { list in
            list.split(separator: ",").map { AttributeKey(String($0).trimmingCharacters(in: .whitespaces)) }
        }
        let limit = try arguments[Self.limit] ?? 100
        let json = try arguments[Self.json]
        let text = try arguments[operand: Self.queryString]
        var query: SearchQuery
        do {
            query = try SearchQuery(queryString: text, limit: limit)
        } catch let error as ReplicaError {
            guard let syntax = error.cause as? QueryStringSyntaxError else { throw error }
            // The string and a caret under the column of the mistake.
            let shown = DisplayText.oneLine(text)
            throw CLIError(
                status: 2, message: error.message,
                hint: "  " + shown + "\n  " + String(repeating: " ", count: max(0, syntax.column - 1)) + "^")
        }
        query.accounts = accounts
        query.fetchAttributes = fetch

        let store = try context.openStore()
        let hydration = try context.hydration(store: store)
        let found = try await store.search(query, indexNames: indexes.isEmpty ? nil : indexes, hydration: hydration)
        if !found.dropped.isEmpty {
            Output.note(
                "\(found.dropped.count) item\(found.dropped.count == 1 ? " was" : "s were") left out: gone, no longer readable, "
                    + "changed since indexed, or their owner did not answer")
        }
        let results = found.results
        if json {
            Output.printJSON(
                .object([
                    (
                        "items",
                        .array(
                            results.map { result in
                                .object(omittingNil: [
                                    ("account", .string(result.account.rawValue)),
                                    ("index", .string(result.indexName)),
                                    ("uniqueIdentifier", .string(result.item.uniqueIdentifier.rawValue)),
                                    ("domainIdentifier", result.item.domainIdentifier.map { .string($0.rawValue) }),
                                    ("owner", .string(result.origin.owner.rawValue)),
                                    ("attributes", result.item.attributeSet.json()),
                                ])
                            })
                    ),
                    ("found", .integer(Int64(results.count))),
                ]))
            return
        }
        if results.isEmpty {
            Output.note("no items")
            return
        }
        for result in results {
            Output.print(render(result, fetched: fetch))
        }
    }

    /// The identifier and title, then the account, index, type and dates, or the fetched attributes one
    /// a line.
    static func render(_ result: SearchResult, fetched: [AttributeKey]?) -> String {
        let attributes = result.item.attributeSet
        var lines = [result.item.uniqueIdentifier.rawValue + (result.title.map { " — " + $0 } ?? "")]
        var facts = ["account \(result.account)", "index \(result.indexName)"]
        if let type = attributes.contentType { facts.append(type.rawValue) }
        if let modified = attributes.contentModificationDate {
            facts.append("modified " + ISO8601.string(from: modified))
        }
        lines.append("  " + facts.joined(separator: " · "))
        for key in fetched ?? [] {
            lines.append("  \(key): " + (attributes[key].map(describe) ?? "—"))
        }
        return lines.map(DisplayText.oneLine).joined(separator: "\n")
    }

    static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .text(let text): return text.split(whereSeparator: \.isNewline).joined(separator: " ")
        case .texts(let texts): return texts.joined(separator: ", ")
        case .date(let date): return ISO8601.string(from: date)
        case .number(let number): return JSON.format(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .data(let data): return "\(data.count) bytes"
        case .people: return value.strings.joined(separator: ", ")
        }
    }
}
