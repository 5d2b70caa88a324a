import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres
import Synchronization

// A ranked search of common words through the index's ranking lists (migration 0009), by the same
// search as on SQLite (``RankingLists/top(_:tokens:weights:source:)``).
extension PostgresIndexReader {
    /// The best `limit` items of a ranked search of words through the ranking lists, scored as the full
    /// ranking scores them, with the best read whole; `nil` when the lists do not apply (none built, a
    /// prefix, every word required, too many changes since the build), and the caller ranks every match.
    /// A word the analyzer splits in two (a pair of Chinese characters that is no word of ICU's
    /// dictionary, say) is a phrase without a list (``RankingLists/key(ofPhrase:)``); a phrase typed
    /// in quotes, or a joined word kept whole, is not taken (``SearchTerms/severalTokensAreSplitWords``).
    func rankedByLists(_ terms: SearchTerms, _ query: SearchQuery, limit: Int) throws -> Ranked? {
        guard usesRankingLists, !terms.requiresAll, !terms.terms.isEmpty, terms.severalTokensAreSplitWords,
            terms.terms.allSatisfy({ !$0.tokens.isEmpty && !$0.prefix })
        else { return nil }
        let tokens = terms.terms.map { RankingLists.key(ofPhrase: $0.tokens) }
        let source = try PostgresRankingSource(
            self, tokens: tokens, queries: terms.queries, anyTerm: terms.tsquery, query: query)
        guard let top = try RankingLists.top(limit, tokens: tokens, weights: terms.weights, source: source) else {
            return nil
        }
        // The best read whole, without the places of their words: which words each has, the lists said
        // (``knownWordsPresent(_:in:)``); which of them are in a heading (weights A and B), the item's
        // own words say (stemmed for its language, which the query's may not be), with their places
        // there, for a phrase of several; and only the ranking's check of closeness, for the few with
        // every word, asks the server for places.
        let rows = try itemRows(top.map(\.rowID)) { builder in
            let inHeadings =
                "FROM unnest(ts_filter(i.words, '{a,b}')) AS u WHERE u.lexeme = ANY("
                + builder.bind(SQLBuilder.textArray(Array(Set(terms.terms.flatMap(\.tokens))))) + "::text[]))"
            return Self.textColumns + ", (SELECT string_agg(u.lexeme, E'\\x1f') " + inHeadings
                + ", (SELECT string_agg(array_to_string(u.positions, ','), E'\\x1f') " + inHeadings
                + ", (SELECT string_agg(array_to_string(u.weights, ','), E'\\x1f') " + inHeadings
        }
        wordsSeen.record(
            tokens: tokens,
            present: Dictionary(top.map { ($0.rowID, $0.present) }, uniquingKeysWith: { first, _ in first }))
        // Each searched lexeme's places in a heading: all ``ItemWords/isInHeading(_:)``, the only reader
        // of these words, asks.
        let headings = rows.rows.mapValues { Self.aggregatedWords(rows.result, $0, from: 16) }
        return (top.map { (id: $0.rowID, score: $0.score) }, headings, limit, rows)
    }

    package func knownWordsPresent(_ terms: [FTSPattern.Term], in rowIDs: [Int64]) -> [Int64: Int]? {
        wordsSeen.counts(terms.map(PostgresIndexText.phrases(of:)), in: rowIDs)
    }

    /// ``matches(_:pattern:limit:)`` through the ranking lists, or `nil` when they do not apply or cannot
    /// prove the top (tests compare it with the full ranking).
    package func matchesThroughRankingLists(_ query: SearchQuery, pattern: FTSPattern, limit: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])?
    {
        guard query.predicate == nil, let terms = SearchTerms(pattern) else { return nil }
        return try matchesThroughRankingLists(query, terms: terms, limit: limit)
    }

    func matchesThroughRankingLists(_ query: SearchQuery, terms: SearchTerms, limit: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])?
    {
        guard let listed = try rankedByLists(terms, query, limit: limit) else { return nil }
        return try read(listed, terms.terms, language: terms.language, matcher: nil, limit: limit)
    }

    /// Missing with at least `minimumItems` items, more changes than the lists follow, or, with no change
    /// recorded, numbers that are not those the lists were built from (written behind the writer's back):
    /// the cases where a search through them scores every match.
    package func rankingListsAreStale(minimumItems: Int) throws -> Bool {
        let result = try run(
            """
            SELECT s.rows, s.tokens, st.items, st.words,
                (SELECT count(*) FROM (SELECT 1 FROM replica.ranking_changes WHERE account = $1 AND index_name = $2 LIMIT $3) AS c)
            FROM (SELECT 1) AS one
            LEFT JOIN replica.ranking_state AS s ON s.account = $1 AND s.index_name = $2
            LEFT JOIN replica.index_statistics AS st ON st.account = $1 AND st.index_name = $2
            """, [.text(account.rawValue), .text(indexName), .int(Int64(RankingLists.maximumChanges + 1))])
        let items = result.int(0, 2) ?? 0
        guard let builtRows = result.int(0, 0) else { return items >= Int64(minimumItems) }
        let changes = result.int(0, 4) ?? 0
        if changes == 0 { return builtRows != items || result.int(0, 1) != (result.int(0, 3) ?? 0) }
        return changes > Int64(RankingLists.maximumChanges)
    }
}

/// Which of the words of the last search through the ranking lists each item it returned has, for the
/// ranking's second step (``PostgresIndexReader/knownWordsPresent(_:in:)``).
final class WordsSeen: Sendable {
    private let state = Mutex<(tokens: [String], present: [Int64: [Bool]])>(([], [:]))

    func record(tokens: [String], present: [Int64: [Bool]]) {
        state.withLock { $0 = (tokens, present) }
    }

    /// How many of `terms` (each as its phrases: a word's forms are two) each of `rowIDs` has, when every
    /// phrase is one of those searched (by ``RankingLists/key(ofPhrase:)``, as the search named them)
    /// and every item was returned; else `nil`. A term counts once, whichever of its phrases the item has.
    func counts(_ terms: [[PostgresIndexText.TermTokens]], in rowIDs: [Int64]) -> [Int64: Int]? {
        state.withLock { state in
            var indexes: [[Int]] = []
            for phrases in terms {
                var term: [Int] = []
                for phrase in phrases {
                    guard !phrase.prefix,
                        let index = state.tokens.firstIndex(of: RankingLists.key(ofPhrase: phrase.tokens))
                    else { return nil }
                    term.append(index)
                }
                indexes.append(term)
            }
            var counts: [Int64: Int] = [:]
            for rowID in rowIDs {
                guard let present = state.present[rowID] else { return nil }
                counts[rowID] = indexes.count { $0.contains { present[$0] } }
            }
            return counts
        }
    }
}

/// The ranking lists of one index on PostgreSQL, for one search. What every search needs (the lists'
/// state, the index's totals, each word's first two tiers, the changes since the build, whether any
/// item has expired) comes in one statement when the source is made; the changed items' numbers and the
/// items of the words without a list, when the search has any, in a second; a later tier, a word's
/// every tier and the filters' checks, each in one more.
final class PostgresRankingSource: RankingListSource {
    let reader: PostgresIndexReader
    let query: SearchQuery
    let tokens: [String]
    let queries: [String]
    let anyTerm: String
    private var state: (state: RankingLists.State, threshold: Int)?
    private var totalsNow: RankingLists.State?
    private var first: [RankingLists.Tier?]
    /// The second tier of each word with one, read with the first: most searches through the lists read it.
    private var second: [String: RankingLists.Tier] = [:]
    private var changed: [Int64] = []
    private var someExpired = false
    /// What the search reads only when it has changed items or a word without a list (``readRest()``).
    private var rest:
        (
            numbers: [(rowID: Int64, numbers: [Double])],
            unlisted: [Int: [(rowID: Int64, frequency: Double, length: Double)]]
        )?

    /// Reads what every search through the lists needs, in one statement.
    ///
    /// - Parameters:
    ///   - tokens: the search's words as the index stores them.
    ///   - queries: each word as a `tsquery`, in the same order.
    ///   - anyTerm: the `tsquery` of any of them.
    init(_ reader: PostgresIndexReader, tokens: [String], queries: [String], anyTerm: String, query: SearchQuery) throws
    {
        self.reader = reader
        self.query = query
        self.tokens = tokens
        self.queries = queries
        self.anyTerm = anyTerm
        first = Array(repeating: nil, count: tokens.count)
        // Each value the plan could depend on is behind a `(SELECT $n)`, so that PostgreSQL plans the
        // statement once for all and keeps that plan (after its first five runs), where a plan for each
        // value took four times as long to make as to run (0.6 ms a search).
        let result = try reader.run(
            """
            SELECT 'b', s.rows, s.tokens::float8, s.threshold::float8, NULL::text, NULL::bytea
            FROM replica.ranking_state AS s WHERE s.account = $1 AND s.index_name = $2
            UNION ALL
            SELECT 't', st.items, st.words::float8, 0, NULL, NULL
            FROM replica.index_statistics AS st WHERE st.account = $1 AND st.index_name = $2
            UNION ALL
            SELECT 'f', l.documents, l.floor, l.tier, l.term, l.entries FROM replica.ranking_lists AS l
            WHERE l.account = $1 AND l.index_name = $2 AND l.term = ANY((SELECT $3::text[])::text[]) AND l.tier <= 1
            UNION ALL
            (SELECT 'c', c.id, 0, 0, NULL, NULL FROM replica.ranking_changes AS c
             WHERE c.account = $1 AND c.index_name = $2 ORDER BY c.id LIMIT (SELECT $4::bigint))
            UNION ALL
            SELECT 'e', 0, 0, 0, NULL, NULL
            WHERE EXISTS (SELECT 1 FROM replica.items AS i
                          WHERE i.account = $1 AND i.index_name = $2 AND i.expires <= (SELECT $5::float8) AND i.expires < 32503680000)
            """,
            [
                .text(reader.account.rawValue), .text(reader.indexName), SQLBuilder.textArray(tokens),
                .int(Int64(RankingLists.maximumChanges + 1)), .double(reader.now.timeIntervalSince1970),
            ])
        for row in 0..<result.rowCount {
            let number = result.int(row, 1) ?? 0
            let a = result.double(row, 2) ?? 0
            let b = result.double(row, 3) ?? 0
            switch result.string(row, 0) {
            case "b": state = (RankingLists.State(rows: number, tokens: Int64(a)), Int(b))
            case "t": totalsNow = RankingLists.State(rows: number, tokens: Int64(a))
            case "f":
                guard let term = result.string(row, 4), let entries = result.bytes(row, 5) else { continue }
                let tier = RankingLists.Tier(documents: number, floor: a, entries: entries)
                if b == 0 {
                    for word in tokens.indices where tokens[word] == term { first[word] = tier }
                } else {
                    second[term] = tier
                }
            case "c": changed.append(number)
            case "e": someExpired = true
            default: break
            }
        }
        changed.sort()
    }

    /// How many items a word without a list may be in (``RankingLists/top(_:tokens:weights:source:)``
    /// asks no more): fewer than the lists' threshold, or, with a phrase of several words among the
    /// search's, as many as one may be in.
    private var mostUnlisted: Int {
        // The build's own threshold, which a test sets above the writer's default.
        let threshold = max(PostgresIndexWriter.rankingThreshold, state?.threshold ?? 0)
        return tokens.map { RankingLists.mostItems(withoutList: $0, threshold: threshold) }.max() ?? threshold
    }

    /// The changed items' numbers and every item of the words without a list, in one more statement, once.
    private func readRest() throws -> (
        numbers: [(rowID: Int64, numbers: [Double])],
        unlisted: [Int: [(rowID: Int64, frequency: Double, length: Double)]]
    ) {
        if let rest { return rest }
        // The function leaves out the words with a list itself, and every word when none has one.
        let result = try reader.run(
            """
            SELECT 'n', 0, i.id, i.length::float8, 0,
                ARRAY(SELECT round(ts_rank_cd('{0.1,0.2,0.5,1}'::float4[], i.words, t.term, 0)::float8 * 10)
                      FROM unnest($4::tsquery[]) WITH ORDINALITY AS t(term, ordinal) ORDER BY t.ordinal)
            FROM (SELECT c.id FROM replica.ranking_changes AS c WHERE c.account = $1 AND c.index_name = $2
                  ORDER BY c.id LIMIT (SELECT $5::bigint)) AS c
            JOIN replica.items AS i ON i.account = $1 AND i.index_name = $2 AND i.id = c.id
            WHERE (SELECT $6::boolean) AND i.words @@ $3::tsquery
            UNION ALL
            SELECT 'p', p.word, p.id, p.frequency, p.length, NULL
            FROM replica.unlisted_postings($2, $7::text[], $8::tsquery[], $9) AS p
            """,
            [
                .text(reader.account.rawValue), .text(reader.indexName), .text(anyTerm), SQLBuilder.textArray(queries),
                .int(Int64(RankingLists.maximumChanges + 1)), .bool(!changed.isEmpty),
                SQLBuilder.textArray(tokens), SQLBuilder.textArray(queries),
                .int(Int64(mostUnlisted + RankingLists.maximumChanges + 1)),
            ])
        var read:
            (
                numbers: [(rowID: Int64, numbers: [Double])],
                unlisted: [Int: [(rowID: Int64, frequency: Double, length: Double)]]
            ) = ([], [:])
        for row in 0..<result.rowCount {
            let number = result.int(row, 2) ?? 0
            let a = result.double(row, 3) ?? 0
            switch result.string(row, 0) {
            case "n": read.numbers.append((number, [a] + Self.doubles(inArray: result.string(row, 5) ?? "{}")))
            case "p":
                let word = Int(result.int(row, 1) ?? 0)
                guard word >= 1, word <= tokens.count else { continue }
                read.unlisted[word - 1, default: []].append((number, a, result.double(row, 4) ?? 0))
            default: break
            }
        }
        rest = read
        return read
    }

    /// The numbers of a `float8[]` in its text form (`{1,2.5}`).
    static func doubles(inArray text: String) -> [Double] {
        text.dropFirst().dropLast().split(separator: ",").compactMap { Double($0) }
    }

    func built() throws -> (state: RankingLists.State, threshold: Int)? { state }

    func firstTiers(of tokens: [String]) throws -> [RankingLists.Tier?] { first }

    func tier(_ number: Int64, of token: String) throws -> RankingLists.Tier? {
        if number == 1, let tier = second[token] { return tier }
        let result = try reader.run(
            """
            SELECT documents, floor, entries FROM replica.ranking_lists WHERE account = $1 AND index_name = $2 AND term = $3 AND tier = $4
            """, [.text(reader.account.rawValue), .text(reader.indexName), .text(token), .int(number)])
        guard result.rowCount == 1, let entries = result.bytes(0, 2) else { return nil }
        return RankingLists.Tier(documents: result.int(0, 0) ?? 0, floor: result.double(0, 1) ?? 0, entries: entries)
    }

    func tiers(of token: String) throws -> [[UInt8]] {
        let result = try reader.run(
            """
            SELECT entries FROM replica.ranking_lists WHERE account = $1 AND index_name = $2 AND term = $3 ORDER BY tier
            """, [.text(reader.account.rawValue), .text(reader.indexName), .text(token)])
        return (0..<result.rowCount).compactMap { result.bytes($0, 0) }
    }

    func changes(limit: Int) throws -> [Int64] { Array(changed.prefix(limit)) }

    func totals() throws -> RankingLists.State? { totalsNow ?? RankingLists.State(rows: 0, tokens: 0) }

    /// `changes` are what ``changes(limit:)`` gave the search: the statement of ``readRest()`` reads the
    /// same rows again, by the same limit, beside the unlisted words' items.
    func changedNumbers(_ changes: [Int64]) throws -> [(rowID: Int64, numbers: [Double])] { try readRest().numbers }

    func postings(ofWord word: Int, limit: Int) throws -> [(rowID: Int64, frequency: Double, length: Double)] {
        Array((try readRest().unlisted[word] ?? []).prefix(limit))
    }

    func everyItemPasses() throws -> Bool {
        guard !someExpired else { return false }
        var filters = ""
        var builder = SQLBuilder()
        reader.appendFilters(for: query, to: &filters, builder: &builder)
        return filters.isEmpty
    }

    func passing(_ rowIDs: [Int64]) throws -> Set<Int64> {
        var builder = SQLBuilder()
        var sql =
            reader.items("i.id", &builder) + " AND i.id = ANY(" + builder.bind(SQLBuilder.integerArray(rowIDs))
            + "::bigint[])"
        reader.appendFilters(for: query, to: &sql, builder: &builder)
        let result = try reader.run(sql, builder.arguments)
        return Set((0..<result.rowCount).compactMap { result.int($0, 0) })
    }
}
