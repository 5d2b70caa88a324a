import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaSQLite

/// An item's words as the PostgreSQL store keeps them: FTS5's own tokens (so both stores match the same
/// items), in a `tsvector` whose weights say the column (A title, B keywords and people, C description, D
/// body: BM25's column weights 10, 5, 5, 2 and 1) and whose positions keep the columns apart.
package enum PostgresIndexText {
    /// The tokenizer the SQLite index's FTS5 table is made with (`migrations/index/0001-items.sql`).
    package static let tokenizer: FTS5Tokenizer = {
        do {
            return try FTS5Tokenizer("porter unicode61 remove_diacritics 2")
        } catch {
            fatalError("SQLite was built without FTS5's porter and unicode61 tokenizers: \(error)")
        }
    }()

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
        for (column, text) in [title, keywords, people, description, body].enumerated() {
            let tokens = tokenizer.tokens(in: text)
            length += tokens.count
            for token in tokens {
                places[token.text, default: []].append((min(base + token.position, maximumPosition), columns[column].weight))
            }
            base += (tokens.last.map { $0.position + 1 } ?? 0) + columnGap
        }
        let literal = places.keys.sorted().map { lexeme in
            quoted(lexeme) + ":" + places[lexeme]!.prefix(256).map { "\($0.position)\($0.weight)" }.joined(separator: ",")
        }.joined(separator: " ")
        return (literal, length)
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
        return TermTokens(tokens: tokenizer.tokens(in: text, for: .query(prefix: prefix)).map(\.text), prefix: prefix)
    }
}
