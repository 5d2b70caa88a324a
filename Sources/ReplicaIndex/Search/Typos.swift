import Foundation
import ReplicaText

/// Typos forgiven: the words of the index's vocabulary one or two edits from a typed word, searched
/// beside it (issue 45; Meilisearch's rule).
///
/// A word of ``shortest`` letters or more of an alphabetic script (not Han, kana, Hangul, Thai:
/// ``TextAnalyzer/Vocabulary/holds(_:)``), typed with a typo (so of one letter less when the typo
/// dropped one), not a prefix nor in a phrase, is corrected when the index holds neither it nor its
/// stem, or holds them in at most ``mostItemsOfATypo`` items and fewer than a tenth of its most frequent
/// neighbour's. A neighbour is a token of the vocabulary (a word or a stem) of ``shortest`` letters or
/// more that begins with the same letter and is one edit from the word typed (two from a word of
/// ``twoEditsFrom`` letters or more), where an edit inserts, deletes or replaces a letter, or swaps two
/// letters side by side; a neighbour of the word's own stem is not one (`provisions`, stemmed `provis`,
/// is not `provid` of "provides").
///
/// At most ``mostCorrections`` neighbours are added, those in the most items first, each with its stem
/// (so that `batery` finds "batteries" through "battery"). They match at the word's place
/// (``FTSPattern/Term/forms(word:stems:typos:withStems:)``); a function word meant ("wehre" for "where") makes the
/// word that function word. The ranking counts an item that has the word only through a correction as
/// having three quarters of it.
package enum Typos {
    /// The fewest letters of a word whose typos are forgiven.
    package static let shortest = 5
    /// The fewest letters of a word that may have two typos.
    package static let twoEditsFrom = 9
    /// The most words one typed word may have meant.
    package static let mostCorrections = 4
    /// How many times more items a neighbour must be in for a word the index holds to be corrected.
    static let commonerBy: Int64 = 10
    /// The most items that may hold a word (or its stem) that is corrected: one held more often is a word
    /// of the index's own, and its neighbours are not read (a point look-up; reading them, and correcting
    /// rare words of the index toward commoner ones, cost a two-word search on the server 20 ms).
    package static let mostItemsOfATypo: Int64 = 2

    /// How many edits a word of `length` letters may have.
    static func edits(forLength length: Int) -> Int {
        length >= twoEditsFrom ? 2 : 1
    }

    /// Whether `word` (folded) may be corrected.
    static func isForgiven(_ word: String) -> Bool {
        word.unicodeScalars.count >= shortest - 1 && TextAnalyzer.Vocabulary.holds(word)
    }

    /// The edit distance of `a` and `b` with swaps of neighbours (optimal string alignment), or
    /// `limit + 1` when it is more than `limit`.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let width = b.count + 1
        var before = [Int](repeating: 0, count: width)  // row i - 2
        var previous = Array(0...b.count)  // row i - 1
        var current = [Int](repeating: 0, count: width)
        for i in 1...a.count {
            current[0] = i
            var smallest = current[0]
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    value = min(value, before[j - 2] + 1)
                }
                current[j] = value
                smallest = min(smallest, value)
            }
            if smallest > limit { return limit + 1 }
            (before, previous, current) = (previous, current, before)
        }
        return min(previous[b.count], limit + 1)
    }

    /// The words a typo in `word` (with its stems `stems`) may have meant, among `neighbours` (the
    /// vocabulary's tokens that begin with its letter, of a length within reach, each with how many items
    /// hold it): none when the index holds the word or a stem of it often enough.
    static func corrections(of word: String, stems: [String] = [], among neighbours: [(word: String, documents: Int64)])
        -> [String]
    {
        let limit = edits(forLength: word.unicodeScalars.count)
        let typed = Array(word.unicodeScalars)
        var held: Int64 = 0
        var near: [(word: String, documents: Int64)] = []
        for neighbour in neighbours {
            if neighbour.word == word || stems.contains(neighbour.word) {
                held = max(held, neighbour.documents)
                continue
            }
            let scalars = Array(neighbour.word.unicodeScalars)
            if distance(typed, scalars, limit: limit) <= limit { near.append(neighbour) }
        }
        guard let commonest = near.map(\.documents).max(), held == 0 || held * commonerBy < commonest else { return [] }
        return near.sorted { ($0.documents, $1.word) > ($1.documents, $0.word) }.prefix(mostCorrections).map(\.word)
    }
}

extension IndexReader {
    /// The prefix a typo in `prefix` most likely meant: of the vocabulary's tokens that begin with its
    /// first letter, their beginnings as long as it, one letter shorter or one longer that are one edit
    /// from it (folded), the one held by the most items; `nil` for a prefix of fewer than four letters,
    /// of a script without typos forgiven, or with nothing near it. What `suggest` completes when
    /// nothing completes the prefix as typed.
    package func correctedPrefix(of prefix: String) throws -> String? {
        let tokens = TextAnalyzer.tokens(in: prefix, for: .query)
        guard tokens.count == 1, let typed = tokens.first?.text, Typos.isForgiven(typed),
            let first = typed.unicodeScalars.first
        else {
            return nil
        }
        let scalars = Array(typed.unicodeScalars)
        let length = scalars.count
        var held: [String: Int64] = [:]
        for (word, documents) in try vocabulary(
            beginningWith: String(Character(first)),
            lengths: max(length - 1, TextAnalyzer.Vocabulary.shortest)...TextAnalyzer.Vocabulary.longest,
            heldByMoreThan: 0)
        {
            let letters = Array(word.unicodeScalars)
            for cut in (length - 1)...(length + 1) where cut <= letters.count {
                let beginning = Array(letters[..<cut])
                if beginning != scalars, Typos.distance(scalars, beginning, limit: 1) <= 1 {
                    held[String(String.UnicodeScalarView(beginning)), default: 0] += documents
                }
            }
        }
        return held.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// `pattern` with the words a typo in each of its words may have meant (``Typos``), from the index's
    /// vocabulary; the pattern itself when every word is required (each word is then one phrase) or none
    /// of its words is corrected.
    package func correctingTypos(_ pattern: FTSPattern) throws -> FTSPattern {
        guard !pattern.requiresAll else { return pattern }
        return try pattern.replacingTerms { term in
            let (word, stems): (String, [String])
            switch term {
            case .word(let text, prefix: false): (word, stems) = (text, [])
            case .forms(let text, let stemmed, _, _): (word, stems) = (text, stemmed)
            default: return nil
            }
            guard !pattern.isFunctionWord(term), Typos.isForgiven(word), let first = word.unicodeScalars.first else {
                return nil
            }
            let length = word.unicodeScalars.count
            let reach = Typos.edits(forLength: length)
            let shortest = max(length - reach, Typos.shortest)
            let typed = [word] + stems
            let held = try vocabularyDocuments(ofAny: typed)
            guard held <= Typos.mostItemsOfATypo else { return nil }
            // Only the tokens that could be corrections: those held ten times as often as the word and its stem.
            let neighbours = try vocabulary(
                beginningWith: String(Character(first)), lengths: shortest...(length + reach),
                heldByMoreThan: Typos.commonerBy * held)
            var typos = Typos.corrections(of: word, stems: stems, among: neighbours)
            guard let likeliest = typos.first else { return nil }
            // A function word meant ("wehre", "thoes"): the word as if typed right, which counts only
            // beside the others; function words are no other word's correction.
            let meant = FTSPattern.Term.word(likeliest, prefix: false)
            if pattern.isFunctionWord(meant) { return meant }
            typos.removeAll { pattern.isFunctionWord(.word($0, prefix: false)) }
            // Each correction with its stem in the query's language, so that it finds its other forms,
            // and counts beside its stem as a word typed does (``FTSPattern/Term/alternativeWeights(typed:)``).
            var words: [String] = []
            var withStems: [String] = []
            for typo in typos {
                let stem = pattern.language.flatMap { TextAnalyzer.stem(typo, language: $0) }
                for form in [typo] + (stem.map { [$0] } ?? [])
                where form != word && !stems.contains(form) && !words.contains(form) {
                    words.append(form)
                }
                if stem != nil && words.contains(typo) { withStems.append(typo) }
            }
            return .forms(word: word, stems: stems, typos: words, withStems: withStems)
        }
    }
}
