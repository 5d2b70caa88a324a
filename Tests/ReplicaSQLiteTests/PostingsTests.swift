import Foundation
import Testing

@testable import ReplicaSQLite

/// Reading an FTS5 table's postings, weighted by column: from its own pages when `optimize` left one
/// segment, through fts5vocab otherwise, the same words, items and frequencies either way.
@Suite struct PostingsTests {
    struct Word: Equatable {
        var term: String
        var items: [Int64]
        var frequencies: [Int64]
    }

    let connection: Connection

    init() throws {
        connection = try Connection(path: ":memory:")
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(a, b)")
        try connection.execute("CREATE VIRTUAL TABLE temp.t_instances USING fts5vocab(main, t, instance)")
    }

    /// Rows in two transactions: two segments, until `optimize` merges them. Some words are in every row,
    /// one fills a position list longer than a page, some are in both columns.
    func fill() throws {
        let insert = try connection.prepare("INSERT INTO t(rowid, a, b) VALUES (?, ?, ?)")
        for half in 0..<2 {
            try connection.transaction {
                for row in (half * 900)..<((half + 1) * 900) {
                    let words = (0..<(row % 13 + 2)).map { "w\(($0 * 7 + row) % 40)" }.joined(separator: " ")
                    let body =
                        row == 500 ? Array(repeating: "lang", count: 5_000).joined(separator: " ") : "common \(words)"
                    try insert.run([
                        .integer(Int64(row * 3 + 1)), .text(row % 4 == 0 ? "common title w\(row % 9)" : ""),
                        .text(body),
                    ])
                }
            }
        }
    }

    func fromPages(threshold: Int = 1) throws -> [Word]? {
        var words: [Word] = []
        let read = try connection.eachWeightedPostingOfOneSegment(
            dataTable: "t_data", weights: [3, 1], threshold: threshold
        ) { word in
            words.append(
                Word(
                    term: String(decoding: word.term, as: UTF8.self), items: Array(word.items),
                    frequencies: Array(word.frequencies)))
        }
        return read ? words : nil
    }

    func throughVocabulary(threshold: Int = 1) throws -> [Word] {
        var words: [Word] = []
        try connection.eachWeightedPosting(
            vocabulary: "temp.t_instances", weights: [("a", 3), ("b", 1)], threshold: threshold
        ) { word in
            words.append(
                Word(
                    term: String(decoding: word.term, as: UTF8.self), items: Array(word.items),
                    frequencies: Array(word.frequencies)))
        }
        return words
    }

    @Test func onePagesReadingIsFTS5vocabsReading() throws {
        try fill()
        #expect(try fromPages() == nil, "two segments were read as one")
        try connection.execute("INSERT INTO t(t) VALUES ('optimize')")
        let pages = try #require(try fromPages())
        let vocabulary = try throughVocabulary()
        #expect(pages.count == vocabulary.count)
        #expect(pages == vocabulary)
        let common = try #require(pages.first { $0.term == "common" })
        #expect(common.items.count == 1_800, "row 500 has it in its title only")
        #expect(common.frequencies[0] == 4, "in the title (3) and the body (1)")
        #expect(pages.first { $0.term == "lang" }?.frequencies == [5_000])
        // Words held by fewer items than the threshold are left out, the same way.
        #expect(try fromPages(threshold: 100) == throughVocabulary(threshold: 100))
        #expect(try fromPages(threshold: 100)?.contains { $0.term == "lang" } == false)
    }

    /// A damaged page is not read (and nothing is invented from it): the caller reads through fts5vocab,
    /// which reports the damage.
    @Test func aDamagedPageIsNotRead() throws {
        try fill()
        try connection.execute("INSERT INTO t(t) VALUES ('optimize')")
        try connection.execute(
            "UPDATE t_data SET block = x'0000' WHERE id = (SELECT max(id) FROM t_data WHERE id > 10 AND (id & (1 << 36)) = 0)"
        )
        #expect(try fromPages() == nil)
    }

    /// What the visitor throws stops the reading and comes out as it was.
    @Test func aVisitorsErrorStopsTheReading() throws {
        struct Stop: Error {}
        try fill()
        try connection.execute("INSERT INTO t(t) VALUES ('optimize')")
        var visited = 0
        #expect(throws: Stop.self) {
            _ = try connection.eachWeightedPostingOfOneSegment(dataTable: "t_data", weights: [3, 1], threshold: 1) {
                _ in
                visited += 1
                if visited == 3 { throw Stop() }
            }
        }
        #expect(visited == 3)
    }
}
