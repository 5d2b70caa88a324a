import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaSQLite

/// An item's words as the PostgreSQL store keeps them: FTS5's own tokens (so both stores match the same
/// items), in a `tsvector` whose weights say the column (A title, B keywords and people, C description, D
/// body: BM25's column weights 10, 5, 5, 2 and 1) and whose positions keep the columns apart.
package enum PostgresIndexText {
    /// The tokenizer the SQLite index's FTS5 table is made with (``IndexTokenizer``).
    package static var tokenizer: FTS5Tokenizer {
        do {
            return try IndexTokenizer.shared.get()
        } catch {
            fatalError("SQLite was built without FTS5's porter and unicode61 tokenizers: \(error)")
        }
    }

    /// The five full-text columns, in FTS5's order, with their `tsvector` weight and BM25 weight.
    package static let columns: [(weight: Character, bm25: Double)] = [("A", 10), ("B", 5), ("B", 5), ("C", 2), ("D", 1)]

    /// How far apart two columns' positions are kept: more than any phrase or closeness the search asks
    /// for spans (its NEAR distance is at most 2 × 12 + 4), so positions alone tell that two words are in
    /// one column and how far apart.
    static let columnGap = 64

    /// The largest position a `tsvector` keeps; PostgreSQL stores later ones as this.
    static let maximumPosition = 16_383

    /// The `tsvector` literal of an item's five columns, and its length in words (BM25's document length,
    /// as FTS5 counts it: every token of every column).
    package static func vector(title: String, keywords: String, people: String, description: String, body: String)
        -> (literal: String, length: Int) {
        var places: [String: [(position: Int, weight: Character)]] = [:]
        var base = 1
        var length = 0
        var firstSeen: [String: Int] = [:]
        for (column, text) in [title, keywords, people, description, body].enumerated() {
            let tokens = tokenizer.tokens(in: text)
            length += tokens.count
            for token in tokens {
                let word = lexeme(token.text)
                if places[word] == nil { firstSeen[word] = firstSeen.count }
                places[word, default: []].append((min(base + token.position, maximumPosition), columns[column].weight))
            }
            base += (tokens.last.map { $0.position + 1 } ?? 0) + columnGap
        }
        // A `tsvector` holds at most 1 MB: an item with more distinct words keeps those it has first (the
        // literal is larger than the stored form, so the cut is on the safe side), and BM25 still counts
        // every word in its length.
        var entries: [(lexeme: String, entry: String)] = []
        var size = 0
        for lexeme in places.keys.sorted(by: { firstSeen[$0]! < firstSeen[$1]! }) {
            let entry = quoted(lexeme) + ":" + places[lexeme]!.prefix(256).map { "\($0.position)\($0.weight)" }.joined(separator: ",")
            size += entry.utf8.count + 1
            if size > maximumLiteralBytes { break }
            entries.append((lexeme, entry))
        }
        return (entries.sorted { $0.lexeme < $1.lexeme }.map(\.entry).joined(separator: " "), length)
    }

    /// The most bytes of `tsvector` literal an item gets: under PostgreSQL's 1 MB for the stored form.
    static let maximumLiteralBytes = 900_000

    /// The most bytes of one lexeme PostgreSQL keeps (it refuses longer words: "word is too long").
    static let maximumLexemeBytes = 2046

    /// A token as a lexeme: itself, or, for a token longer than PostgreSQL keeps, its first 200 bytes
    /// and a digest of the whole, the same on the index's side and the query's, so the word is still found.
    package static func lexeme(_ token: String) -> String {
        guard token.utf8.count > maximumLexemeBytes else { return token }
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in token.utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var head = Substring(token)
        while head.utf8.count > 200 { head = head.dropLast() }
        return head + "~" + String(digest, radix: 16)
    }

    /// A lexeme as a `tsvector` or `tsquery` literal: in single quotes, quotes and backslashes escaped.
    package static func quoted(_ lexeme: String) -> String {
        "'" + lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// What one search term is, in the tokens the index holds: a word, a prefix, or a phrase of several
    /// tokens (its last a prefix when the term is one).
    package struct TermTokens: Hashable, Sendable {
        package var tokens: [String]
        package var prefix: Bool

        /// The term as a `tsquery`: `'word'`, `'pre':*`, or `'a' <-> 'b'`; `nil` for a term with no token.
        package var query: String? {
            guard !tokens.isEmpty else { return nil }
            return tokens.enumerated().map { index, token in
                quoted(token) + (prefix && index == tokens.count - 1 ? ":*" : "")
            }.joined(separator: " <-> ")
        }
    }

    /// A term of a search as FTS5 would tokenize it in a query.
    package static func tokens(of term: FTSPattern.Term) -> TermTokens {
        let (text, prefix): (String, Bool) = switch term {
        case .word(let text, let prefix), .phrase(let text, let prefix): (text, prefix)
        }
        return TermTokens(tokens: tokenizer.tokens(in: text, for: .query(prefix: prefix)).map { lexeme($0.text) }, prefix: prefix)
    }
}
