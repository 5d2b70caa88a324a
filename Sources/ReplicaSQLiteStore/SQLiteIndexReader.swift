package import Foundation
import ReplicaCore
package import ReplicaIndex
package import ReplicaSQLite
import ReplicaText
import Synchronization

/// The SQL that reads one index. Every read leaves out expired items, whether or not they were purged.
package struct SQLiteIndexReader: IndexReader {
    let connection: Connection
    /// The index's vectors held in memory between searches, when the index keeps them.
    var vectorCache: VectorCache?
    package let now: Date
    /// Whether ranked searches may go through the ranking lists (tests turn it off for the full ranking).
    package var usesRankingLists = true
    /// What the last search through the ranking lists learnt of its items' words, for the second step.
    let rankedWords = RankedWords()

    /// The condition of an item whose expiration date has passed, with `now` bound to its one parameter.
    /// Its second half is the partial index `items_expires`'s own, so that index is used: without it,
    /// finding the few expired items read every row (21 ms of a search at 100,000 items).
    static let hasExpired = "expires <= ? AND expires < 32503680000"

    static let itemColumns = """
        items.identifier, items.domain, items.attributes, items.owner, items.source_version, items.indexed, items.expires,
        items.content_type, items.title, items.description
        """

    /// Decodes an item from the columns in ``itemColumns``, starting at `offset`.
    package static func decodeItem(_ row: Statement, offset: Int32 = 0, textContent: String? = nil) throws -> (
        SearchableItem, ItemOrigin, Date
    ) {
        let attributes = try decodeAttributes(
            row.text(offset + 2), contentType: row.optionalText(offset + 7), body: textContent,
            title: row.text(offset + 8), description: row.text(offset + 9))
        let expires = row.double(offset + 6)
        let item = SearchableItem(
            uniqueIdentifier: ItemIdentifier(row.text(offset)),
            domainIdentifier: row.optionalText(offset + 1).map(DomainIdentifier.init(rawValue:)),
            attributeSet: attributes,
            expirationDate: Date(timeIntervalSince1970: expires))
        let origin = ItemOrigin(owner: ItemOwner(rawValue: row.text(offset + 3)), version: row.optionalText(offset + 4))
        return (item, origin, Date(timeIntervalSince1970: row.double(offset + 5)))
    }

    /// Rebuilds an attribute set from its stored JSON and the attributes kept in columns of their own
    /// (the inverse of `AttributeSet.serializedJSON(excludingStoredElsewhere:)`).
    package static func decodeAttributes(
        _ text: String, contentType: String?, body: String?, title: String, description: String
    ) throws -> AttributeSet {
        try AttributeSet(stored: text, contentType: contentType, body: body, title: title, description: description)
    }

    /// The items that match `pattern` (or the listing), by FTS5's BM25 with the column weights.
    package func matches(_ query: SearchQuery, pattern: FTSPattern?, limit candidates: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])
    {
        if usesRankingLists, let pattern, let found = try rankedByLists(query, pattern: pattern, limit: candidates) {
            return found
        }
        var sql = "SELECT \(Self.itemColumns), "
        var arguments: [SQLValue] = []
        let matcher = query.predicate.map { PredicateMatcher($0, now: now, timeZone: query.timeZone) }
        if let pattern {
            // The last column says whether a word is in the title, keywords or people: FTS5 marks the
            // matches in those columns for the rows returned only, at no cost to the others.
            sql +=
                "-items_text.rank, snippet(items_text, -1, '[', ']', '…', 24), items_text.rowid, "
                + "instr(highlight(items_text, 0, char(1), '') || highlight(items_text, 1, char(1), '') || highlight(items_text, 2, char(1), ''), char(1)) > 0"
            sql += matcher?.readsTextContent == true ? ", items.body " : " "
            sql += "FROM items_text JOIN items ON items.id = items_text.rowid WHERE items_text MATCH ? AND "
            arguments.append(.text(pattern.matchExpression))
            // A word's form as typed counts less than its stem: `rank` is then replica_bm25 (CSQLite's
            // shim.h), bm25() with a weight for each phrase.
            let weights = pattern.phraseWeights
            if weights.contains(where: { $0 != 1 }) {
                sql += "items_text.rank MATCH ? AND "
                arguments.append(
                    .text(
                        "replica_bm25(\(RankingLists.weightArguments), "
                            + weights.map { String($0) }.joined(separator: ", ") + ")"))
            }
        } else {
            sql +=
                "0.0, NULL, items.id, 0" + (matcher?.readsTextContent == true ? ", items.body " : " ")
                + "FROM items WHERE "
        }
        sql += "items.expires > ?"
        arguments.append(.real(now.timeIntervalSince1970))
        Self.appendFilters(for: query, now: now, to: &sql, arguments: &arguments)
        sql +=
            pattern == nil
            ? " ORDER BY coalesce(items.modified, items.created, items.indexed) DESC, items.id"
            : " ORDER BY items_text.rank"
        // With a predicate, rows are checked one by one until enough pass.
        if matcher == nil {
            sql += " LIMIT ?"
            arguments.append(.integer(Int64(candidates)))
        }

        var found: [(item: FoundItem, rowID: Int64)] = []
        var inHeading = Set<Int64>()
        var unreadable: [ItemIdentifier] = []
        func run() throws {
            try connection.cached(sql).each(arguments) { row in
                do {
                    let (item, origin, indexed) = try Self.decodeItem(row)
                    if let matcher,
                        !matcher.matches(Self.attributes(of: item, body: row, column: 14, if: matcher.readsTextContent))
                    {
                        return true
                    }
                    found.append(
                        (
                            FoundItem(
                                item: item, score: row.double(10), snippet: row.optionalText(11), origin: origin,
                                indexedAt: indexed),
                            row.int64(12)
                        ))
                    if pattern != nil, row.int(13) != 0 { inHeading.insert(row.int64(12)) }
                } catch {
                    unreadable.append(ItemIdentifier(row.text(0)))
                }
                return found.count < candidates
            }
        }
        do {
            do {
                try run()
            } catch let error as SQLiteError
                where pattern != nil && error.code.primary == .error && found.isEmpty && unreadable.isEmpty
            {
                // SQLite 3.40's FTS5 fails the first query ordered by `rank` that finds the table's settings
                // changed since the connection last read them (a load turns merging off and on again in each
                // transaction, SQLiteIndexWriter+Segments): it reads them again midway. They are read now, and
                // the same snapshot asked again answers.
                try run()
            }
        } catch let error as SQLiteError where pattern != nil && error.code.primary == .error {
            // A safety net: patterns are built so that the engine accepts them, and the engine's own
            // words ("fts5: syntax error near …") must never reach a person or a model.
            throw ReplicaError(
                .invalidQuery, "the query could not be understood; remove unusual characters and try again",
                cause: error)
        }
        return (found, inHeading, unreadable)
    }

    /// ``matches(_:pattern:limit:)`` for a ranked search of any of several words, through the
    /// ranking lists (``RankingLists``): the same items in the same order, without scoring every match;
    /// `nil` when the lists do not apply or cannot prove the top.
    func rankedByLists(_ query: SearchQuery, pattern: FTSPattern, limit candidates: Int) throws
        -> (found: [(item: FoundItem, rowID: Int64)], inHeading: Set<Int64>, unreadable: [ItemIdentifier])?
    {
        guard !pattern.requiresAll, query.predicate == nil, let tokenizer = try? IndexTokenizer.shared.get() else {
            return nil
        }
        // Each phrase of each term (a word's forms are two: the word and its stem), with its term and the
        // words FTS5 stores for it: one, or several where the analyzer splits what was searched as one
        // word (a pair of Chinese characters that is no word of ICU's dictionary: "也可" is "也" "可").
        var phrases: [(words: [String], expression: String, term: Int)] = []
        for (index, term) in pattern.meaningfulTerms.enumerated() {
            for alternative in term.alternatives {
                guard case .word(let word, prefix: false) = alternative else { return nil }
                let tokens = tokenizer.tokens(in: word, for: .query(prefix: false))
                guard !tokens.isEmpty, tokens.enumerated().allSatisfy({ $0.element.position == $0.offset }) else {
                    return nil
                }
                phrases.append((tokens.map(\.text), alternative.expression, index))
            }
        }
        var filters = ""
        var arguments: [SQLValue] = []
        Self.appendFilters(for: query, now: now, to: &filters, arguments: &arguments)
        let keys = phrases.map { RankingLists.key(ofPhrase: $0.words) }
        let source = SQLiteRankingSource(
            connection: connection, phrases: zip(keys, phrases).map { ($0, $1.expression) },
            expression: pattern.matchExpression,
            now: now.timeIntervalSince1970, filters: filters, filterArguments: arguments)
        guard
            let top = try RankingLists.top(
                candidates, tokens: keys, weights: pattern.phraseWeights, source: source)
        else { return nil }
        // The rows in one statement, with the score just computed. A phrase is in a heading column when
        // its words stand there side by side, as FTS5 would mark it (its own tokenizer splits them);
        // the snippet is made later, for the items returned only (``snippets(_:)``), from the words the
        // item has: a full-text look-up each, which for all the candidates took most of a question's time.
        let terms = pattern.meaningfulTerms
        let termsPresent = top.map { found in
            var present = [Bool](repeating: false, count: terms.count)
            for (phrase, has) in zip(phrases, found.present) where has { present[phrase.term] = true }
            return (found.rowID, present)
        }
        rankedWords.record(
            terms: terms.map(\.expression), present: Dictionary(termsPresent, uniquingKeysWith: { first, _ in first }))
        let searched = phrases.map(\.words)
        var rows: [Int64: (item: FoundItem, inHeading: Bool)] = [:]
        var unreadable: [ItemIdentifier] = []
        try connection.cached(
            """
            SELECT \(Self.itemColumns), items.id, items.keywords, items.people, items.language FROM items
            WHERE items.id IN (SELECT value FROM json_each(?))
            """
        ).each([.text("[" + top.map { String($0.rowID) }.joined(separator: ",") + "]")]) { row in
            do {
                let (item, origin, indexed) = try Self.decodeItem(row)
                let headings = [row.optionalText(8), row.optionalText(11), row.optionalText(12)].compactMap { $0 }
                // Stemmed as the item's words were, for its own language: a query stemmed for another
                // (Indonesian "kanes" beside English "kalos") still finds the stems the index holds.
                let inHeading = TextAnalyzer.withDocumentLanguage(row.optionalText(13)) {
                    headings.contains { Self.holds(tokenizer.tokens(in: $0), anyOf: searched) }
                }
                rows[row.int64(10)] = (
                    FoundItem(item: item, score: 0, snippet: nil, origin: origin, indexedAt: indexed), inHeading
                )
            } catch {
                unreadable.append(ItemIdentifier(row.text(0)))
            }
            return true
        }
        var found: [(item: FoundItem, rowID: Int64)] = []
        var inHeading = Set<Int64>()
        for (rowID, score, present) in top {
            guard let (read, heading) = rows[rowID] else { continue }
            var item = read
            item.score = score
            item.pendingSnippet = .matching(
                zip(phrases, present).filter(\.1).map(\.0.expression).joined(separator: " OR "))
            found.append((item, rowID))
            if heading { inHeading.insert(rowID) }
        }
        return (found, inHeading, unreadable)
    }

    /// Whether `tokens` (a text's, as the index's tokenizer finds them) hold any of `phrases`, its words
    /// at consecutive places, as FTS5 matches a phrase.
    static func holds(_ tokens: [FTS5Tokenizer.Token], anyOf phrases: [[String]]) -> Bool {
        var places: [String: [Int]] = [:]
        for token in tokens { places[token.text, default: []].append(token.position) }
        return phrases.contains { words in
            guard let first = words.first, let starts = places[first] else { return false }
            return starts.contains { start in
                words.indices.dropFirst().allSatisfy { places[words[$0]]?.contains(start + $0) == true }
            }
        }
    }

    package func snippets(_ pending: [(rowID: Int64, identifier: ItemIdentifier, expression: String)]) throws -> [Int64:
        String]
    {
        // The identifier too: in a search whose halves read two snapshots, a row id freed by a delete in
        // between can name another item by now.
        let row = try connection.cached(
            """
            SELECT snippet(items_text, -1, '[', ']', '…', 24) FROM items_text JOIN items ON items.id = items_text.rowid
            WHERE items_text MATCH ? AND items_text.rowid = ? AND items.identifier = ?
            """)
        var snippets: [Int64: String] = [:]
        for (rowID, identifier, expression) in pending {
            if let snippet = try row.firstRow(
                [.text(expression), .integer(rowID), .text(identifier.rawValue)], { $0.optionalText(0) }) ?? nil
            {
                snippets[rowID] = snippet
            }
        }
        return snippets
    }

    /// An item's attributes with its text content from `column` of `row` when `needed`, for a predicate.
    static func attributes(of item: SearchableItem, body row: Statement, column: Int32, if needed: Bool) -> AttributeSet
    {
        var attributes = item.attributeSet
        if needed, let body = row.optionalText(column), !body.isEmpty { attributes.textContent = body }
        return attributes
    }

    package func textContents(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: String] {
        let body = try connection.cached("SELECT body FROM items WHERE identifier = ?")
        var texts: [ItemIdentifier: String] = [:]
        for identifier in identifiers {
            if let text = try body.firstRow([.text(identifier.rawValue)], { $0.text(0) }) { texts[identifier] = text }
        }
        return texts
    }

    /// The row identifiers of the items that pass the query's filters and predicate, or `nil` when it has
    /// neither (every item not expired passes).
    package func rowIDs(passing query: SearchQuery) throws -> Set<Int64>? {
        let unfiltered = "SELECT items.id FROM items WHERE items.expires > ?"
        var sql = unfiltered
        var arguments: [SQLValue] = [.real(now.timeIntervalSince1970)]
        Self.appendFilters(for: query, now: now, to: &sql, arguments: &arguments)
        guard let predicate = query.predicate else {
            return sql == unfiltered ? nil : Set(try connection.prepare(sql).rows(arguments) { $0.int64(0) })
        }
        let matcher = PredicateMatcher(predicate, now: now, timeZone: query.timeZone)
        sql = sql.replacingOccurrences(
            of: "SELECT items.id FROM",
            with: "SELECT \(Self.itemColumns), items.id\(matcher.readsTextContent ? ", items.body" : "") FROM")
        var passing = Set<Int64>()
        try connection.prepare(sql).each(arguments) { row in
            if let (item, _, _) = try? Self.decodeItem(row),
                matcher.matches(Self.attributes(of: item, body: row, column: 11, if: matcher.readsTextContent))
            {
                passing.insert(row.int64(10))
            }
            return true
        }
        return passing
    }

    package func rows(matching match: TermMatch, among rowIDs: [Int64]) throws -> Set<Int64> {
        try rows(matching: match.ftsExpression, among: rowIDs)
    }

    /// Which of `rowIDs` match `expression`: one FTS5 query over their range of row ids.
    func rows(matching expression: String, among rowIDs: [Int64]) throws -> Set<Int64> {
        guard let low = rowIDs.min(), let high = rowIDs.max() else { return [] }
        // Items just ranked through the ranking lists: their build merged FTS5 into one segment, so a
        // look-up per item costs a seek per word, where the range below can span every item with the words.
        if rankedWords.knows(rowIDs) {
            let lookup = try connection.cached("SELECT rowid FROM items_text WHERE items_text MATCH ? AND rowid = ?")
            return Set(
                try rowIDs.filter { rowID in
                    try lookup.firstRow([.text(expression), .integer(rowID)], { $0.int64(0) }) != nil
                })
        }
        let wanted = Set(rowIDs)
        var found = Set<Int64>()
        try connection.cached("SELECT rowid FROM items_text WHERE items_text MATCH ? AND rowid >= ? AND rowid <= ?")
            .each([.text(expression), .integer(low), .integer(high)]) { row in
                let rowID = row.int64(0)
                if wanted.contains(rowID) { found.insert(rowID) }
                return found.count < wanted.count
            }
        return found
    }

    /// Adds the query's filters as `AND …` clauses on the `items` table.
    package static func appendFilters(
        for query: SearchQuery, now: Date, to sql: inout String, arguments: inout [SQLValue]
    ) {
        func anyOf(_ values: [String], _ clause: String, _ bind: (String) -> [SQLValue]) {
            guard !values.isEmpty else { return }
            sql += " AND (" + Array(repeating: clause, count: values.count).joined(separator: " OR ") + ")"
            for value in values { arguments += bind(value) }
        }
        // Every item conforms to public.item, including those without a type; other filters match the
        // types recorded with their trees.
        if !query.contentTypes.isEmpty && !query.contentTypes.contains(.item) {
            let clause = Array(repeating: "instr(tree, ?) > 0", count: query.contentTypes.count).joined(
                separator: " OR ")
            sql += " AND items.content_type IN (SELECT name FROM content_types WHERE \(clause))"
            arguments += query.contentTypes.map { .text(" \($0.rawValue) ") }
        }
        anyOf(query.domains.map(\.rawValue), "(items.domain = ? OR (items.domain >= ? AND items.domain < ?))") {
            [.text($0), .text($0 + "."), .text($0 + "/")]
        }
        anyOf(query.authors, "instr(items.authors, ?) > 0") { [.text($0.lowercased())] }
        anyOf(query.recipients, "instr(items.recipients, ?) > 0") { [.text($0.lowercased())] }
        anyOf(query.owners.map(\.rawValue), "items.owner = ?") { [.text($0)] }
        if !query.excludedOwners.isEmpty {
            sql +=
                " AND items.owner NOT IN ("
                + Array(repeating: "?", count: query.excludedOwners.count).joined(separator: ", ") + ")"
            arguments += query.excludedOwners.map { .text($0.rawValue) }
        }
        if let predicate = query.predicate,
            let (condition, values) = necessaryCondition(predicate, now: now, timeZone: query.timeZone)
        {
            sql += " AND " + condition
            arguments += values
        }
        for (column, range) in [("created", query.created), ("modified", query.modified)] {
            guard let range else { continue }
            if let start = range.start {
                sql += " AND items.\(column) >= ?"
                arguments.append(.real(start.timeIntervalSince1970))
            }
            if let end = range.end {
                sql += " AND items.\(column) < ?"
                arguments.append(.real(end.timeIntervalSince1970))
            }
        }
    }

    /// A condition on the `items` table's columns that every item satisfying `predicate` meets, so that
    /// SQLite passes over most of the others before their attributes are read; the predicate still
    /// decides. Comparisons of the content type with a plain string and of the creation and modification
    /// dates have one; `!` and the rest have none (an `||` has one only when both sides do).
    static func necessaryCondition(_ predicate: QueryPredicate, now: Date, timeZone: TimeZone) -> (String, [SQLValue])?
    {
        func date(_ value: QueryValue) -> Date? {
            switch value {
            case .time(let expression): return expression.date(now: now, timeZone: timeZone)
            case .string(let text, _): return ISO8601.date(from: text)
            default: return nil
            }
        }
        let dateColumns: [AttributeKey: String] = [
            .contentCreationDate: "items.created", .contentModificationDate: "items.modified",
        ]
        switch predicate {
        case .and(let left, let right):
            let conditions = [left, right].compactMap { necessaryCondition($0, now: now, timeZone: timeZone) }
            guard !conditions.isEmpty else { return nil }
            return ("(" + conditions.map(\.0).joined(separator: " AND ") + ")", conditions.flatMap(\.1))
        case .or(let left, let right):
            guard let a = necessaryCondition(left, now: now, timeZone: timeZone),
                let b = necessaryCondition(right, now: now, timeZone: timeZone)
            else { return nil }
            return ("(\(a.0) OR \(b.0))", a.1 + b.1)
        case .not:
            return nil
        case .comparison(.key(.contentType), .equal, .string(let text, let modifiers))
        where modifiers.isEmpty && !text.contains(where: { "*?\\".contains($0) }):
            return ("items.content_type = ?", [.text(text)])
        case .comparison(.key(let key), let op, let value):
            guard let column = dateColumns[key], let date = date(value) else { return nil }
            let sqlOperator =
                switch op {
                case .equal: "="
                case .notEqual: "<>"
                default: op.rawValue
                }
            return ("\(column) \(sqlOperator) ?", [.real(date.timeIntervalSince1970)])
        case .inRange(.key(let key), let low, let high):
            guard let column = dateColumns[key], let low = date(low), let high = date(high) else { return nil }
            return ("\(column) BETWEEN ? AND ?", [.real(low.timeIntervalSince1970), .real(high.timeIntervalSince1970)])
        default:
            return nil
        }
    }

    /// The items with these identifiers that are in the index and not expired, with their full text.
    package func items(withIdentifiers identifiers: [ItemIdentifier]) throws -> [(SearchableItem, ItemOrigin, Date)] {
        let statement = try connection.cached(
            """
            SELECT \(Self.itemColumns), items.body FROM items WHERE items.identifier = ? AND items.expires > ?
            """)
        return try identifiers.compactMap { identifier in
            try statement.firstRow([.text(identifier.rawValue), .real(now.timeIntervalSince1970)]) { row in
                try Self.decodeItem(row, textContent: row.optionalText(10))
            }
        }
    }

    /// Every item that is searchable now, with its full text and origin, in identifier order.
    package func allItems() throws -> [(SearchableItem, ItemOrigin, Date)] {
        try connection.cached(
            "SELECT \(Self.itemColumns), items.body FROM items WHERE items.expires > ? ORDER BY identifier"
        )
        .rows([.real(now.timeIntervalSince1970)]) { row in try Self.decodeItem(row, textContent: row.optionalText(10)) }
    }

    /// How many items are searchable now.
    package func count() throws -> Int {
        // Every item less the expired ones: SQLite counts the first from its smallest index and finds the
        // others through the partial index, where `expires > ?` read every row (52 ms at 100,000 items).
        let all = try connection.scalarInt("SELECT count(*) FROM items") ?? 0
        let expired =
            try connection.scalarInt(
                "SELECT count(*) FROM items WHERE \(Self.hasExpired)", [.real(now.timeIntervalSince1970)]) ?? 0
        return all - expired
    }

    package func clientState() throws -> Data? {
        guard case .blob(let bytes)? = try connection.scalar("SELECT state FROM client_state WHERE id = 1") else {
            return nil
        }
        return Data(bytes)
    }

    package func meta(_ key: String) throws -> String? {
        guard case .text(let value)? = try connection.scalar("SELECT value FROM meta WHERE key = ?", [.text(key)])
        else { return nil }
        return value
    }
}

extension SQLiteIndexReader {
    package func vocabularyDocuments(ofAny words: [String]) throws -> Int64 {
        try connection.cached(
            """
            SELECT coalesce(max(documents), 0) FROM json_each(?) JOIN vocabulary
                ON letter = substr(value, 1, 1) AND length = length(value) AND word = value
            """
        )
        .firstRow([.text(JSON.array(words.map(JSON.string)).serialized())]) { $0.int64(0) } ?? 0
    }

    package func vocabulary(beginningWith first: String, lengths: ClosedRange<Int>, heldByMoreThan documents: Int64)
        throws
        -> [(word: String, documents: Int64)]
    {
        // Each length as its own value (`IN`): the table is in the order of letter, length and token, so
        // each length is one range of it.
        try connection.cached(
            """
            SELECT word, documents FROM vocabulary WHERE letter = ?1 AND length IN (SELECT value FROM json_each(?2))
                AND documents > ?3
            ORDER BY word
            """
        ).rows([.text(first), .text(JSON.array(lengths.map { .number(Double($0)) }).serialized()), .integer(documents)])
        {
            ($0.text(0), $0.int64(1))
        }
    }

    /// The first `sample` items that have a word beginning with `prefix`, each with those words and its
    /// title when the title has one: what completions are made of, item by item, so that each item can be
    /// checked with its owner before anything of it is suggested.
    ///
    /// FTS5's prefix query finds the items; its `highlight()` of those items gives back the very words that
    /// matched, as written (the index's vocabulary, which holds stems too, only corrects a typo in the
    /// prefix: ``IndexReader/correctedPrefix(of:)``).
    ///
    /// A prefix that at least a quarter of the items added last have ("th", "s") is answered from those
    /// items instead: FTS5 merges the postings of every word that begins with the prefix before it
    /// returns a row, which took 30–60 ms at 100,000 items for one or two letters.
    package func completionSources(of prefix: String, sample: Int) throws -> [CompletionSource] {
        let cleaned = String(
            String.UnicodeScalarView(prefix.unicodeScalars.filter { $0 != "\"" && !DisplayText.isUnsafe($0) }))
        guard FTSPattern.isSearchable(Substring(cleaned)), !cleaned.contains(where: \.isWhitespace) else { return [] }
        let lowered = cleaned.lowercased()
        if let common = try completionsAmongLastAdded(of: lowered, sample: sample) { return common }
        let expression = "\"" + cleaned + "\" *"
        return try connection.cached(
            """
            SELECT \(Self.itemColumns), highlight(items_text, 0, char(1), char(2)), snippet(items_text, -1, char(1), char(2), '', 12)
            FROM items_text JOIN items ON items.id = items_text.rowid
            WHERE items_text MATCH ? AND items.expires > ? LIMIT ?
            """
        ).rows([.text(expression), .real(now.timeIntervalSince1970), .integer(Int64(sample))]) {
            row -> CompletionSource in
            let (item, origin, indexed) = try Self.decodeItem(row)
            let title = row.text(10)
            var words = Set<String>()
            for text in [title, row.text(11)] {
                for marked in text.split(separator: "\u{1}", omittingEmptySubsequences: false).dropFirst() {
                    guard let end = marked.firstIndex(of: "\u{2}") else { continue }
                    let word = marked[..<end].lowercased()
                    if word.hasPrefix(lowered) { words.insert(word) }
                }
            }
            let shownTitle =
                title.contains("\u{1}")
                ? String(title.unicodeScalars.filter { $0 != "\u{1}" && $0 != "\u{2}" }.map(Character.init)) : nil
            return CompletionSource(item: item, origin: origin, indexedAt: indexed, words: words, title: shownTitle)
        }
    }

    /// Completions of `prefix` (lowercased) from the titles, keywords, people, descriptions and first
    /// 2,000 characters of text of the last `sample` items added (by row id: an update keeps its row),
    /// item by item; or `nil` when fewer than a quarter of those items have such a word (or there are
    /// fewer than 50 items), where FTS5's prefix query is cheap and sees every item.
    private func completionsAmongLastAdded(of prefix: String, sample: Int) throws -> [CompletionSource]? {
        var sources: [CompletionSource] = []
        var read = 0
        try connection.cached(
            """
            SELECT \(Self.itemColumns), items.title, items.keywords, items.people, items.description, substr(items.body, 1, 2000) FROM items
            WHERE items.expires > ? ORDER BY items.id DESC LIMIT ?
            """
        ).each([.real(now.timeIntervalSince1970), .integer(Int64(sample))]) { row in
            read += 1
            var seen = Set<String>()
            var title: String?
            for column in Int32(10)...14 {
                guard let text = row.optionalText(column) else { continue }
                let before = seen.count
                CompletionSource.forEachWord(in: text, beginning: prefix) { seen.insert($0) }
                if column == 10, seen.count > before { title = text }
            }
            if !seen.isEmpty {
                let (item, origin, indexed) = try Self.decodeItem(row)
                sources.append(
                    CompletionSource(item: item, origin: origin, indexedAt: indexed, words: seen, title: title))
            }
            return true
        }
        return read >= 50 && sources.count * 4 >= read ? sources : nil
    }
}
