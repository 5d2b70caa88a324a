import Foundation
import ReplicaIndex
import ReplicaPostgres
import ReplicaSQLite
import ReplicaSQLiteStore
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// An item's words, made on the client in `tsvector`'s binary format, are what PostgreSQL's text input
/// makes of the literal replica sent before (the reference below): the same lexemes, positions and
/// weights, so an index written either way matches and ranks the same.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct PostgresIndexTextTests {
    let database: PostgresTestDatabase
    let connection: PostgresConnection

    init() throws {
        database = try PostgresTestServer.makeDatabase()
        connection = try PostgresConnection(url: database.url)
    }

    /// The `tsvector` literal of five columns as replica made it before the binary form, from the tokens
    /// FTS5's tokenizer `replica` makes of them in a SQLite index (the store makes its own with the
    /// analyzer, without SQLite: the two must agree): every token's lexeme with its first 256 positions
    /// (past the largest position, the largest) and its column's weight, the lexemes met first kept while
    /// the literal stays under 900,000 bytes.
    static func referenceLiteral(_ columns: [String]) -> (literal: String, length: Int) {
        var places: [String: [(position: Int, weight: Character)]] = [:]
        var firstSeen: [String: Int] = [:]
        var base = 1
        var length = 0
        for (column, text) in columns.enumerated() {
            let tokens = try! IndexTokenizer.shared.get().tokens(in: text)
            length += tokens.last.map { $0.position + 1 } ?? 0
            for token in tokens {
                let word = PostgresIndexText.lexeme(token.text)
                if places[word] == nil { firstSeen[word] = firstSeen.count }
                places[word, default: []].append(
                    (min(base + token.position, 16_383), PostgresIndexText.columns[column].weight))
            }
            base += (tokens.last.map { $0.position + 1 } ?? 0) + 64
        }
        var entries: [(lexeme: String, entry: String)] = []
        var size = 0
        for lexeme in places.keys.sorted(by: { firstSeen[$0]! < firstSeen[$1]! }) {
            let quoted =
                "'" + lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''")
                + "'"
            let entry =
                quoted + ":" + places[lexeme]!.prefix(256).map { "\($0.position)\($0.weight)" }.joined(separator: ",")
            size += entry.utf8.count + 1
            if size > 900_000 { break }
            entries.append((lexeme, entry))
        }
        return (entries.map(\.entry).joined(separator: " "), length)
    }

    /// Expects the binary words of `columns` to equal the reference literal's, on the server.
    func expectSameWords(_ columns: [String], _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let words = PostgresIndexText.vector(
            title: columns[0], keywords: columns[1], people: columns[2], description: columns[3],
            body: columns[4], language: nil)
        let reference = Self.referenceLiteral(columns)
        #expect(words.length == reference.length, comment, sourceLocation: sourceLocation)
        let result = try connection.execute(
            "SELECT $1::tsvector = $2::tsvector, length($1::tsvector), length($2::tsvector)",
            [words.value, .text(reference.literal)])
        #expect(
            result.bool(0, 0) == true,
            "\(comment): \(result.int(0, 1) ?? -1) lexemes made, \(result.int(0, 2) ?? -1) in the reference",
            sourceLocation: sourceLocation)
    }

    /// A text array parameter's literal reads back on the server element by element, quotes,
    /// backslashes, braces, commas and spaces included.
    @Test func textArrayLiteralsReadBackElementByElement() throws {
        let texts = [
            "", "plain", "été 日本語", "'single' and \"double\"", "back\\slash \\N", "{braces}, commas", "NULL",
            "  spaced  ",
        ]
        for values in [[], texts, [texts[3]]] {
            let result = try connection.execute(
                "SELECT element FROM unnest($1::text[]) WITH ORDINALITY AS u(element, ordinal) ORDER BY ordinal",
                [SQLBuilder.textArray(values)])
            #expect((0..<result.rowCount).map { result.string($0, 0) } == values.map(Optional.some), "\(values)")
        }
    }

    @Test func randomItemsGetTheWordsTheirLiteralGave() throws {
        var generator = SplitMix(seed: 2026)
        let vocabulary = [
            "launch", "launched", "running", "ran", "it's", "o'clock", "back\\slash", "café", "Zürich", "日本語", "ﬁle",
            "naïve", "nul\u{0}byte", "non\u{FFFF}char", "the", "a", "42", "3.14", "e-mail", "x", "ĳ", "Ωmega", "🙂",
            "résumé", "resume", "UPPER", "MiXeD",
        ]
        for trial in 0..<200 {
            let columns = (0..<5).map { _ in
                (0..<Int.random(in: 0...30, using: &generator)).map { _ in vocabulary.randomElement(using: &generator)!
                }
                .joined(separator: [" ", ", ", "\n", " — "].randomElement(using: &generator)!)
            }
            try expectSameWords(columns, "trial \(trial)")
        }
    }

    @Test func longItemsKeepTheFirstPositionsAndTheLargest() throws {
        // One word 300 times (more than 256 positions), and a body past the largest position.
        let repeated = Array(repeating: "again", count: 300).joined(separator: " ")
        let long = (0..<20_000).map { $0 % 7 == 0 ? "late" : "w\($0 % 500)" }.joined(separator: " ")
        try expectSameWords([repeated, "again", "", "again late", long], "repeats and positions past 16,383")
        // Past the largest position in the title, then the same word in the keywords: one position, weight A.
        try expectSameWords([long, "late w3", "late", "", "late"], "a word at the largest position in several columns")
    }

    @Test func anItemWithTooManyWordsKeepsThoseItHasFirst() throws {
        // About 1.3 MB of literal: only the words met first fit.
        let body = (0..<120_000).map { "word\($0)x" }.joined(separator: " ")
        try expectSameWords(["title", "", "", "", body], "more distinct words than a tsvector holds")
    }
}
