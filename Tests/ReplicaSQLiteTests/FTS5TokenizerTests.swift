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
        let made = texts.map { tokenizer.tokens(in: $0).map { FTS5Tokenizer.Token(text: $0.text, position: $0.position) }
            .sorted { ($0.position, $0.text) < ($1.position, $1.text) } }
        #expect(made == (try Self.storedWords(of: texts)))
        // Each word says where it is in the text.
        let text = "Running café's"
        let spans = tokenizer.tokens(in: text).map { String(decoding: Array(text.utf8)[$0.start..<$0.end], as: UTF8.self) }
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
