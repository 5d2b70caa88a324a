package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres
import Synchronization

/// SQL text with its parameters numbered as they are added (`$1`, `$2`, …), never spliced.
struct SQLBuilder {
    var sql: String
    var arguments: [PostgresValue]

    init(_ sql: String = "", _ arguments: [PostgresValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// Adds a parameter and returns its placeholder.
    mutating func bind(_ value: PostgresValue) -> String {
        arguments.append(value)
        return "$\(arguments.count)"
    }

    /// A text array parameter's literal: each element double-quoted, quotes and backslashes escaped.
    static func textArray(_ values: [String]) -> PostgresValue {
        var literal = "{"
        for (number, value) in values.enumerated() {
            literal += number == 0 ? "\"" : ",\""
            if value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") }) {
                for scalar in value.unicodeScalars {
                    if scalar == "\\" || scalar == "\"" { literal.unicodeScalars.append("\\") }
                    literal.unicodeScalars.append(scalar)
                }
            } else {
                literal += value
            }
            literal += "\""
        }
        return .text(literal + "}")
    }

    /// A float8 array parameter's literal: each number as Swift writes it, the shortest text that reads
    /// back as the same number, as PostgreSQL reads it too.
    static func doubleArray(_ values: [Double]) -> PostgresValue {
        .text("{" + values.map { String($0) }.joined(separator: ",") + "}")
    }

    /// A bigint array parameter's literal.
    static func integerArray(_ values: [Int64]) -> PostgresValue {
        .text("{" + values.map(String.init).joined(separator: ",") + "}")
    }
}

/// The reads of one index kept in PostgreSQL, on the snapshot of one read-only transaction whose
/// `replica.account` is the index's account. Every statement also names the account and the index
/// itself (the schema is made for Citus, where each statement goes to the account's shard).
package struct PostgresIndexReader: IndexReader {
    let connection: PostgresConnection
    let account: AccountID
    let indexName: String
    /// The account's own partitions, which every statement on a table reads (see ``AccountPartitions``).
    let table: AccountPartitions
    let vectorCache: VectorCache
    package let now: Date
    /// The places of the searched words in the items this read has ranked, kept for the checks that
    /// follow the ranking (which of the words each best item holds, and how close): the server is asked
    /// again only for items or words not among them.
    let placesSeen = PlacesSeen()
    /// Which words each item the last search through the ranking lists returned has.
    let wordsSeen = WordsSeen()
    /// Whether a ranked search of common words goes through the ranking lists when the index keeps
    /// them (``rankedByLists(_:_:limit:)``); tests turn it off to compare with the full ranking.
    var usesRankingLists = true

    /// The item columns every read decodes an item from, in the order ``decodeItem(_:_:offset:textContent:)`` reads them.
    static let itemColumns = """
        i.identifier, i.domain, i.attributes, i.owner, i.source_version, i.indexed, i.expires, i.content_type, i.title, i.description
        """

    /// An item from the columns of ``itemColumns`` at `offset` of `row`.
    static func decodeItem(_ result: PostgresResult, _ row: Int, offset: Int = 0, textContent: String? = nil) throws
        -> (SearchableItem, ItemOrigin, Date)
    {
        let attributes = try AttributeSet(
            stored:
                result.string(row, offset + 2) ?? "{}", contentType: result.string(row, offset + 7),
            body: textContent, title: result.string(row, offset + 8) ?? "",
            description: result.string(row, offset + 9) ?? "")
        let item = SearchableItem(
            uniqueIdentifier: ItemIdentifier(result.string(row, offset) ?? ""),
            domainIdentifier: result.string(row, offset + 1).map(DomainIdentifier.init(rawValue:)),
            attributeSet: attributes,
            expirationDate: Date(timeIntervalSince1970: result.double(row, offset + 6) ?? 0))
        let origin = ItemOrigin(
            owner: ItemOwner(rawValue: result.string(row, offset + 3) ?? "api"), version: result.string(row, offset + 4)
        )
        return (item, origin, Date(timeIntervalSince1970: result.double(row, offset + 5) ?? 0))
    }

    /// Runs a statement on the account's own partitions of the tables it names (``AccountPartitions``).
    @discardableResult
    func run(_ sql: String, _ arguments: [PostgresValue]) throws -> PostgresResult {
        try table.run(sql, arguments, on: connection)
    }

    /// The start of every statement on the account's `replica.items` as `i`: this account's items of
    /// this index that have not expired.
    func items(_ columns: String, _ builder: inout SQLBuilder) -> String {
        "SELECT \(columns) FROM replica.items AS i WHERE i.account = \(builder.bind(.text(account.rawValue))) "
            + "AND i.index_name = \(builder.bind(.text(indexName))) AND i.expires > \(builder.bind(.double(now.timeIntervalSince1970)))"
    }

    // MARK: Search primitives

    package func matches(_ query: SearchQuery, pattern: FTSPattern?, limit: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])
    {
        let matcher = query.predicate.map { PredicateMatcher($0, now: now, timeZone: query.timeZone) }
        guard let pattern else { return try listing(query, limit: limit, matcher: matcher) }
        guard let terms = SearchTerms(pattern) else { return ([], [], []) }

        // The server ranks and sends the best few when it can rank the query exactly; else every match's
        // places come here to be scored. Either way the best are read whole and checked against the
        // predicate until enough pass.
        let ranking: Ranking
        if matcher == nil, let listed = try matchesThroughRankingLists(query, terms: terms, limit: limit) {
            return listed
        }
        if matcher == nil, terms.terms.allSatisfy({ $0.tokens.count == 1 }) {
            guard let (counted, best) = try rankedInServer(terms, query, limit: limit) else { return ([], [], []) }
            if let best {
                let found = try read(best, counted.terms, language: terms.language, matcher: matcher, limit: limit)
                if found.found.count == limit || best.scored.count < best.asked { return found }
            }
            ranking = counted
        } else {
            guard let counted = try self.ranking(terms) else { return ([], [], []) }
            ranking = counted
        }
        return try read(
            rankedHere(ranking, query), ranking.terms, language: terms.language, matcher: matcher, limit: limit)
    }

    /// A search's terms with a token each, each one's `tsquery`, and the `tsquery` that finds the matches.
    struct SearchTerms {
        let terms: [PostgresIndexText.TermTokens]
        let queries: [String]
        /// What each term's idf is multiplied by (``FTSPattern/phraseWeights``).
        let weights: [Double]
        /// For each of ``queries``, the typed word it is a form of (the pattern's term): where every word
        /// is required, a row needs one form of each.
        let words: [Int]
        let tsquery: String
        let requiresAll: Bool
        /// The language the query's words were stemmed for (``FTSPattern/language``).
        let language: String?
        /// Whether every term of several tokens is a word the analyzer splits (a pair of Chinese characters
        /// that is no word of ICU's dictionary, say), not a phrase typed in quotes or a word joined by
        /// punctuation kept whole (`v1.2`). Such a word's tokens are never stems, so no two of them share
        /// a place in an item, and `ts_rank_cd` counts each of its instances at its column's weight, as
        /// FTS5 does (``rankedByLists(_:_:limit:)``); a stem beside its word would make it count less.
        let severalTokensAreSplitWords: Bool

        /// `nil` when nothing can match: no term has a token (punctuation alone matches nothing in FTS5),
        /// or, when every word is required, one has no form with a token.
        init?(_ pattern: FTSPattern) {
            let searched = pattern.requiresAll ? pattern.terms : pattern.meaningfulTerms
            let all = searched.enumerated().flatMap { word, term in
                term.alternatives.map { alternative in
                    let isWord = if case .word = alternative { true } else { false }
                    return (word: word, phrase: PostgresIndexText.tokens(of: alternative), isWord: isWord)
                }
            }
            let kept = zip(all, pattern.phraseWeights).filter { $0.0.phrase.query != nil }
            let words = kept.map(\.0.word)
            guard !kept.isEmpty, !(pattern.requiresAll && Set(words).count < searched.count) else { return nil }
            terms = kept.map(\.0.phrase)
            weights = kept.map(\.1)
            queries = terms.compactMap(\.query)
            self.words = words
            requiresAll = pattern.requiresAll
            language = pattern.language
            severalTokensAreSplitWords = all.allSatisfy { $0.isWord || $0.phrase.tokens.count <= 1 }
            tsquery =
                pattern.requiresAll
                ? Dictionary(grouping: zip(words, queries), by: \.0).sorted { $0.key < $1.key }
                    .map { "(" + $0.value.map { "(\($0.1))" }.joined(separator: " | ") + ")" }.joined(separator: " & ")
                : queries.map { "(\($0))" }.joined(separator: " | ")
        }
    }

    /// What ranking the matches of `terms` needs, or `nil` when the index is empty.
    func ranking(_ terms: SearchTerms) throws -> Ranking? {
        // BM25's numbers for this index: rows and words in all (expired rows count, as in FTS5's table),
        // and how many rows hold each term.
        let statistics = try run(
            """
            SELECT items, words FROM replica.index_statistics WHERE account = $1 AND index_name = $2
            """, [.text(account.rawValue), .text(indexName)])
        let rows = Int(statistics.rowCount > 0 ? statistics.int(0, 0) ?? 0 : 0)
        let words = Int(statistics.rowCount > 0 ? statistics.int(0, 1) ?? 0 : 0)
        guard rows > 0 else { return nil }
        let hitCounts =
            try connection.execute(
                "SELECT replica.items_matching_counts($1, $2::tsquery[])",
                [.text(indexName), SQLBuilder.textArray(terms.queries)]
            ).string(0, 0) ?? "{}"
        return Ranking(terms, hits: Self.integers(inArray: hitCounts), rows: rows, words: words)
    }

    /// The integers of a PostgreSQL array's text form (`{1,2}`).
    static func integers(inArray text: String) -> [Int] {
        text.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",").compactMap { Int($0) }
    }

    /// What ranking a search's matches needs: its terms, BM25's inverse document frequencies and average
    /// length, and the `tsquery` that finds the matches.
    struct Ranking {
        let terms: [PostgresIndexText.TermTokens]
        let idfs: [Double]
        let averageLength: Double
        let tsquery: String

        /// From the index's rows and words and how many rows hold each term.
        init(_ search: SearchTerms, hits: [Int], rows: Int, words: Int) {
            terms = search.terms
            tsquery = search.tsquery
            idfs = zip(hits, search.weights).map { BM25.idf(hits: $0, rows: rows) * $1 }
            averageLength = max(Double(words) / Double(rows), 1e-9)
        }

        /// An item's BM25 score from its places of the terms, as FTS5 computes it.
        func score(_ words: ItemWords, length: Int) -> Double {
            BM25.score(
                frequencies: terms.map(words.weightedFrequency), idfs: idfs, length: length,
                averageLength: averageLength)
        }
    }

    /// Matches in rank order, with the places of the searched words of each: all of them, or the best
    /// `asked` when the server ranked them.
    /// `rows`: the best already read whole (``textColumns`` after the item's), when they were.
    typealias Ranked = (scored: [(id: Int64, score: Double)], words: [Int64: ItemWords], asked: Int, rows: ItemRows?)

    /// Items' rows as ``itemRows(_:extra:)`` reads them: the result and each id's row in it.
    typealias ItemRows = (result: PostgresResult, rows: [Int64: Int])

    /// The text columns a found item's snippet is made from, read after the item's own.
    static let textColumns = "i.title, i.keywords, i.people, i.description, i.body"

    /// Every matching item's places of the searched words, scored here.
    func rankedHere(_ ranking: Ranking, _ query: SearchQuery) throws -> Ranked {
        var builder = SQLBuilder()
        var sql =
            Self.placesColumns + "FROM replica.items_matching("
            + builder.bind(.text(indexName)) + ", " + builder.bind(.text(ranking.tsquery))
            + "::tsquery) AS i, unnest(i.words) AS u "
            + "WHERE i.account = " + builder.bind(.text(account.rawValue)) + " AND i.expires > "
            + builder.bind(.double(now.timeIntervalSince1970))
        appendFilters(for: query, to: &sql, builder: &builder)
        sql += " AND " + Self.lexemeCondition(ranking.terms, &builder)
        let (itemWords, lengths) = try places(sql, builder.arguments)
        let scored = itemWords.map { id, words in (id: id, score: ranking.score(words, length: lengths[id] ?? 0)) }
            .sorted { ($0.score, -$0.id) > ($1.score, -$1.id) }
        placesSeen.keep(itemWords, of: ranking.terms)
        return (scored, itemWords, Int.max, nil)
    }

    /// The best matches ranked by the server in one statement (`replica.ranked_matches`: the terms'
    /// document frequencies, BM25 and all), then read whole with the places of the searched words in a
    /// second. `nil` when nothing passes; the ranking without `best` when the server's scores cannot be used.
    ///
    /// A term's weighted frequency in an item (each instance counts its column's weight) is what
    /// `ts_rank_cd` gives for that term alone, without normalisation, with the weights 0.1, 0.2, 0.5 and 1
    /// for D to A (the columns' 1, 2, 5 and 10, scaled under `ts_rank_cd`'s limit of 1): each instance of
    /// one lexeme is a cover of its own, counting its weight. That holds for a word and a prefix, not for
    /// a phrase, so a search with a phrase, or with a predicate that may pass few of the best, is ranked
    /// here. The server's scores are computed with the same operations in the same order as
    /// ``BM25/score(frequencies:idfs:length:averageLength:)``, and checked: the best are scored here
    /// from their places too, and a single difference sends the search to ``rankedHere(_:_:)``.
    func rankedInServer(_ terms: SearchTerms, _ query: SearchQuery, limit: Int) throws -> (Ranking, best: Ranked?)? {
        let asked = limit + 8
        func values(_ list: [String]) -> PostgresValue { list.isEmpty ? .null : SQLBuilder.textArray(list) }
        func time(_ date: Date?) -> PostgresValue { date.map { .double($0.timeIntervalSince1970) } ?? .null }
        let best = try connection.execute(
            """
            SELECT id, length, score, hits, items, words FROM replica.ranked_matches($1, $2::tsquery[], $3, $4, $5,
                $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20::float8[], $21::integer[])
            """,
            [
                .text(indexName), SQLBuilder.textArray(terms.queries), .bool(terms.requiresAll),
                .double(now.timeIntervalSince1970),
                .int(Int64(asked)), .double(BM25.k1), .double(BM25.k1 + 1), .double(1 - BM25.b), .double(BM25.b),
                values(query.domains.map(\.rawValue)), values(Self.contentTrees(of: query)),
                values(query.owners.map(\.rawValue)),
                values(query.excludedOwners.map(\.rawValue)), values(query.authors.map { $0.lowercased() }),
                values(query.recipients.map { $0.lowercased() }), time(query.created?.start), time(query.created?.end),
                time(query.modified?.start), time(query.modified?.end), SQLBuilder.doubleArray(terms.weights),
                SQLBuilder.integerArray(terms.words.map(Int64.init)),
            ])
        guard best.rowCount > 0 else { return nil }
        let ranking = Ranking(
            terms, hits: Self.integers(inArray: best.string(0, 3) ?? "{}"), rows: Int(best.int(0, 4) ?? 0),
            words: Int(best.int(0, 5) ?? 0))
        var scored: [(id: Int64, score: Double)] = []
        var lengths: [Int64: Int] = [:]
        for row in 0..<best.rowCount {
            guard let id = best.int(row, 0), let score = best.double(row, 2) else { return (ranking, nil) }
            scored.append((id, score))
            lengths[id] = Int(best.int(row, 1) ?? 0)
        }
        let (rows, itemWords) = try bestRows(scored.map(\.id), terms: ranking.terms)
        for candidate in scored
        where ranking.score(itemWords[candidate.id] ?? ItemWords(), length: lengths[candidate.id] ?? 0)
            != candidate.score
        {
            return (ranking, nil)
        }
        placesSeen.keep(itemWords, of: ranking.terms)
        return (ranking, (scored, itemWords, asked, rows))
    }

    /// The best items of a ranking read whole, each with the places of the searched words, in one statement.
    func bestRows(_ ids: [Int64], terms: [PostgresIndexText.TermTokens]) throws -> (
        rows: ItemRows, words: [Int64: ItemWords]
    ) {
        var builder = SQLBuilder()
        let sql =
            "SELECT " + Self.itemColumns + ", i.id, " + Self.textColumns + ", p.lexemes, p.positions, p.weights "
            + "FROM replica.items AS i CROSS JOIN LATERAL (SELECT string_agg(u.lexeme, E'\\x1f') AS lexemes, "
            + "string_agg(array_to_string(u.positions, ','), E'\\x1f') AS positions, string_agg(array_to_string(u.weights, ','), E'\\x1f') AS weights "
            + "FROM unnest(i.words) AS u WHERE " + Self.lexemeCondition(terms, &builder) + ") AS p "
            + "WHERE i.account = " + builder.bind(.text(account.rawValue)) + " AND i.index_name = "
            + builder.bind(.text(indexName))
            + " AND i.id = ANY(" + builder.bind(SQLBuilder.integerArray(ids)) + "::bigint[])"
        let result = try run(sql, builder.arguments)
        var rows: [Int64: Int] = [:]
        var itemWords: [Int64: ItemWords] = [:]
        for row in 0..<result.rowCount {
            guard let id = result.int(row, 10) else { continue }
            rows[id] = row
            itemWords[id] = Self.aggregatedWords(result, row, from: 16)
        }
        return ((result, rows), itemWords)
    }

    /// An item's places as the statement of ``rankedInServer(_:_:limit:)`` aggregates them: its lexemes,
    /// their positions and their weights in three columns from `column`, one entry per lexeme. Lexemes
    /// hold no control character (the tokenizer splits at them), so U+001F separates the entries.
    static func aggregatedWords(_ result: PostgresResult, _ row: Int, from column: Int) -> ItemWords {
        var words = ItemWords()
        guard let lexemes = result.string(row, column) else { return words }
        let separator: Character = "\u{1F}"
        let positions = (result.string(row, column + 1) ?? "").split(
            separator: separator, omittingEmptySubsequences: false)
        let weights = (result.string(row, column + 2) ?? "").split(
            separator: separator, omittingEmptySubsequences: false)
        for (lexeme, (places, letters)) in zip(
            lexemes.split(separator: separator, omittingEmptySubsequences: false), zip(positions, weights))
        {
            words.add(lexeme: String(lexeme), positions: String(places), weights: String(letters))
        }
        return words
    }

    /// What a places statement selects, for ``places(_:_:)``.
    static let placesColumns = "SELECT i.id, i.length, u.lexeme, u.positions, u.weights "

    /// Reads a places statement's rows (``placesColumns``) by item.
    private func places(_ sql: String, _ arguments: [PostgresValue]) throws -> (
        words: [Int64: ItemWords], lengths: [Int64: Int]
    ) {
        let places = try run(sql, arguments)
        var itemWords: [Int64: ItemWords] = [:]
        var lengths: [Int64: Int] = [:]
        for row in 0..<places.rowCount {
            guard let id = places.int(row, 0) else { continue }
            lengths[id] = Int(places.int(row, 1) ?? 0)
            itemWords[id, default: ItemWords()].add(
                lexeme: places.string(row, 2) ?? "", positions: places.string(row, 3) ?? "{}",
                weights: places.string(row, 4) ?? "{}")
        }
        return (itemWords, lengths)
    }

    /// The best of `ranked`, read whole and checked against the predicate, until `limit` pass.
    func read(
        _ ranked: Ranked, _ terms: [PostgresIndexText.TermTokens], language: String?, matcher: PredicateMatcher?,
        limit: Int
    ) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])
    {
        let scored = ranked.scored
        var found: [(item: FoundItem, rowID: Int64)] = []
        var inHeading = Set<Int64>()
        var unreadable: [ItemIdentifier] = []
        var next = 0
        while found.count < limit && next < scored.count {
            let chunk = Array(scored[next..<min(scored.count, next + max(limit - found.count, 32))])
            next += chunk.count
            let read =
                if let prefetched = ranked.rows, chunk.allSatisfy({ prefetched.rows[$0.id] != nil }) {
                    prefetched
                } else {
                    try itemRows(chunk.map(\.id), extra: Self.textColumns)
                }
            for candidate in chunk {
                guard let row = read.rows[candidate.id] else { continue }
                let result = read.result
                do {
                    let body = result.string(row, 15) ?? ""
                    let (item, origin, indexed) = try Self.decodeItem(
                        result, row, textContent: matcher?.readsTextContent == true ? body : nil)
                    if let matcher, !matcher.matches(item.attributeSet) { continue }
                    // The snippet is made for the items the search returns only (a pass of the tokenizer
                    // over the text each: about 2 of a two-word search's 16 ms for all 60 candidates). The
                    // candidates' text, which this statement read whole anyway, is kept until then.
                    let columns = (11...15).map { result.string(row, $0) ?? "" }
                    var shown = item
                    if matcher?.readsTextContent == true { shown.attributeSet.textContent = nil }
                    var foundItem = FoundItem(
                        item: shown, score: candidate.score, snippet: nil, origin: origin, indexedAt: indexed)
                    foundItem.pendingSnippet = .made {
                        Snippet.make(columns: columns, terms: terms, language: language)
                    }
                    found.append((foundItem, candidate.id))
                    if ranked.words[candidate.id]?.isInHeading(terms) == true { inHeading.insert(candidate.id) }
                } catch {
                    unreadable.append(ItemIdentifier(result.string(row, 0) ?? ""))
                }
                if found.count == limit { break }
            }
        }
        return (found, inHeading, unreadable)
    }

    /// Items without typed text: the most recently changed first.
    private func listing(_ query: SearchQuery, limit: Int, matcher: PredicateMatcher?) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])
    {
        var builder = SQLBuilder()
        var sql = items(Self.itemColumns + ", i.id" + (matcher?.readsTextContent == true ? ", i.body" : ""), &builder)
        appendFilters(for: query, to: &sql, builder: &builder)
        sql += " ORDER BY coalesce(i.modified, i.created, i.indexed) DESC, i.id"
        if matcher == nil { sql += " LIMIT " + builder.bind(.int(Int64(limit))) }
        let result = try run(sql, builder.arguments)
        var found: [(item: FoundItem, rowID: Int64)] = []
        var unreadable: [ItemIdentifier] = []
        for row in 0..<result.rowCount where found.count < limit {
            do {
                let (item, origin, indexed) = try Self.decodeItem(
                    result, row, textContent: matcher?.readsTextContent == true ? result.string(row, 11) : nil)
                if let matcher, !matcher.matches(item.attributeSet) { continue }
                var shown = item
                if matcher?.readsTextContent == true { shown.attributeSet.textContent = nil }
                found.append(
                    (
                        FoundItem(item: shown, score: 0, snippet: nil, origin: origin, indexedAt: indexed),
                        result.int(row, 10) ?? 0
                    ))
            } catch {
                unreadable.append(ItemIdentifier(result.string(row, 0) ?? ""))
            }
        }
        return (found, [], unreadable)
    }

    /// The condition on `u.lexeme` that keeps the lexemes the terms' tokens match.
    static func lexemeCondition(_ terms: [PostgresIndexText.TermTokens], _ builder: inout SQLBuilder) -> String {
        let (exact, prefixes) = tokens(of: terms)
        let patterns = prefixes.sorted().map {
            $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_") + "%"
        }
        return "(u.lexeme = ANY(\(builder.bind(SQLBuilder.textArray(exact.sorted())))::text[]) "
            + "OR u.lexeme LIKE ANY(\(builder.bind(SQLBuilder.textArray(patterns)))::text[]))"
    }

    /// The tokens `terms` look for: those matched whole, and the last tokens of prefix terms.
    static func tokens(of terms: [PostgresIndexText.TermTokens]) -> (exact: Set<String>, prefixes: Set<String>) {
        var exact = Set<String>()
        var prefixes = Set<String>()
        for term in terms {
            for (index, token) in term.tokens.enumerated() {
                if term.prefix && index == term.tokens.count - 1 { prefixes.insert(token) } else { exact.insert(token) }
            }
        }
        return (exact, prefixes)
    }

    /// These items' rows (not expired), with the item columns first and `extra` after them, by id.
    func itemRows(_ ids: [Int64], extra: String) throws -> (result: PostgresResult, rows: [Int64: Int]) {
        try itemRows(ids) { _ in extra }
    }

    /// ``itemRows(_:extra:)`` with columns that take parameters, bound through the builder.
    func itemRows(_ ids: [Int64], extra: (inout SQLBuilder) -> String) throws -> (
        result: PostgresResult, rows: [Int64: Int]
    ) {
        var builder = SQLBuilder()
        let columns = extra(&builder)
        let sql =
            items(Self.itemColumns + ", i.id, " + columns, &builder)
            + " AND i.id = ANY(\(builder.bind(SQLBuilder.integerArray(ids)))::bigint[])"
        let result = try run(sql, builder.arguments)
        var rows: [Int64: Int] = [:]
        for row in 0..<result.rowCount { if let id = result.int(row, 10) { rows[id] = row } }
        return (result, rows)
    }

    package func rows(matching match: TermMatch, among rowIDs: [Int64]) throws -> Set<Int64> {
        guard !rowIDs.isEmpty else { return [] }
        var terms: [PostgresIndexText.TermTokens] = []
        var tokens: [FTSPattern.Term: [PostgresIndexText.TermTokens]] = [:]
        func add(_ term: FTSPattern.Term) {
            let made = tokens[term] ?? PostgresIndexText.phrases(of: term)
            tokens[term] = made
            terms += made
        }
        func collect(_ match: TermMatch) {
            switch match {
            case .term(let term): add(term)
            case .all(let matches), .any(let matches): matches.forEach(collect)
            case .near(let groups, _): groups.flatMap(\.phrases).forEach(add)
            }
        }
        collect(match)
        if let known = placesSeen.words(of: rowIDs, for: terms) {
            return Set(known.filter { $0.value.holds(match, tokens: tokens) }.keys)
        }
        var builder = SQLBuilder()
        let sql =
            "SELECT i.id, u.lexeme, u.positions, u.weights FROM replica.items AS i, unnest(i.words) AS u WHERE i.account = "
            + builder.bind(.text(account.rawValue)) + " AND i.index_name = " + builder.bind(.text(indexName))
            + " AND i.id = ANY(" + builder.bind(SQLBuilder.integerArray(rowIDs)) + "::bigint[]) AND "
            + Self.lexemeCondition(terms, &builder)
        let result = try run(sql, builder.arguments)
        var words: [Int64: ItemWords] = [:]
        for row in 0..<result.rowCount {
            guard let id = result.int(row, 0) else { continue }
            words[id, default: ItemWords()].add(
                lexeme: result.string(row, 1) ?? "", positions: result.string(row, 2) ?? "{}",
                weights: result.string(row, 3) ?? "{}")
        }
        return Set(words.filter { $0.value.holds(match, tokens: tokens) }.keys)
    }

    package func rowIDs(passing query: SearchQuery) throws -> Set<Int64>? {
        var builder = SQLBuilder()
        var sql = items("i.id", &builder)
        let unfiltered = sql
        appendFilters(for: query, to: &sql, builder: &builder)
        guard let predicate = query.predicate else {
            guard sql != unfiltered else { return nil }
            let result = try run(sql, builder.arguments)
            return Set((0..<result.rowCount).compactMap { result.int($0, 0) })
        }
        let matcher = PredicateMatcher(predicate, now: now, timeZone: query.timeZone)
        sql = sql.replacingOccurrences(
            of: "SELECT i.id FROM",
            with: "SELECT \(Self.itemColumns), i.id\(matcher.readsTextContent ? ", i.body" : "") FROM")
        let result = try run(sql, builder.arguments)
        var passing = Set<Int64>()
        for row in 0..<result.rowCount {
            if let (item, _, _) = try? Self.decodeItem(
                result, row, textContent: matcher.readsTextContent ? result.string(row, 11) : nil),
                matcher.matches(item.attributeSet), let id = result.int(row, 10)
            {
                passing.insert(id)
            }
        }
        return passing
    }

    /// What a content type filter looks for in `replica.content_types.tree`: each type asked for as a
    /// space-delimited word; none when the query asks for no type, or for every item.
    static func contentTrees(of query: SearchQuery) -> [String] {
        query.contentTypes.isEmpty || query.contentTypes.contains(.item)
            ? [] : query.contentTypes.map { " \($0.rawValue) " }
    }

    /// Adds the query's filters as `AND …` clauses on the account's `replica.items AS i`, as the SQLite
    /// reader does (`replica.ranked_matches` applies the same filters, given as values).
    /// (The predicate's necessary condition, which only spares the SQLite reader work, is not added: the
    /// predicate itself decides, row by row.)
    func appendFilters(for query: SearchQuery, to sql: inout String, builder: inout SQLBuilder) {
        func anyOf(_ values: [String], _ clause: (inout SQLBuilder, String) -> String) {
            guard !values.isEmpty else { return }
            sql += " AND (" + values.map { clause(&builder, $0) }.joined(separator: " OR ") + ")"
        }
        let wanted = Self.contentTrees(of: query)
        if !wanted.isEmpty {
            let trees = wanted.map { "strpos(tree, \(builder.bind(.text($0)))) > 0" }.joined(separator: " OR ")
            sql +=
                " AND i.content_type IN (SELECT name FROM replica.content_types WHERE account = \(builder.bind(.text(account.rawValue))) "
                + "AND index_name = \(builder.bind(.text(indexName))) AND (\(trees)))"
        }
        // The range of a domain's subdomains compares bytes, as SQLite does, whatever the database's collation.
        anyOf(query.domains.map(\.rawValue)) { builder, domain in
            "(i.domain = \(builder.bind(.text(domain))) OR (i.domain COLLATE \"C\" >= \(builder.bind(.text(domain + "."))) "
                + "AND i.domain COLLATE \"C\" < \(builder.bind(.text(domain + "/")))))"
        }
        anyOf(query.authors) { builder, author in "strpos(i.authors, \(builder.bind(.text(author.lowercased())))) > 0" }
        anyOf(query.recipients) { builder, recipient in
            "strpos(i.recipients, \(builder.bind(.text(recipient.lowercased())))) > 0"
        }
        anyOf(query.owners.map(\.rawValue)) { builder, owner in "i.owner = \(builder.bind(.text(owner)))" }
        if !query.excludedOwners.isEmpty {
            sql +=
                " AND i.owner NOT IN ("
                + query.excludedOwners.map { builder.bind(.text($0.rawValue)) }.joined(separator: ", ") + ")"
        }
        for (column, range) in [("created", query.created), ("modified", query.modified)] {
            guard let range else { continue }
            if let start = range.start {
                sql += " AND i.\(column) >= \(builder.bind(.double(start.timeIntervalSince1970)))"
            }
            if let end = range.end { sql += " AND i.\(column) < \(builder.bind(.double(end.timeIntervalSince1970)))" }
        }
    }

    // MARK: Vectors

    /// The index's vectors of `model`, from the cache while the index's `vectors_version` says they are current.
    func matrix(model: String) throws -> VectorMatrix {
        let version = try meta("vectors_version") ?? "0"
        return try vectorCache.matrix(version: version, model: model) {
            var matrix = VectorMatrix(version: version, model: model)
            let result = try run(
                """
                SELECT v.item, v.vector FROM replica.vectors AS v
                JOIN replica.embedded AS e ON e.account = v.account AND e.index_name = v.index_name AND e.item = v.item AND e.model = $3
                WHERE v.account = $1 AND v.index_name = $2 ORDER BY v.item, v.passage
                """, [.text(account.rawValue), .text(indexName), .text(model)])
            for row in 0..<result.rowCount {
                guard let item = result.int(row, 0), let bytes = result.bytes(row, 1) else { continue }
                bytes.withUnsafeBytes { matrix.append(item: item, stored: $0) }
            }
            return matrix
        }
    }

    package func nearest(
        to query: [Float], model: String, filters: SearchQuery, limit: Int, floor: MeaningFloor
    ) throws -> [(rowID: Int64, cosine: Double)] {
        guard limit > 0 else { return [] }
        let matrix = try matrix(model: model)
        let allowed = try rowIDs(passing: filters)
        let expired: Set<Int64>
        if allowed == nil {
            let result = try run(
                """
                SELECT id FROM replica.items WHERE account = $1 AND index_name = $2 AND expires <= $3 AND expires < 32503680000
                """, [.text(account.rawValue), .text(indexName), .double(now.timeIntervalSince1970)])
            expired = Set((0..<result.rowCount).compactMap { result.int($0, 0) })
        } else {
            expired = []
        }
        return matrix.nearest(to: query, limit: limit, floor: floor) { item in
            if let allowed { allowed.contains(item) } else { !expired.contains(item) }
        }
    }

    package func cosines(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Double] {
        try matrix(model: model).bestCosines(of: rowIDs, to: query)
    }

    package func bestPassages(of rowIDs: [Int64], to query: [Float], model: String) throws -> [Int64: Int] {
        try matrix(model: model).bestPassages(of: rowIDs, to: query)
    }

    package func foundItems(_ rowIDs: [Int64]) throws -> [(item: FoundItem, rowID: Int64)] {
        guard !rowIDs.isEmpty else { return [] }
        let read = try itemRows(rowIDs, extra: "substr(i.body, 1, 240)")
        return rowIDs.compactMap { id in
            guard let row = read.rows[id], let (item, origin, indexed) = try? Self.decodeItem(read.result, row) else {
                return nil
            }
            // The start of the body, its whitespace runs squeezed: no word matched to show around.
            let excerpt = read.result.string(row, 11).map { text in
                text.split(whereSeparator: \.isWhitespace).joined(separator: " ") + (text.count >= 240 ? "…" : "")
            }
            return (FoundItem(item: item, score: 0, snippet: excerpt, origin: origin, indexedAt: indexed), id)
        }
    }

    package func textContents(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: String] {
        guard !identifiers.isEmpty else { return [:] }
        let result = try run(
            """
            SELECT identifier, body FROM replica.items WHERE account = $1 AND index_name = $2 AND identifier = ANY($3::text[])
            """, [.text(account.rawValue), .text(indexName), SQLBuilder.textArray(identifiers.map(\.rawValue))])
        var texts: [ItemIdentifier: String] = [:]
        for row in 0..<result.rowCount {
            if let identifier = result.string(row, 0), let body = result.string(row, 1) {
                texts[ItemIdentifier(identifier)] = body
            }
        }
        return texts
    }

    package func engagement(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: Double] {
        guard !identifiers.isEmpty else { return [:] }
        let result = try run(
            """
            SELECT related, max(date), sum(views) FROM replica.activities
            WHERE account = $1 AND index_name = $2 AND search AND related = ANY($3::text[]) GROUP BY related
            """, [.text(account.rawValue), .text(indexName), SQLBuilder.textArray(identifiers.map(\.rawValue))])
        var engagement: [ItemIdentifier: Double] = [:]
        for row in 0..<result.rowCount {
            guard let related = result.string(row, 0), let date = result.double(row, 1) else { continue }
            engagement[ItemIdentifier(related)] = Engagement.value(
                lastViewed: Date(timeIntervalSince1970: date),
                views: Int(result.int(row, 2) ?? 0), now: now)
        }
        return engagement
    }

    // MARK: Items

    package func items(withIdentifiers identifiers: [ItemIdentifier]) throws -> [(SearchableItem, ItemOrigin, Date)] {
        guard !identifiers.isEmpty else { return [] }
        var builder = SQLBuilder()
        let sql =
            items(Self.itemColumns + ", i.body", &builder)
            + " AND i.identifier = ANY(\(builder.bind(SQLBuilder.textArray(identifiers.map(\.rawValue))))::text[])"
        let result = try run(sql, builder.arguments)
        var byIdentifier: [String: Int] = [:]
        for row in 0..<result.rowCount { if let identifier = result.string(row, 0) { byIdentifier[identifier] = row } }
        return try identifiers.compactMap { identifier in
            guard let row = byIdentifier[identifier.rawValue] else { return nil }
            return try Self.decodeItem(result, row, textContent: result.string(row, 10))
        }
    }

    package func allItems() throws -> [(SearchableItem, ItemOrigin, Date)] {
        var builder = SQLBuilder()
        let result = try run(
            items(Self.itemColumns + ", i.body", &builder) + " ORDER BY i.identifier COLLATE \"C\"", builder.arguments)
        return try (0..<result.rowCount).map { try Self.decodeItem(result, $0, textContent: result.string($0, 10)) }
    }

    package func count() throws -> Int {
        var builder = SQLBuilder()
        return Int(try run(items("count(*)", &builder), builder.arguments).int(0, 0) ?? 0)
    }

    package func clientState() throws -> Data? {
        let result = try run(
            "SELECT state FROM replica.client_state WHERE account = $1 AND index_name = $2",
            [.text(account.rawValue), .text(indexName)])
        return result.rowCount > 0 ? result.bytes(0, 0).map { Data($0) } : nil
    }

    package func meta(_ key: String) throws -> String? {
        let result = try run(
            "SELECT value FROM replica.meta WHERE account = $1 AND index_name = $2 AND key = $3",
            [.text(account.rawValue), .text(indexName), .text(key)])
        return result.rowCount > 0 ? result.string(0, 0) : nil
    }

    package func vocabularyDocuments(ofAny words: [String]) throws -> Int64 {
        // A word at a time, each the whole primary key: before the partition is analyzed, the planner
        // took `word = ANY(…)` for a filter over every token of the index (17 ms at 100,000 items).
        var most: Int64 = 0
        for word in words {
            let result = try run(
                """
                SELECT documents FROM replica.vocabulary WHERE account = $1 AND index_name = $2 AND word = $3
                """, [.text(account.rawValue), .text(indexName), .text(word)])
            if result.rowCount > 0 { most = max(most, result.int(0, 0) ?? 0) }
        }
        return most
    }

    package func vocabulary(beginningWith first: String, lengths: ClosedRange<Int>, heldByMoreThan documents: Int64)
        throws
        -> [(word: String, documents: Int64)]
    {
        // The tokens that begin with `first` by the primary key's range (`word` compares bytes, COLLATE "C").
        let end =
            first.unicodeScalars.first.map { scalar -> String in
                var value = scalar.value + 1
                if (0xD800...0xDFFF).contains(value) { value = 0xE000 }
                return Unicode.Scalar(value).map { String(Character($0)) } ?? "\u{10FFFF}"
            } ?? ""
        let result = try run(
            """
            SELECT word, documents FROM replica.vocabulary WHERE account = $1 AND index_name = $2 AND word >= $3 AND word < $4
                AND char_length(word) = ANY($5::integer[]) AND documents > $6
            ORDER BY word
            """,
            [
                .text(account.rawValue), .text(indexName), .text(first), .text(end),
                SQLBuilder.integerArray(lengths.map(Int64.init)),
                .int(documents),
            ])
        return (0..<result.rowCount).map { (result.string($0, 0) ?? "", result.int($0, 1) ?? 0) }
    }

    /// The items that have a word beginning with `prefix`, from their titles, keywords, people,
    /// descriptions and first 2,000 characters of text, as the SQLite reader reads its last-added items.
    package func completionSources(of prefix: String, sample: Int) throws -> [CompletionSource] {
        let cleaned = String(
            String.UnicodeScalarView(prefix.unicodeScalars.filter { $0 != "\"" && !DisplayText.isUnsafe($0) }))
        guard FTSPattern.isSearchable(Substring(cleaned)), !cleaned.contains(where: \.isWhitespace) else { return [] }
        let lowered = cleaned.lowercased()
        if let common = try completionsAmongLastAdded(of: lowered, sample: sample) { return common }
        let term = PostgresIndexText.tokens(of: .word(cleaned, prefix: true))
        guard let tsquery = term.query else { return [] }
        let result = try connection.execute(
            """
            SELECT \(Self.itemColumns), i.title, i.keywords, i.people, i.description, substr(i.body, 1, 2000)
            FROM replica.items_matching($1, $2::tsquery) AS i WHERE i.account = $3 AND i.expires > $4 ORDER BY i.id LIMIT $5
            """,
            [
                .text(indexName), .text(tsquery), .text(account.rawValue), .double(now.timeIntervalSince1970),
                .int(Int64(sample)),
            ])
        return Self.completionSources(in: result, beginning: lowered)
    }

    /// The items of `result` (``itemColumns``, then title, keywords, people, description and the start of
    /// the body) that have a word beginning with `prefix`, each with those words and, when its title has
    /// one, its title.
    private static func completionSources(in result: PostgresResult, beginning prefix: String) -> [CompletionSource] {
        var sources: [CompletionSource] = []
        for row in 0..<result.rowCount {
            var seen = Set<String>()
            var title: String?
            for column in 10...14 {
                guard let text = result.string(row, column) else { continue }
                let before = seen.count
                CompletionSource.forEachWord(in: text, beginning: prefix) { seen.insert($0) }
                if column == 10, seen.count > before { title = text }
            }
            guard !seen.isEmpty, let (item, origin, indexed) = try? decodeItem(result, row) else { continue }
            sources.append(CompletionSource(item: item, origin: origin, indexedAt: indexed, words: seen, title: title))
        }
        return sources
    }

    /// Completions of `prefix` (lowercased) from the last `sample` items added (by id: an update keeps
    /// its row), item by item; or `nil` when fewer than a quarter of those items have such a word (or there
    /// are fewer than 50 items), where the prefix query sees every item: as the SQLite reader chooses.
    private func completionsAmongLastAdded(of prefix: String, sample: Int) throws -> [CompletionSource]? {
        let result = try run(
            """
            SELECT \(Self.itemColumns), i.title, i.keywords, i.people, i.description, substr(i.body, 1, 2000)
            FROM replica.items AS i WHERE i.account = $1 AND i.index_name = $2 AND i.expires > $3 ORDER BY i.id DESC LIMIT $4
            """, [.text(account.rawValue), .text(indexName), .double(now.timeIntervalSince1970), .int(Int64(sample))])
        let sources = Self.completionSources(in: result, beginning: prefix)
        return result.rowCount >= 50 && sources.count * 4 >= result.rowCount ? sources : nil
    }

    // MARK: Activities, enrichment, vectors

    package func recentActivities(limit: Int) throws -> [RecentActivity] {
        let result = try run(
            """
            SELECT coalesce(a.related, 'activity:' || a.persistent), max(a.date), sum(a.views),
                (array_agg(a.type ORDER BY a.date DESC))[1], coalesce(nullif(max(i.title), ''), (array_agg(a.title ORDER BY a.date DESC))[1]),
                (array_agg(a.entity_type ORDER BY a.date DESC))[1], (array_agg(a.entity_id ORDER BY a.date DESC))[1]
            FROM replica.activities AS a
            LEFT JOIN replica.items AS i ON i.account = a.account AND i.index_name = a.index_name AND i.identifier = a.related AND i.expires > $3
            WHERE a.account = $1 AND a.index_name = $2 AND a.prediction AND (a.related IS NULL OR i.id IS NOT NULL)
            GROUP BY 1
            """, [.text(account.rawValue), .text(indexName), .double(now.timeIntervalSince1970)])
        let activities = (0..<result.rowCount).map { row in
            let lastViewed = Date(timeIntervalSince1970: result.double(row, 1) ?? 0)
            let views = Int(result.int(row, 2) ?? 0)
            let entity = result.string(row, 5).flatMap { type in
                result.string(row, 6).map { EntityReference(typeName: type, id: $0) }
            }
            return RecentActivity(
                identifier: ItemIdentifier(result.string(row, 0) ?? ""),
                title: result.string(row, 4).flatMap { $0.isEmpty ? nil : $0 },
                activityType: result.string(row, 3) ?? "", lastViewed: lastViewed, views: views,
                engagement: Engagement.value(lastViewed: lastViewed, views: views, now: now), entity: entity)
        }
        return Array(
            activities.sorted { ($0.engagement, $0.lastViewed) > ($1.engagement, $1.lastViewed) }.prefix(limit))
    }

    package func pendingEnrichment(limit: Int) throws -> [PendingEnrichment] {
        let result = try run(
            """
            SELECT \(Self.itemColumns), i.body, i.id, e.input, e.summary, e.priority, e.attempts
            FROM replica.enrichment AS e JOIN replica.items AS i ON i.account = e.account AND i.index_name = e.index_name AND i.id = e.item
            WHERE e.account = $1 AND e.index_name = $2 AND e.pending AND (e.next_attempt IS NULL OR e.next_attempt <= $3) AND i.expires > $3
            ORDER BY e.item LIMIT $4
            """, [.text(account.rawValue), .text(indexName), .double(now.timeIntervalSince1970), .int(Int64(limit))])
        return try (0..<result.rowCount).map { row in
            let (item, origin, indexed) = try Self.decodeItem(result, row, textContent: result.string(row, 10))
            return PendingEnrichment(
                rowID: result.int(row, 11) ?? 0, item: item, origin: origin, indexed: indexed.timeIntervalSince1970,
                input: result.string(row, 12), summary: result.string(row, 13), priority: result.bool(row, 14),
                attempts: Int(result.int(row, 15) ?? 0))
        }
    }

    package func thread(domain: DomainIdentifier, upTo date: Date?, limit: Int) throws -> [SearchableItem] {
        var builder = SQLBuilder()
        var sql =
            items(Self.itemColumns + ", i.body", &builder) + " AND i.domain = " + builder.bind(.text(domain.rawValue))
        if let date {
            sql += " AND coalesce(i.created, i.indexed) <= " + builder.bind(.double(date.timeIntervalSince1970))
        }
        sql += " ORDER BY coalesce(i.created, i.indexed) DESC, i.id DESC LIMIT " + builder.bind(.int(Int64(limit)))
        let result = try run(sql, builder.arguments)
        return try (0..<result.rowCount).map { try Self.decodeItem(result, $0, textContent: result.string($0, 10)).0 }
            .reversed()
    }

    package func enrichmentCounts() throws -> EnrichmentCounts {
        var counts = EnrichmentCounts()
        let result = try run(
            """
            SELECT pending, attempts > 0, input IS NOT NULL AND (summary IS NOT NULL OR priority IS NOT NULL), skipped, count(*)
            FROM replica.enrichment WHERE account = $1 AND index_name = $2 GROUP BY 1, 2, 3, 4
            """, [.text(account.rawValue), .text(indexName)])
        for row in 0..<result.rowCount {
            let number = Int(result.int(row, 4) ?? 0)
            if result.bool(row, 0) == true {
                counts.pending += number
                if result.bool(row, 1) == true { counts.failing += number }
            } else if result.bool(row, 2) == true {
                counts.enriched += number
            }
            if result.bool(row, 0) != true, let reasons = result.string(row, 3) {
                for reason in reasons.split(separator: ",") { counts.skipped[String(reason), default: 0] += number }
            }
        }
        return counts
    }

    package func pendingEmbeddings(model: String, limit: Int) throws -> [PendingEmbedding] {
        let result = try run(
            """
            SELECT i.id, i.indexed, i.title, i.description, i.body FROM replica.items AS i
            LEFT JOIN replica.embedded AS e ON e.account = i.account AND e.index_name = i.index_name AND e.item = i.id AND e.model = $3
            WHERE i.account = $1 AND i.index_name = $2 AND e.item IS NULL AND i.expires > $4 ORDER BY i.id LIMIT $5
            """,
            [
                .text(account.rawValue), .text(indexName), .text(model), .double(now.timeIntervalSince1970),
                .int(Int64(limit)),
            ])
        return (0..<result.rowCount).map { row in
            PendingEmbedding(
                rowID: result.int(row, 0) ?? 0, indexed: result.double(row, 1) ?? 0,
                text: PendingEmbedding.text(
                    title: result.string(row, 2), description: result.string(row, 3), body: result.string(row, 4)))
        }
    }

    package func embeddingCounts(model: String) throws -> (items: Int, passages: Int, backlog: Int) {
        let items = try embeddedCount(model: model)
        let passages =
            try run(
                """
                SELECT count(*) FROM replica.vectors AS v
                JOIN replica.embedded AS e ON e.account = v.account AND e.index_name = v.index_name AND e.item = v.item
                WHERE v.account = $1 AND v.index_name = $2 AND e.model = $3
                """, [.text(account.rawValue), .text(indexName), .text(model)]
            ).int(0, 0) ?? 0
        return (items, Int(passages), try count() - items)
    }

    package func embeddingBacklog(model: String) throws -> Int {
        try count() - embeddedCount(model: model)
    }

    package func holdsVectors(model: String) throws -> Bool {
        try run(
            "SELECT 1 FROM replica.embedded WHERE account = $1 AND index_name = $2 AND model = $3 LIMIT 1",
            [.text(account.rawValue), .text(indexName), .text(model)]
        ).rowCount > 0
    }

    /// The live items with vectors from `model`.
    private func embeddedCount(model: String) throws -> Int {
        Int(
            try run(
                """
                SELECT count(*) FROM replica.embedded AS e
                JOIN replica.items AS i ON i.account = e.account AND i.index_name = e.index_name AND i.id = e.item
                WHERE e.account = $1 AND e.index_name = $2 AND e.model = $3 AND i.expires > $4
                """, [.text(account.rawValue), .text(indexName), .text(model), .double(now.timeIntervalSince1970)]
            ).int(0, 0) ?? 0)
    }

    // MARK: Projection and sources

    package func quarantined(account: AccountID) throws -> [QuarantinedRecord] {
        let result = try run(
            """
            SELECT kind, record_id, version, reason FROM replica.quarantine WHERE account = $1 AND index_name = $2
            ORDER BY kind COLLATE "C", record_id COLLATE "C"
            """, [.text(self.account.rawValue), .text(indexName)])
        return (0..<result.rowCount).map { row in
            QuarantinedRecord(
                account: account, kind: result.string(row, 0) ?? "", id: result.string(row, 1) ?? "",
                version: result.int(row, 2) ?? 0, reason: result.string(row, 3) ?? "")
        }
    }

    package func checkpoint(_ consumer: String) throws -> String? {
        let result = try run(
            "SELECT position FROM replica.checkpoints WHERE account = $1 AND index_name = $2 AND consumer = $3",
            [.text(account.rawValue), .text(indexName), .text(consumer)])
        return result.rowCount > 0 ? result.string(0, 0) : nil
    }

    package func rebuildsInProgress() throws -> [(kind: String, from: Int, target: Int, cursor: String?)] {
        let result = try run(
            """
            SELECT kind, target_version, cursor, version FROM replica.projections
            WHERE account = $1 AND index_name = $2 AND target_version IS NOT NULL ORDER BY kind COLLATE "C"
            """, [.text(account.rawValue), .text(indexName)])
        return (0..<result.rowCount).map {
            (result.string($0, 0) ?? "", Int(result.int($0, 3) ?? 0), Int(result.int($0, 1) ?? 0), result.string($0, 2))
        }
    }

    package func sourceEntries(_ source: String) throws -> [String: SourceEntry] {
        let result = try run(
            """
            SELECT key, stamp, skip_reason FROM replica.source_entries WHERE account = $1 AND index_name = $2 AND source = $3
            """, [.text(account.rawValue), .text(indexName), .text(source)])
        var entries: [String: SourceEntry] = [:]
        for row in 0..<result.rowCount {
            let entry = SourceEntry(
                key: result.string(row, 0) ?? "", stamp: result.string(row, 1) ?? "", skipReason: result.string(row, 2))
            entries[entry.key] = entry
        }
        return entries
    }

    package func skippedEntries(_ source: String) throws -> [(String, Int)] {
        let result = try run(
            """
            SELECT skip_reason, count(*) FROM replica.source_entries
            WHERE account = $1 AND index_name = $2 AND source = $3 AND skip_reason IS NOT NULL GROUP BY 1 ORDER BY 2 DESC
            """, [.text(account.rawValue), .text(indexName), .text(source)])
        return (0..<result.rowCount).map { (result.string($0, 0) ?? "", Int(result.int($0, 1) ?? 0)) }
    }
}

/// The places of searched words a read has fetched, by item, and which words they cover.
final class PlacesSeen: Sendable {
    private let state = Mutex<(words: [Int64: ItemWords], exact: Set<String>, prefixes: Set<String>)>(([:], [], []))

    /// Keeps `words`, the places of every item's lexemes that `terms` match, all of them.
    func keep(_ words: [Int64: ItemWords], of terms: [PostgresIndexText.TermTokens]) {
        // Places kept before covered other terms: only these items' places cover these terms.
        let (exact, prefixes) = PostgresIndexReader.tokens(of: terms)
        state.withLock { $0 = (words, exact, prefixes) }
    }

    /// The places of `terms` in each of `rowIDs`, when all of them were kept; else `nil`. An item kept
    /// with no place of a term does not hold it.
    func words(of rowIDs: [Int64], for terms: [PostgresIndexText.TermTokens]) -> [Int64: ItemWords]? {
        let (exact, prefixes) = PostgresIndexReader.tokens(of: terms)
        return state.withLock { state in
            guard exact.isSubset(of: state.exact), prefixes.isSubset(of: state.prefixes),
                rowIDs.allSatisfy({ state.words[$0] != nil })
            else { return nil }
            return Dictionary(uniqueKeysWithValues: rowIDs.map { ($0, state.words[$0]!) })
        }
    }
}
