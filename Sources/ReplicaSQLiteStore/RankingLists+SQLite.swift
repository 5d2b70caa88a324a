import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import Synchronization

// The ranking lists on SQLite: built from FTS5's own records, kept beside them in the index's file
// (`ranking_state`, `ranking_lists`, `ranking_changes`: migrations/index/0010 and 0011), and read by a
// search through ``SQLiteRankingSource``.
extension RankingLists {
    /// The column weights of the `rank` setting in migrations/index/0001-items.sql, in column order, and as
    /// `replica_frequencies`' arguments in column order.
    static let columnWeights: [(column: String, weight: Int64)] = [
        ("title", 10), ("keywords", 5), ("people", 5), ("description", 2), ("body", 1),
    ]
    static let weightArguments = "10.0, 5.0, 5.0, 2.0, 1.0"

    /// A `replica_frequencies` blob in `column` of `row`: the row's length, then each phrase's weighted frequency.
    static func frequencies(_ row: Statement, column: Int32) -> [Double] {
        row.withBlob(column) { raw in
            (0..<raw.count / 8).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: Double.self) }
        }
    }

    // MARK: FTS5's own records

    /// FTS5's row count and token count (all columns), from its averages record (`%_data` row 1).
    static func totals(_ connection: Connection) throws -> State? {
        guard
            let record = try connection.cached("SELECT block FROM items_text_data WHERE id = 1").firstRow(
                [], { $0.blob(0) })
        else {
            return State(rows: 0, tokens: 0)
        }
        var offset = 0
        guard let rows = varint(record, &offset) else { return nil }
        var tokens: Int64 = 0
        while offset < record.count {
            guard let column = varint(record, &offset) else { return nil }
            tokens += column
        }
        return State(rows: rows, tokens: tokens)
    }

    /// An SQLite/FTS5 varint: big-endian groups of 7 bits, the ninth byte whole.
    static func varint(_ bytes: [UInt8], _ offset: inout Int) -> Int64? {
        var value: UInt64 = 0
        for index in 0..<9 {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            if index == 8 { return Int64(bitPattern: (value << 8) | UInt64(byte)) }
            value = (value << 7) | UInt64(byte & 0x7f)
            if byte & 0x80 == 0 { return Int64(bitPattern: value) }
        }
        return nil
    }

    // MARK: Building

    /// Builds the lists from the index as it is, replacing any, inside the caller's write transaction.
    static func build(
        _ connection: Connection, now: Date, firstTier: Int = firstTier, threshold: Int? = nil, scan: Scan = .pages
    ) throws -> Summary {
        try clear(connection)
        try connection.execute("INSERT INTO items_text(items_text) VALUES ('optimize')")
        // FTS5 keeps its totals in memory until a savepoint or the commit writes them: after a
        // 'delete-all' in this transaction (an old index's words made again), the record holds nothing yet.
        try connection.execute("SAVEPOINT ranking_lists_totals")
        try connection.execute("RELEASE ranking_lists_totals")
        guard let totals = try totals(connection) else {
            throw ReplicaError(.corruptIndex, "the full-text index's totals could not be read; rebuild the index")
        }
        let threshold = threshold ?? Self.threshold(rows: totals.rows)
        var summary = Summary(terms: 0, entries: 0)
        if totals.rows > 0 {
            summary = try writeLists(connection, totals: totals, firstTier: firstTier, threshold: threshold, scan: scan)
        }
        try connection.cached(
            "INSERT INTO ranking_state(id, rows, tokens, first_tier, threshold, built) VALUES (1, ?, ?, ?, ?, ?)"
        )
        .run([
            .integer(totals.rows), .integer(totals.tokens), .integer(Int64(firstTier)), .integer(Int64(threshold)),
            .real(now.timeIntervalSince1970),
        ])
        return summary
    }

    /// Whether the index keeps lists, so that its writes must be recorded (``recordChange(_:_:)``).
    static func areKept(_ connection: Connection) throws -> Bool {
        try connection.cached("SELECT 1 FROM ranking_state").firstRow([], { _ in true }) == true
    }

    /// Records a row the lists do not know, written in the current transaction: searches rank it through
    /// FTS5 until the next build. The writer calls it for every row whose text it indexes (new or
    /// rewritten); a trigger records deleted ones (migrations 0010 and 0011).
    static func recordChange(_ id: Int64, _ connection: Connection) throws {
        try connection.cached("INSERT OR IGNORE INTO ranking_changes(id) VALUES (?)").run([.integer(id)])
    }

    /// Removes the lists: searches score every match until they are built again.
    static func clear(_ connection: Connection) throws {
        // The state first, so that nothing records changes for what follows (the DELETE trigger tests it).
        try connection.execute("DELETE FROM ranking_state")
        try connection.execute("DELETE FROM ranking_changes")
        try connection.execute("DELETE FROM ranking_lists")
    }

    /// How a build reads every posting of FTS5's index.
    package enum Scan: Sendable {
        /// FTS5's pages, decoded in C, when the index is one segment; through fts5vocab otherwise.
        case pages
        /// fts5vocab's `instance` table: an SQL row for each occurrence, the way any SQLite reads.
        case vocabulary
    }

    /// One pass over FTS5's postings (term, item, weighted frequency), in term order.
    private static func writeLists(_ connection: Connection, totals: State, firstTier: Int, threshold: Int, scan: Scan)
        throws -> Summary
    {
        // Each item's length in tokens, from FTS5's own sizes (`%_docsize`: a varint per column).
        var sized: [(id: Int64, length: Int64)] = []
        try connection.prepare("SELECT id, sz FROM items_text_docsize").each { row in
            let sizes = row.blob(1)
            var offset = 0
            var total: Int64 = 0
            while offset < sizes.count, let size = varint(sizes, &offset) { total += size }
            sized.append((row.int64(0), total))
            return true
        }
        let length = lengths(byRowID: sized)
        let averageLength = Double(totals.tokens) / Double(totals.rows)
        let insert = try connection.prepare(
            "INSERT INTO ranking_lists(term, tier, documents, floor, entries) VALUES (?, ?, ?, ?, ?)")
        var summary = Summary(terms: 0, entries: 0)

        func write(_ word: Connection.WordPostings) throws {
            let items = Array(word.items)
            let frequencies = Array(word.frequencies)
            let term = String(decoding: word.term, as: UTF8.self)
            for tier in tiers(
                items: items, frequencies: frequencies, length: length, averageLength: averageLength,
                firstTier: firstTier)
            {
                try insert.run([
                    .text(term), .integer(tier.tier), .integer(Int64(items.count)), .real(tier.floor),
                    .blob(tier.entries),
                ])
            }
            summary.terms += 1
            summary.entries += items.count
        }
        // FTS5's own pages, decoded once each, when `optimize` left one segment; else (another SQLite's
        // format, say) one SQL row for each occurrence through fts5vocab, several times slower.
        if scan == .pages {
            try connection.execute("SAVEPOINT ranking_lists_pages")
            let read = try connection.eachWeightedPostingOfOneSegment(
                dataTable: "items_text_data", weights: columnWeights.map(\.weight),
                threshold: threshold, write)
            if read {
                try connection.execute("RELEASE ranking_lists_pages")
                return summary
            }
            try connection.execute("ROLLBACK TO ranking_lists_pages")
            try connection.execute("RELEASE ranking_lists_pages")
            summary = Summary(terms: 0, entries: 0)
        }
        try connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.items_text_instances USING fts5vocab(main, items_text, instance)")
        defer { try? connection.execute("DROP TABLE IF EXISTS temp.items_text_instances") }
        try connection.eachWeightedPosting(
            vocabulary: "temp.items_text_instances", weights: columnWeights, threshold: threshold, write)
        return summary
    }

}

/// The ranking lists of one SQLite index and its FTS5 table, for one search: its words as phrases of a
/// `MATCH` expression, its filters (`AND …` clauses on `items`) and the time it searches at.
struct SQLiteRankingSource: RankingListSource {
    let connection: Connection
    /// The search's phrases, in order: each the one word FTS5 stores for it, or its words as
    /// ``RankingLists/key(ofPhrase:)`` names them (`token`), and the phrase as typed, quoted for `MATCH`
    /// (`expression`).
    let phrases: [(token: String, expression: String)]
    /// The phrases OR-ed, as FTS5 matches them.
    let expression: String
    let now: Double
    let filters: String
    let filterArguments: [SQLValue]

    func built() throws -> (state: RankingLists.State, threshold: Int)? {
        try connection.cached("SELECT rows, tokens, threshold FROM ranking_state WHERE id = 1")
            .firstRow([], { (RankingLists.State(rows: $0.int64(0), tokens: $0.int64(1)), Int($0.int64(2))) })
    }

    func firstTiers(of tokens: [String]) throws -> [RankingLists.Tier?] {
        try tokens.map { try tier(0, of: $0) }
    }

    func tier(_ number: Int64, of token: String) throws -> RankingLists.Tier? {
        try connection.cached("SELECT documents, floor, entries FROM ranking_lists WHERE term = ? AND tier = ?")
            .firstRow([.text(token), .integer(number)]) {
                RankingLists.Tier(documents: $0.int64(0), floor: $0.double(1), entries: $0.blob(2))
            }
    }

    func tiers(of token: String) throws -> [[UInt8]] {
        try connection.cached("SELECT entries FROM ranking_lists WHERE term = ? ORDER BY tier").rows([.text(token)]) {
            $0.blob(0)
        }
    }

    func changes(limit: Int) throws -> [Int64] {
        try connection.cached("SELECT id FROM ranking_changes ORDER BY id LIMIT ?").rows([.integer(Int64(limit))]) {
            $0.int64(0)
        }
    }

    func totals() throws -> RankingLists.State? {
        try RankingLists.totals(connection)
    }

    func changedNumbers(_ changes: [Int64]) throws -> [(rowID: Int64, numbers: [Double])] {
        // From FTS5 itself, one by one (a seek per word and segment each: one pass over the words'
        // matches would read every item that has them).
        var numbers: [(rowID: Int64, numbers: [Double])] = []
        try connection.cached(
            """
            SELECT items_text.rowid, replica_frequencies(items_text, \(RankingLists.weightArguments)) FROM ranking_changes CROSS JOIN items_text
            WHERE items_text.rowid = ranking_changes.id AND items_text MATCH ?
            """
        ).each([.text(expression)]) { row in
            numbers.append((row.int64(0), RankingLists.frequencies(row, column: 1)))
            return true
        }
        return numbers
    }

    func postings(ofWord word: Int, limit: Int) throws -> [(rowID: Int64, frequency: Double, length: Double)] {
        try connection.cached(
            "SELECT rowid, replica_frequencies(items_text, \(RankingLists.weightArguments)) FROM items_text WHERE items_text MATCH ? LIMIT ?"
        )
        .rows([.text(phrases[word].expression), .integer(Int64(limit))]) { row in
            let numbers = RankingLists.frequencies(row, column: 1)
            return (row.int64(0), numbers.count > 1 ? numbers[1] : 0, numbers.first ?? 0)
        }
    }

    func everyItemPasses() throws -> Bool {
        try filters.isEmpty
            && connection.cached("SELECT 1 FROM items WHERE \(SQLiteIndexReader.hasExpired) LIMIT 1").firstRow(
                [.real(now)], { _ in true }) == nil
    }

    func passing(_ rowIDs: [Int64]) throws -> Set<Int64> {
        var passed = Set<Int64>()
        try connection.cached(
            "SELECT items.id FROM items WHERE items.id IN (SELECT value FROM json_each(?)) AND items.expires > ?\(filters)"
        )
        .each([.text("[" + rowIDs.map { String($0) }.joined(separator: ",") + "]"), .real(now)] + filterArguments) {
            row in
            passed.insert(row.int64(0))
            return true
        }
        return passed
    }
}

/// What a reader's last search through the ranking lists learnt, for the ranking's second step: the
/// words it searched (as their `MATCH` expressions) and, for each item it returned, which of them it has.
package final class RankedWords: Sendable {
    private let state = Mutex<(terms: [String], present: [Int64: [Bool]])>(([], [:]))

    package init() {}

    func record(terms: [String], present: [Int64: [Bool]]) {
        state.withLock { $0 = (terms, present) }
    }

    /// Whether every one of `rowIDs` was returned by the last search through the lists.
    func knows(_ rowIDs: [Int64]) -> Bool {
        state.withLock { state in !state.present.isEmpty && rowIDs.allSatisfy { state.present[$0] != nil } }
    }

    /// How many of `terms` (the first of the words searched) each of `rowIDs` has, when known for all.
    func counts(_ terms: [String], in rowIDs: [Int64]) -> [Int64: Int]? {
        state.withLock { state in
            guard terms.count <= state.terms.count, Array(state.terms.prefix(terms.count)) == terms else { return nil }
            var counts: [Int64: Int] = [:]
            for rowID in rowIDs {
                guard let present = state.present[rowID] else { return nil }
                counts[rowID] = present.prefix(terms.count).filter { $0 }.count
            }
            return counts
        }
    }
}

extension SQLiteIndexReader {
    package func knownWordsPresent(_ terms: [FTSPattern.Term], in rowIDs: [Int64]) -> [Int64: Int]? {
        rankedWords.counts(terms.map(\.expression), in: rowIDs)
    }

    package func rankingListsAreStale(minimumItems: Int) throws -> Bool {
        guard try connection.scalar("SELECT 1 FROM ranking_state") != nil else {
            return try connection.scalarInt(
                "SELECT count(*) FROM (SELECT 1 FROM items LIMIT ?)", [.integer(Int64(minimumItems))]) ?? 0
                >= minimumItems
        }
        return try connection.scalarInt(
            "SELECT count(*) FROM (SELECT 1 FROM ranking_changes LIMIT ?)",
            [.integer(Int64(RankingLists.maximumChanges + 1))]) ?? 0 > RankingLists.maximumChanges
    }
}
