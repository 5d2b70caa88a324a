import Foundation
import ReplicaCore

/// A full-text MATCH pattern built from typed words, never from their syntax.
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
    }

    let terms: [Term]
    let matchesAny: Bool

    /// The most terms one query may have.
    static let maximumTerms = 64

    init(text: String, matchingAny: Bool = false) throws {
        let terms = Self.terms(in: text)
        guard !terms.isEmpty else {
            throw ReplicaError(.invalidQuery, "the query has no words to search for: type at least one word with a letter or a digit")
        }
        guard terms.count <= Self.maximumTerms else {
            throw ReplicaError(.invalidQuery, "the query has \(terms.count) words; use at most \(Self.maximumTerms)")
        }
        self.terms = terms
        self.matchesAny = matchingAny
    }

    /// The pattern for `MATCH`.
    var matchExpression: String {
        terms.map { term in
            let quoted = "\"" + term.text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            switch term {
            case .word(_, let prefix), .phrase(_, let prefix): return prefix ? quoted + " *" : quoted
            }
        }.joined(separator: matchesAny ? " OR " : " ")
    }

    /// The same words, matching any of them rather than all.
    var relaxed: FTSPattern { FTSPattern(terms: terms, matchesAny: true) }

    private init(terms: [Term], matchesAny: Bool) {
        self.terms = terms
        self.matchesAny = matchesAny
    }

    static func isSearchable(_ text: Substring) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                return true
            default:
                return false
            }
        }
    }

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
            let cleaned = body.replacingOccurrences(of: "\"", with: "")
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
