import Foundation
import Replica

/// `replica search`: full-text search across the signed-in accounts.
enum SearchCommand: Command {
    static let name = "search"
    static let summary = "search the signed-in accounts"
    static let about = """
        Searches every signed-in account (or those named with --account) and prints the best matches
        first. Words are evidence, not a conjunction: an item with any of the meaningful words is found,
        and items with more of the words, rarer words, the words in a title, and the words near each
        other come first; function words such as "the", "which" or "how" never decide a match on their
        own. So a question finds what it asks about. Words are plain text: quotes, parentheses, AND, OR,
        NEAR, NOT and other operator characters are searched for as words. "two words" in double quotes
        is a phrase; a word ending in * matches every word it begins. A word joined by punctuation
        (title:x, a/b, x's) is searched as its words, side by side counting for more; a word with a digit
        (INV-2024-0917) stays whole.

        With the embedding model installed (scripts/setup-model.sh), items are found by meaning too: a
        question can find an item that shares none of its words. Each result says how it matched
        ("matched": "lexical", "semantic" or "both" in --json).

        Each result's score runs from 0 to 1 and means the same in every account and index. By the
        words: 0.65 for the best text match of its index (BM25), 0.20 for having every word, 0.10 for a
        word in the title, keywords or people, 0.05 for the words standing close together; a query of
        function words alone ("the which how") is ranked by them at 0.3 of that, below the best match
        (0.65 at least) of any query with a meaningful word. With
        semantic search: 0.4 × that + 0.6 × the closeness of the item's best passage to the question, as
        a share of the span from the search's least close candidate (0) to its closest (1), a span of 0.2
        at least. An item found by meaning alone is listed only when its closeness is at least 0.20 and,
        with that closeness in place of the share, it scores at least half the best result.

        """
    static let account = CommonOptions.accounts.help("search only this account")
    static let index = Option.repeatable("--index", "NAME", "search only this named index")
    static let limit = Option.integer(
        "--limit", "N", in: 1...SearchQuery.maximumLimit, "at most N results (default 20, at most 10000)")
    static let all = Option.flag("--all", "only items that have every word")
    static let language = Option.repeatable(
        "--language", "TAG",
        "the language you type in (BCP 47: de, pt-BR): your words are stemmed\nfor it; by default, the query's own when clear, else English"
    )
    static let exact = Option.flag(
        "--exact", "the words as typed: no words a typo may have meant (lanch finds launch\nwithout it)")
    static let lexical = Option.flag("--lexical", "by the words alone: no semantic search (by meaning)")
    static let semantic = Option.flag(
        "--semantic", "by meaning alone: the items nearest the question, whatever their words")
    static let anyWord = Option.flag("--any", "items with any of the words, ranked (the default; kept for scripts)")
    static let contentType = Option.repeatable(
        "--type", "UTI", "only items of this content type or under it, e.g. public.text")
    static let domain = Option.repeatable("--domain", "DOMAIN", "only items in this domain or under it")
    static let author = Option.repeatable(
        "--author", "NAME", "only items with an author whose name or handle contains NAME")
    static let recipient = Option.repeatable("--recipient", "NAME", "likewise for recipients")
    static let createdAfter = Option.date(
        "--created-after",
        "only items created at or after DATE: an ISO 8601 date, such as 2026-11-01\nor 2026-11-20T10:00:00Z")
    static let createdBefore = Option.date("--created-before", "only items created before DATE")
    static let modifiedAfter = Option.date("--modified-after", "only items modified at or after DATE")
    static let modifiedBefore = Option.date("--modified-before", "only items modified before DATE")
    static let json = Option.flag("--json", "one JSON object: {\"results\": [...]}, best first")
    static let options: [any OptionDeclaration] = [
        account, index, limit, all, language, exact, lexical, semantic,
        anyWord, contentType, domain, author, recipient, createdAfter, createdBefore, modifiedAfter, modifiedBefore,
        json,
    ]
    static let words = Operand.oneOrMore("WORDS", missing: "give the words to search for")
    static let synopses = [Synopsis("", words)]
    static let notes = """
        Before a match is printed, its owner is asked about it (the record store, its file or git
        source, its plugin): what is gone, no longer readable by the account, or changed since it was
        indexed is left out (and queued for removal), as the search tool would leave it out.

        A query with no word to search (only punctuation, say) fails with exit status 1.
        """

    static func run(_ arguments: inout Arguments, context: Context) async throws {
        var query = SearchQuery()
        query.accounts = try accounts(&arguments)
        let indexes = try arguments[Self.index]
        query.limit = try arguments[Self.limit] ?? 20
        let all = try arguments[Self.all]
        let any = try arguments[Self.anyWord]
        guard !(all && any) else { throw CLIError.usage("--all and --any contradict each other; give one") }
        query.requiresAllWords = all
        query.languages = try arguments[Self.language]
        query.typoTolerance = try !arguments[Self.exact]
        query.disablesSemanticSearch = try arguments[Self.lexical]
        query.disablesLexicalSearch = try arguments[Self.semantic]
        guard !(query.disablesSemanticSearch && query.disablesLexicalSearch) else {
            throw CLIError.usage("--lexical and --semantic leave nothing to search by; give one")
        }
        query.contentTypes = try arguments[Self.contentType].map(ContentType.init(rawValue:))
        query.domains = try arguments[Self.domain].map(DomainIdentifier.init(rawValue:))
        query.authors = try arguments[Self.author]
        query.recipients = try arguments[Self.recipient]
        query.created = try dateRange(&arguments, after: Self.createdAfter, before: Self.createdBefore)
        query.modified = try dateRange(&arguments, after: Self.modifiedAfter, before: Self.modifiedBefore)
        let json = try arguments[Self.json]
        let words = try arguments[operand: Self.words]
        query.text = words.joined(separator: " ")

        let store = try context.openStore()
        // The same check a model's results pass: nothing is printed that its owner would not show now.
        let hydration = try context.hydration(store: store)
        let found = try await store.search(query, indexNames: indexes.isEmpty ? nil : indexes, hydration: hydration)
        let results = found.results
        if !found.dropped.isEmpty {
            Output.note(
                "\(found.dropped.count) match\(found.dropped.count == 1 ? " was" : "es were") left out: gone, no longer readable, "
                    + "changed since indexed, or their owner did not answer")
        }
        if json {
            Output.printJSON(.object([("results", .array(results.map(\.json)))]))
            return
        }
        if results.isEmpty {
            Output.note("no results")
            return
        }
        for result in results {
            Output.print(render(result))
        }
    }

    static func dateRange(_ arguments: inout Arguments, after: OptionKey<Date?>, before: OptionKey<Date?>) throws
        -> DateRange?
    {
        let start = try arguments[after]
        let end = try arguments[before]
        return start == nil && end == nil ? nil : DateRange(start: start, end: end)
    }

    /// Three lines per result: identifier and title; account, type, date and score; the snippet.
    static func render(_ result: SearchResult) -> String {
        let attributes = result.item.attributeSet
        // Each line holds text from outside; its control characters are shown as escapes.
        var lines = [result.item.uniqueIdentifier.rawValue + (result.title.map { " — " + $0 } ?? "")]
        var facts = ["account \(result.account)"]
        if let type = attributes.contentType { facts.append(type.rawValue) }
        if let modified = attributes.contentModificationDate {
            facts.append("modified " + ISO8601.string(from: modified))
        }
        facts.append(String(format: "score %.2f", result.score))
        if result.match != .lexical { facts.append(result.match == .semantic ? "by meaning" : "by words and meaning") }
        lines.append("  " + facts.joined(separator: " · "))
        if let snippet = result.snippet, !snippet.isEmpty {
            lines.append("  " + snippet.split(whereSeparator: \.isNewline).joined(separator: " "))
        }
        return lines.map(DisplayText.oneLine).joined(separator: "\n")
    }
}
