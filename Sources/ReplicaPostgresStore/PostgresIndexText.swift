import Foundation
import ReplicaCore
package import ReplicaIndex
package import ReplicaPostgres
import ReplicaText

/// An item's words as the PostgreSQL store keeps them: the analyzer's (``TextAnalyzer``), the same tokens
/// FTS5's tokenizer `replica` makes of the text in a SQLite index (so both stores match the same items),
/// in a `tsvector` whose weights say the column (A title, B keywords and people, C description, D body:
/// BM25's column weights 10, 5, 5, 2 and 1) and whose positions keep the columns apart.
package enum PostgresIndexText {
    /// A word of an item's text, or a stem or pair of characters beside it.
    package struct Token: Hashable, Sendable {
        /// The word as stored: folded and, for a stem, stemmed.
        package var text: String
        /// Its place among the text's words, from 0; a stem or pair shares its word's.
        package var position: Int
        /// Where its word is in the text: UTF-8 byte offsets of its first byte and past its last.
        package var start: Int
        package var end: Int
    }

    /// The tokens of an item's text as the analyzer makes them for an index, stemmed for `language`.
    package static func documentTokens(in text: String, language: String?) -> [Token] {
        var position = -1
        return TextAnalyzer.tokens(in: text, for: .indexing, language: language).map { token in
            if !token.isColocated || position < 0 { position += 1 }
            return Token(
                text: token.text, position: position, start: token.byteRange.lowerBound,
                end: token.byteRange.upperBound)
        }
    }

    /// The five full-text columns, in FTS5's order, with their `tsvector` weight and BM25 weight.
    package static let columns: [(weight: Character, bm25: Double)] = [
        ("A", 10), ("B", 5), ("B", 5), ("C", 2), ("D", 1),
    ]
    /// The same weights as the binary `tsvector` holds them.
    static let columnWeights: [PostgresTSVector.Weight] = [.a, .b, .b, .c, .d]

    /// How far apart two columns' positions are kept: more than any phrase or closeness the search asks
    /// for spans (its NEAR distance is at most 2 × 12 + 4), so positions alone tell that two words are in
    /// one column and how far apart.
    static let columnGap = 64

    /// The largest position a `tsvector` keeps; PostgreSQL stores later ones as this.
    static let maximumPosition = PostgresTSVector.maximumPosition

    /// An item's words: its `tsvector` in the binary format, and its length in words.
    package struct Words: Sendable {
        /// The `tsvector`, for a parameter `$n::tsvector` (sent as bytes) or an element of a `tsvector[]`.
        package var binary: [UInt8]
        /// BM25's document length, as FTS5 counts it: every token of every column.
        package var length: Int
        /// Its lexemes the index's vocabulary counts (``TextAnalyzer/Vocabulary/holds(_:)``), each once.
        package var vocabulary: [String] = []

        /// The words as a parameter.
        package var value: PostgresValue { .bytes(binary) }
    }

    /// The `tsvector` of an item's five columns, and its length in words.
    ///
    /// It holds what PostgreSQL's text input made of the literal replica used to send (`'word':1A,5D …`),
    /// byte for byte: each lexeme's first 256 positions, a position past the largest kept as the largest
    /// once (with the highest weight among those it stands for), and, for an item whose words would not
    /// fit in a `tsvector`, the lexemes met first while that literal stays under
    /// ``maximumLiteralBytes``.
    /// - Parameter language: the language the words are stemmed for (``TextColumns/language``), as FTS5's
    ///   tokenizer `replica` stems an item's words in a SQLite index.
    package static func vector(
        title: String, keywords: String, people: String, description: String, body: String,
        language: String?
    ) -> Words {
        var slots: [String: Int] = [:]
        var lexemes: [String] = []
        var positions: [[UInt16]] = []
        // How many positions each lexeme was given (the first 256 count), and its literal's size in bytes.
        var given: [Int] = []
        var literalSizes: [Int] = []
        var base = 1
        var length = 0
        for (column, text) in [title, keywords, people, description, body].enumerated() {
            let weight = columnWeights[column]
            let tokens = documentTokens(in: text, language: language)
            // FTS5 counts a column's positions: a stem or pair beside its word adds none.
            length += tokens.last.map { $0.position + 1 } ?? 0
            for token in tokens {
                let word = lexeme(token.text)
                let slot: Int
                if let known = slots[word] {
                    slot = known
                } else {
                    slot = lexemes.count
                    slots[word] = slot
                    lexemes.append(word)
                    positions.append([])
                    given.append(0)
                    literalSizes.append(quotedLength(word) + 1)
                }
                guard given[slot] < PostgresTSVector.maximumPositions else { continue }
                let place = min(base + token.position, maximumPosition)
                literalSizes[slot] += digits(place) + 1 + (given[slot] > 0 ? 1 : 0)
                given[slot] += 1
                let stored = PostgresTSVector.position(place, weight: weight)
                if let last = positions[slot].last, PostgresTSVector.place(of: last) == place {
                    // Only at the largest position: kept once, with the higher weight, as the text input does.
                    if stored >> 14 > last >> 14 { positions[slot][positions[slot].count - 1] = stored }
                } else {
                    positions[slot].append(stored)
                }
            }
            base += (tokens.last.map { $0.position + 1 } ?? 0) + columnGap
        }
        // A `tsvector` holds at most 1 MB: an item with more distinct words keeps those it has first (the
        // literal is larger than the stored form, so the cut is on the safe side), and BM25 still counts
        // every word in its length.
        var kept = lexemes.count
        var size = 0
        for slot in lexemes.indices {
            size += literalSizes[slot] + 1
            if size > maximumLiteralBytes {
                kept = slot
                break
            }
        }
        let entries = (0..<kept).map { slot in
            (lexeme: PostgresValue.storedUTF8(lexemes[slot]), positions: positions[slot])
        }
        return Words(
            binary: PostgresTSVector.binary(entries), length: length,
            vocabulary: lexemes[..<kept].filter(TextAnalyzer.Vocabulary.holds))
    }

    /// Calls `body` with each lexeme of a `tsvector` in PostgreSQL's text output (`'word':1A,5 'it''s':3`)
    /// and its weighted frequency: each position counts its column's BM25 weight
    /// (``ItemWords/columnWeight(_:)``: A 10, B 5, C 2, D 1),
    /// what `ts_rank_cd` gives the lexeme alone with the search's weights. A lexeme without positions
    /// counts once.
    package static func weightedFrequencies(inText text: String, _ body: (String, Int64) -> Void) {
        var text = text
        text.withUTF8 { bytes in
            var index = 0
            let count = bytes.count
            var lexeme: [UInt8] = []
            while index < count {
                // A quoted lexeme: quotes and backslashes doubled.
                guard bytes[index] == UInt8(ascii: "'") else {
                    index += 1
                    continue
                }
                index += 1
                lexeme.removeAll(keepingCapacity: true)
                while index < count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "'") {
                        if index + 1 < count && bytes[index + 1] == UInt8(ascii: "'") {
                            lexeme.append(byte)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    if byte == UInt8(ascii: "\\"), index + 1 < count {
                        lexeme.append(bytes[index + 1])
                        index += 2
                        continue
                    }
                    lexeme.append(byte)
                    index += 1
                }
                var frequency: Int64 = 0
                if index < count && bytes[index] == UInt8(ascii: ":") {
                    index += 1
                    // Positions: digits, then a weight letter unless D, separated by commas.
                    while index < count && bytes[index] != UInt8(ascii: " ") {
                        let byte = bytes[index]
                        switch byte {
                        case UInt8(ascii: "A"), UInt8(ascii: "B"), UInt8(ascii: "C"):
                            frequency += Int64(ItemWords.columnWeight(Character(Unicode.Scalar(byte))))
                        case UInt8(ascii: ","): break
                        default:
                            // The last digit of a position without a letter is a D.
                            let next = index + 1 < count ? bytes[index + 1] : UInt8(ascii: " ")
                            if next == UInt8(ascii: ",") || next == UInt8(ascii: " ") {
                                frequency += Int64(ItemWords.columnWeight("D"))
                            }
                        }
                        index += 1
                    }
                } else {
                    frequency = 1
                }
                body(String(decoding: lexeme, as: UTF8.self), frequency)
            }
        }
    }

    /// How many bytes ``quoted(_:)`` makes of a lexeme.
    static func quotedLength(_ lexeme: String) -> Int {
        lexeme.utf8.reduce(2) { $0 + ($1 == UInt8(ascii: "'") || $1 == UInt8(ascii: "\\") ? 2 : 1) }
    }

    /// How many decimal digits a position has.
    static func digits(_ number: Int) -> Int {
        number < 10 ? 1 : number < 100 ? 2 : number < 1_000 ? 3 : number < 10_000 ? 4 : 5
    }

    /// The most bytes of `tsvector` literal an item gets: under PostgreSQL's 1 MB for the stored form.
    static let maximumLiteralBytes = 900_000

    /// The most bytes of one lexeme PostgreSQL keeps (it refuses longer words: "word is too long").
    static let maximumLexemeBytes = PostgresTSVector.maximumLexemeBytes

    /// A token as a lexeme: itself, or, for a token longer than PostgreSQL keeps, its first 200 bytes
    /// and a digest of the whole, the same on the index's side and the query's, so the word is still found.
    package static func lexeme(_ token: String) -> String {
        guard token.utf8.count > maximumLexemeBytes else { return token }
        return longLexeme(token)
    }

    /// The lexeme of a token longer than PostgreSQL keeps, in steps linear in its length: written over
    /// any collection of characters, so that a test can count the steps.
    package static func longLexeme<Word: Collection<Character>>(_ token: Word) -> String {
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for character in token {
            for byte in character.utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        let head = token[..<token.endOfPrefix(within: 200) { $0.utf8.count }]
        return String(head) + "~" + String(digest, radix: 16)
    }

    /// A lexeme as a `tsvector` or `tsquery` literal: in single quotes, quotes and backslashes escaped.
    package static func quoted(_ lexeme: String) -> String {
        guard lexeme.utf8.contains(where: { $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: "\\") }) else {
            return "'" + lexeme + "'"
        }
        return "'" + lexeme.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
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

    /// Each phrase of a search's term (``FTSPattern/Term/alternatives``: a word's forms are two) as
    /// FTS5 would tokenize it in a query.
    package static func phrases(of term: FTSPattern.Term) -> [TermTokens] {
        term.alternatives.map(tokens(of:))
    }

    /// A term of a search as FTS5 would tokenize it in a query: a word's forms as the word typed (see
    /// ``phrases(of:)`` for both).
    package static func tokens(of term: FTSPattern.Term) -> TermTokens {
        let (text, prefix): (String, Bool) =
            switch term {
            case .word(let text, let prefix), .phrase(let text, let prefix): (text, prefix)
            case .forms(let word, _, _, _): (word, false)
            }
        return TermTokens(
            tokens: TextAnalyzer.tokens(in: text, for: .query).map { lexeme($0.text) }, prefix: prefix)
    }
}
