import Foundation
import Testing

@testable import ReplicaSQLite

@Suite struct FTS5TokenizerTests {
    static let specification = "porter unicode61 remove_diacritics 2"

    /// The words an FTS5 table with the same tokenizer stored for `text`, with their positions, as its
    /// `fts5vocab` instance table lists them.
    static func storedWords(of texts: [String]) throws -> [[FTS5Tokenizer.Token]] {
        var template = Array((NSTemporaryDirectory() + "/replica-fts5-XXXXXX").utf8CString)
        let folder = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!)! })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let connection = try Connection(path: folder + "/vocabulary.sqlite")
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '\(specification)')")
        try connection.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        for (number, text) in texts.enumerated() {
            try connection.execute("INSERT INTO t(rowid, body) VALUES (?, ?)", [.integer(Int64(number)), .text(text)])
        }
        var words = Array(repeating: [FTS5Tokenizer.Token](), count: texts.count)
        try connection.prepare("SELECT doc, term, offset FROM v").each { row in
            words[row.int(0)].append(FTS5Tokenizer.Token(text: row.text(1), position: row.int(2)))
            return true
        }
        return words.map { $0.sorted { ($0.position, $0.text) < ($1.position, $1.text) } }
    }

    @Test func makesTheWordsAnFTS5TableStores() throws {
        let texts = [
            "Running runners ran; the café's CRÊPES were crêpes",
            "garage/tyres sourdough's state-of-the-art résumé naïve Ångström",
            "Übergrößenträger 東京 タワー emoji 🙂 and numbers 3.14 2024-09-17 INV-2024-0917",
            "",
            "   \n\t  ",
            "connection connected connecting connects relational generalizations",
        ]
        let tokenizer = try FTS5Tokenizer(Self.specification)
        let made = texts.map {
            tokenizer.tokens(in: $0).map { FTS5Tokenizer.Token(text: $0.text, position: $0.position) }
                .sorted { ($0.position, $0.text) < ($1.position, $1.text) }
        }
        #expect(made == (try Self.storedWords(of: texts)))
        // Each word says where it is in the text.
        let text = "Running café's"
        let spans = tokenizer.tokens(in: text).map {
            String(decoding: Array(text.utf8)[$0.start..<$0.end], as: UTF8.self)
        }
        #expect(spans == ["Running", "café", "s"])
        #expect(tokenizer.tokens(in: "Running café").map(\.text) == ["run", "cafe"])
    }

    @Test func aQueryWordIsStemmedAsTheDocumentsAre() throws {
        let tokenizer = try FTS5Tokenizer(Self.specification)
        #expect(tokenizer.tokens(in: "connections", for: .query(prefix: false)).map(\.text) == ["connect"])
        #expect(tokenizer.tokens(in: "garage tyres", for: .query(prefix: false)).map(\.position) == [0, 1])
    }

    @Test func anUnknownTokenizerIsAnError() {
        #expect(throws: SQLiteError.self) { try FTS5Tokenizer("nonesuch") }
    }
}

/// The analyzer as FTS5's tokenizer `replica`, registered on every connection: words of every script
/// found, highlighted whole, by phrase and by prefix (not yet the tokenizer of replica's index tables).
@Suite struct AnalyzerTokenizerTests {
    @Test func theAnalyzerIsAnFTS5TokenizerOnEveryConnection() throws {
        var template = Array((NSTemporaryDirectory() + "/replica-analyzer-XXXXXX").utf8CString)
        let folder = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!)! })
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let connection = try Connection(path: folder + "/words.sqlite")
        try connection.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'replica')")
        for text in ["我们明天在北京开会讨论预算问题", "東京駅で新幹線の切符を買いました", "김치를 먹었다", "Die Häuser wurden im Winter renoviert"] {
            try connection.execute("INSERT INTO t(body) VALUES (?)", [.text(text)])
        }
        func found(_ query: String) throws -> [String] {
            var rows: [String] = []
            try connection.prepare("SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ? ORDER BY rowid").each([
                .text(query)
            ]) { row in
                rows.append(row.text(0))
                return true
            }
            return rows
        }
        #expect(try found("北京") == ["我们明天在[北京]开会讨论预算问题"])
        #expect(try found("\"北京 开会\"") == ["我们明天在[北京开会]讨论预算问题"])
        #expect(try found("北*") == ["我们明天在[北京]开会讨论预算问题"])
        #expect(try found("新幹線") == ["東京駅で[新幹線]の切符を買いました"])
        #expect(try found("幹線") == ["東京駅で[新幹線]の切符を買いました"], "a pair inside a longer word")
        #expect(try found("김치") == ["[김치를] 먹었다"])
        #expect(try found("hauser") == ["Die [Häuser] wurden im Winter renoviert"])
        // With a language, stems: "Haus" finds "Häuser", "connection" finds "connected".
        try connection.execute("CREATE VIRTUAL TABLE g USING fts5(body, tokenize = 'replica de')")
        try connection.execute("INSERT INTO g(body) VALUES ('Die Häuser wurden im Winter renoviert')")
        #expect(
            try connection.scalar("SELECT highlight(g, 0, '[', ']') FROM g WHERE g MATCH 'Haus'")
                == .text("Die [Häuser] wurden im Winter renoviert"))
        try connection.execute("CREATE VIRTUAL TABLE e USING fts5(body, tokenize = 'replica en')")
        try connection.execute("INSERT INTO e(body) VALUES ('the servers connected at night')")
        #expect(try connection.scalar("SELECT count(*) FROM e WHERE e MATCH 'connection server'") == .integer(1))
        #expect(throws: SQLiteError.self) {
            try connection.execute("CREATE VIRTUAL TABLE x USING fts5(body, tokenize = 'replica klingon')")
        }
        // A second connection to the same file reads the table: the tokenizer is on every connection.
        let other = try Connection(path: folder + "/words.sqlite")
        #expect(try other.scalar("SELECT count(*) FROM t WHERE t MATCH '预算'") == .integer(1))
    }
}
