import Foundation
import ReplicaCore

/// A full-text MATCH pattern built from typed words, never from their syntax.
///
/// By default the words are evidence, not a conjunction: an item matching any meaningful word is a
/// candidate, and ranking (``IndexReader/search(_:pattern:)``) puts items with more of the words, rarer
/// words, and the words near each other first. Function words ("the", "which", "how") never decide a
/// match on their own: they are left out unless the text has nothing else. With `requiringAll`, every
/// word must match, as before.
///
/// Every word and phrase becomes one FTS5 string (`"…"`, inner quotes doubled), so FTS5 reads it as text
/// and tokenizes it like the indexed text ([FTS5 strings](https://www.sqlite.org/fts5.html#fts5_strings)):
/// `NEAR(` becomes the word "near", `title:x` the phrase "title x", `e-mail` the phrase "e mail". A word
/// ending in `*` becomes a prefix query. Chunks with no letter or digit are dropped; a text left with
/// nothing is refused.
package struct FTSPattern: Hashable, Sendable {
    /// One searchable term.
    enum Term: Hashable, Sendable {
        case word(String, prefix: Bool)
        case phrase(String, prefix: Bool)

        var text: String {
            switch self {
            case .word(let text, _), .phrase(let text, _): return text
            }
        }

        /// The term as one FTS5 string (inner quotes doubled), with `*` for a prefix.
        var expression: String {
            let quoted = Quoting.enclosed(text, in: "\"")
            switch self {
            case .word(_, let prefix), .phrase(_, let prefix): return prefix ? quoted + " *" : quoted
            }
        }

        /// A single word from the list of English function words, whatever its case and punctuation.
        var isFunctionWord: Bool {
            guard case .word(let text, prefix: false) = self else { return false }
            let letters = String(text.lowercased().unicodeScalars.filter { $0.properties.isAlphabetic || $0 == "'" })
            return FTSPattern.functionWords.contains(letters)
        }
    }

    /// Words that say how a question is put, not what it is about.
    static let functionWords: Set<String> = [
        "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
        "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "cannot",
        "could", "did", "do", "does", "doing", "don't", "down", "during", "each", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
        "his", "how", "i", "i'm", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "me", "more",
        "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "ought",
        "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than",
        "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
        "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours",
        "yourself", "yourselves",
    ]

    let terms: [Term]
    /// Whether every term must match; otherwise any meaningful term makes a candidate.
    let requiresAll: Bool

    /// The most terms one query may have.
    static let maximumTerms = 64

    init(text: String, requiringAll: Bool = false) throws {
        let terms = Self.terms(in: text)
        guard !terms.isEmpty else {
            throw ReplicaError(.invalidQuery, "the query has no words to search for: type at least one word with a letter or a digit")
        }
        guard terms.count <= Self.maximumTerms else {
            throw ReplicaError(.invalidQuery, "the query has \(terms.count) words; use at most \(Self.maximumTerms)")
        }
        self.terms = terms
        self.requiresAll = requiringAll
    }

    /// The terms that carry meaning: the function words are left out, unless nothing else is left.
    /// Repeated terms count once.
    var meaningfulTerms: [Term] {
        var seen = Set<Term>()
        let distinct = terms.filter { seen.insert($0).inserted }
        let meaningful = distinct.filter { !$0.isFunctionWord }
        return meaningful.isEmpty ? distinct : meaningful
    }

    /// The pattern for `MATCH`: every term (`requiresAll`), or any meaningful term.
    var matchExpression: String {
        requiresAll ? terms.map(\.expression).joined(separator: " ") : meaningfulTerms.map(\.expression).joined(separator: " OR ")
    }

    /// Every ranked term within a few words of each other, in any order; `nil` for a single term.
    var nearExpression: String? {
        let ranked = meaningfulTerms
        guard ranked.count > 1 else { return nil }
        return "NEAR(" + ranked.map(\.expression).joined(separator: " ") + ", \(2 * ranked.count + 4))"
    }

    package static func isSearchable(_ text: Substring) -> Bool {
        text.unicodeScalars.contains(where: isWordScalar)
    }

    /// Letters, digits and private-use characters: what FTS5's `unicode61` tokenizer keeps in a word
    /// (its default categories, `L* N* Co`); everything else separates words, except the accents of
    /// ``continuesWord(_:)`` within one.
    package static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return true
        default:
            return false
        }
    }

    /// Whether `scalar` goes on a word it follows: a word character, or one of the combining accents
    /// `unicode61` folds away (with `remove_diacritics`, its default), so that "café" written with a
    /// separate accent (NFD) stays one word. Other combining marks separate words, as in FTS5 (each
    /// checked against SQLite 3.40's tokenizer).
    package static func continuesWord(_ scalar: Unicode.Scalar) -> Bool {
        isWordScalar(scalar) || foldedAccents.contains(scalar.value)
    }

    private static let foldedAccents: Set<UInt32> = [
        0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x309, 0x30A, 0x30B, 0x30C, 0x30F, 0x311,
        0x31B, 0x323, 0x324, 0x325, 0x326, 0x327, 0x328, 0x32D, 0x32E, 0x330, 0x331,
    ]

    static func terms(in text: String) -> [Term] {
        var terms: [Term] = []
        // Control characters (NUL among them, which would end the pattern early) separate words.
        let characters = text.map { character in
            character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : character
        }
        var index = 0
        var word = ""

        func flushWord() {
            var body = Substring(word)
            var prefix = false
            while body.hasSuffix("*") {
                body = body.dropLast()
                prefix = true
            }
            var scalars = String.UnicodeScalarView()
            scalars.append(contentsOf: body.unicodeScalars.filter { $0 != "\"" })
            let cleaned = String(scalars)
            if isSearchable(Substring(cleaned)) { terms.append(.word(cleaned, prefix: prefix)) }
            word = ""
        }

        while index < characters.count {
            let character = characters[index]
            if character == "\"", let close = characters[(index + 1)...].firstIndex(of: "\"") {
                flushWord()
                let phrase = String(characters[(index + 1)..<close])
                var next = close + 1
                var prefix = false
                while next < characters.count && characters[next] == "*" {
                    prefix = true
                    next += 1
                }
                if isSearchable(Substring(phrase)) { terms.append(.phrase(phrase, prefix: prefix)) }
                index = next
                continue
            }
            if character.isWhitespace {
                flushWord()
            } else {
                word.append(character)
            }
            index += 1
        }
        flushWord()
        return terms
    }
}
