import Foundation
import ReplicaSQLite
import ReplicaText
import Testing

/// A store's SQLite files as the kill and fault tests check them: with SQLite's own integrity checks,
/// not through replica's code.
enum StoreFiles {
    /// Opens the database at `path` (never creating it) and expects it sound: SQLite's `integrity_check`,
    /// and for an index, FTS5's `integrity-check` with rank 1, which also compares the full-text index
    /// with the rows it indexes. Returns the connection, for the test's own reads.
    @discardableResult
    static func expectSound(_ path: String, _ what: String) throws -> Connection {
        var options = Connection.Options()
        options.create = false
        let connection = try Connection(path: path, options: options)
        let integrity = try connection.prepare("PRAGMA integrity_check").rows { $0.text(0) }
        #expect(integrity == ["ok"], "\(what): \(path): \(integrity)")
        let isIndex = try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'items_text'") == 1
        if isIndex {
            do {
                try connection.execute("INSERT INTO items_text(items_text, rank) VALUES ('integrity-check', 0)")
            } catch {
                Issue.record("\(what): \(path): the full-text index is damaged: \(error)")
            }
            try expectWordsMatchRows(connection, "\(what): \(path)")
            try expectRankingListsMatch(connection, "\(what): \(path)")
        }
        return connection
    }

    /// The full-text index holds exactly the words of its rows, each row's stemmed for the language it
    /// records (what FTS5's `integrity-check` with rank 1 checks of a table whose rows are all stemmed
    /// alike): every (word, row, column, position) FTS5 keeps, against those the analyzer makes.
    static func expectWordsMatchRows(_ connection: Connection, _ what: String) throws {
        let tokenizer = try FTS5Tokenizer("replica")
        let columns = ["title", "keywords", "people", "description", "body"]
        var expected: [String] = []
        try connection.prepare("SELECT id, language, \(columns.joined(separator: ", ")) FROM items").each { row in
            TextAnalyzer.withDocumentLanguage(row.optionalText(1)) {
                for (index, column) in columns.enumerated() {
                    for token in tokenizer.tokens(in: row.text(Int32(index + 2))) {
                        expected.append("\(token.text) \(row.int64(0)) \(column) \(token.position)")
                    }
                }
            }
            return true
        }
        try connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.check_instances USING fts5vocab(main, items_text, instance)")
        defer { try? connection.execute("DROP TABLE IF EXISTS temp.check_instances") }
        let stored = try connection.prepare("SELECT term, doc, col, offset FROM temp.check_instances").rows {
            "\($0.text(0)) \($0.int64(1)) \($0.text(2)) \($0.int64(3))"
        }
        let missing = Set(expected).subtracting(stored)
        let extra = Set(stored).subtracting(expected)
        #expect(
            missing.isEmpty && extra.isEmpty && stored.count == expected.count,
            "\(what): the full-text index does not match its rows: \(missing.count) words missing, \(extra.count) extra"
        )
    }

    /// An index's ranking lists, when built, agree with FTS5: each item unchanged since the build is in
    /// the list of every listed word it has and of no other, with FTS5's weighted frequency (title 10,
    /// keywords and people 5, description 2, body 1) and its length in tokens. Decoded here, not by
    /// replica's code.
    static func expectRankingListsMatch(_ connection: Connection, _ what: String) throws {
        guard try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'ranking_state'") == 1,
            try connection.scalarInt("SELECT count(*) FROM ranking_state") == 1
        else { return }
        let changed = Set(try connection.prepare("SELECT id FROM ranking_changes").rows { $0.int64(0) })
        func numbers(_ bytes: [UInt8]) -> [Int64] {
            var values: [Int64] = []
            var value: UInt64 = 0
            var shift: UInt64 = 0
            for byte in bytes {
                value |= UInt64(byte & 0x7f) << shift
                if byte & 0x80 == 0 {
                    values.append(Int64(bitPattern: value))
                    value = 0
                    shift = 0
                } else {
                    shift += 7
                }
            }
            return values
        }
        struct Posting: Equatable {
            var frequency: Int64
            var length: Int64
        }
        var listed: [String: [Int64: Posting]] = [:]
        for (term, entries) in try connection.prepare("SELECT term, entries FROM ranking_lists ORDER BY term, tier")
            .rows([], { ($0.text(0), $0.blob(1)) })
        {
            let values = numbers(entries)
            if listed[term] == nil { listed[term] = [:] }
            var rowID: Int64 = 0
            for start in stride(from: 0, to: values.count - 2, by: 3) {
                rowID += values[start]
                if !changed.contains(rowID) {
                    listed[term, default: [:]][rowID] = Posting(frequency: values[start + 1], length: values[start + 2])
                }
            }
        }
        var lengths: [Int64: Int64] = [:]
        for (rowID, sizes) in try connection.prepare("SELECT id, sz FROM items_text_docsize").rows(
            [], { ($0.int64(0), $0.blob(1)) })
        {
            // FTS5's sizes are SQLite varints (big-endian groups); an item's columns are short here.
            var total: Int64 = 0
            var value: Int64 = 0
            for byte in sizes {
                value = (value << 7) | Int64(byte & 0x7f)
                if byte & 0x80 == 0 {
                    total += value
                    value = 0
                }
            }
            lengths[rowID] = total
        }
        try connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.checked_instances USING fts5vocab(main, items_text, instance)")
        let weights: [String: Int64] = ["title": 10, "keywords": 5, "people": 5, "description": 2, "body": 1]
        var actual: [String: [Int64: Posting]] = [:]
        for (term, rowID, column) in try connection.prepare("SELECT term, doc, col FROM temp.checked_instances").rows(
            [], { ($0.text(0), $0.int64(1), $0.text(2)) })
        where listed[term] != nil && !changed.contains(rowID) {
            actual[term, default: [:]][rowID, default: Posting(frequency: 0, length: lengths[rowID] ?? -1)].frequency +=
                weights[column] ?? 0
        }
        let wrong = listed.keys.filter { listed[$0] != actual[$0] ?? [:] }.sorted()
        #expect(
            wrong.isEmpty,
            "\(what): the ranking lists of \(wrong.count) words disagree with the full-text index, first \(wrong.prefix(3))"
        )
    }
}
