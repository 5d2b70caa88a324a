import Foundation
import ReplicaCore
import ReplicaIndex

/// One item's places of the words a search asks about, read from its `tsvector`, and what FTS5 would
/// make of them: which terms the item holds and where, BM25's weighted frequencies, phrases and
/// closeness. Positions are the store's (columns kept apart by ``PostgresIndexText/columnGap``), so a
/// phrase or a NEAR never spans two columns, as in FTS5.
struct ItemWords {
    /// The item's lexemes the search asked about, each with its positions and their weights (A–D).
    var places: [String: [(position: Int, weight: Character)]] = [:]

    /// BM25's weight of a `tsvector` weight: the weight of the column it stands for.
    static func columnWeight(_ weight: Character) -> Double {
        switch weight {
        case "A": 10
        case "B": 5
        case "C": 2
        default: 1
        }
    }

    /// The places of the lexemes a token of a term matches: the token itself, or every lexeme that
    /// begins with it when it is a prefix, each place once (FTS5 merges a prefix's positions, so a word
    /// and its stem beside it, `gardening` and `garden` for `gard*`, are one instance).
    func places(of token: String, prefix: Bool) -> [(position: Int, weight: Character)] {
        guard prefix else { return places[token] ?? [] }
        var seen = Set<Int>()
        return places.filter { $0.key.hasPrefix(token) }.flatMap(\.value).filter { seen.insert($0.position).inserted }
    }

    /// Where the term is in the item: the position and weight of each instance's first token, and how many
    /// tokens an instance spans.
    func instances(of term: PostgresIndexText.TermTokens) -> (starts: [(position: Int, weight: Character)], length: Int)
    {
        guard let first = term.tokens.first else { return ([], 0) }
        let last = term.tokens.count - 1
        var starts = places(of: first, prefix: term.prefix && last == 0)
        if last > 0 {
            let following = term.tokens.enumerated().dropFirst().map { index, token in
                Set(places(of: token, prefix: term.prefix && index == last).map(\.position))
            }
            starts = starts.filter { start in
                following.enumerated().allSatisfy { offset, positions in positions.contains(start.position + offset + 1)
                }
            }
        }
        return (starts.sorted { $0.position < $1.position }, term.tokens.count)
    }

    /// FTS5's frequency of a term for BM25: each instance counts its column's weight.
    func weightedFrequency(of term: PostgresIndexText.TermTokens) -> Double {
        instances(of: term).starts.reduce(0) { $0 + Self.columnWeight($1.weight) }
    }

    /// Whether the item holds what `match` asks for, its terms' tokens made once per search (`tokens`),
    /// not once per item.
    func holds(_ match: TermMatch, tokens: [FTSPattern.Term: [PostgresIndexText.TermTokens]]) -> Bool {
        func phrasesOf(_ term: FTSPattern.Term) -> [PostgresIndexText.TermTokens] {
            tokens[term] ?? PostgresIndexText.phrases(of: term)
        }
        switch match {
        case .term(let term): return phrasesOf(term).contains { !instances(of: $0).starts.isEmpty }
        case .all(let matches): return matches.allSatisfy { holds($0, tokens: tokens) }
        case .any(let matches): return matches.contains { holds($0, tokens: tokens) }
        // A group's phrases are single phrases (``FTSPattern/Group/phrases``).
        case .near(let groups, let distance):
            return isNear(groups.flatMap(\.phrases).flatMap(phrasesOf), distance: distance)
        }
    }

    /// FTS5's `NEAR(p1 p2 …, distance)`: an instance of every phrase (the groups' ``FTSPattern/Group/phrases``,
    /// as tokens), with at most `distance` tokens between the end of the first and the start of the last.
    func isNear(_ phrases: [PostgresIndexText.TermTokens], distance: Int) -> Bool {
        var instances: [(phrase: Int, start: Int, end: Int)] = []
        for (index, phrase) in phrases.enumerated() {
            let (starts, length) = self.instances(of: phrase)
            guard !starts.isEmpty else { return false }
            instances += starts.map { (index, $0.position, $0.position + length - 1) }
        }
        instances.sort { $0.start < $1.start }
        // The shortest windows that hold every phrase, each from its first instance.
        var counts = [Int](repeating: 0, count: phrases.count)
        var covered = 0
        var low = 0
        for high in instances.indices {
            if counts[instances[high].phrase] == 0 { covered += 1 }
            counts[instances[high].phrase] += 1
            while covered == phrases.count {
                if instances[high].start - instances[low].end - 1 <= distance { return true }
                counts[instances[low].phrase] -= 1
                if counts[instances[low].phrase] == 0 { covered -= 1 }
                low += 1
            }
        }
        return false
    }

    /// Whether a term is in the title, keywords or people (weights A and B).
    func isInHeading(_ terms: [PostgresIndexText.TermTokens]) -> Bool {
        terms.contains { term in instances(of: term).starts.contains { $0.weight == "A" || $0.weight == "B" } }
    }

    /// Reads a `unnest(tsvector)` row's positions (`{1,5}`) and weights (`{A,D}`) into places.
    mutating func add(lexeme: String, positions: String, weights: String) {
        let numbers = positions.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",")
            .compactMap { Int($0) }
        let letters = weights.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",").map {
            $0.first ?? "D"
        }
        places[lexeme, default: []] += zip(numbers, letters).map { ($0, $1) }
    }
}

/// FTS5's `bm25()`, as its source computes it (`fts5_aux.c`), from the same numbers.
enum BM25 {
    static let k1 = 1.2
    static let b = 0.75

    /// The inverse document frequency of a phrase held by `hits` of `rows` rows.
    static func idf(hits: Int, rows: Int) -> Double {
        let value = log((Double(rows) - Double(hits) + 0.5) / (Double(hits) + 0.5))
        return value <= 0 ? 1e-6 : value
    }

    /// The score of an item of `length` tokens with these weighted frequencies (one per phrase).
    static func score(frequencies: [Double], idfs: [Double], length: Int, averageLength: Double) -> Double {
        zip(frequencies, idfs).reduce(0) { total, pair in
            let (frequency, idf) = pair
            return total + idf * (frequency * (k1 + 1))
                / (frequency + k1 * (1 - b + b * Double(length) / averageLength))
        }
    }
}

/// Makes FTS5-like snippets: the stretch of up to 24 words of the column with the most of the search's
/// words, its matches between `[` and `]`, `…` where it was cut.
enum Snippet {
    /// - Parameter language: the language the query's words were stemmed for: the columns' words are
    ///   stemmed for it too, so that a stem finds its word.
    static func make(columns: [String], terms: [PostgresIndexText.TermTokens], language: String?, words: Int = 24)
        -> String?
    {
        var best: (column: Int, tokens: [FTS5TokenizerToken], marked: Set<Int>, distinct: Int)?
        for (column, text) in columns.enumerated() where !text.isEmpty {
            // One token a position: a stem or a pair of characters stands beside its word, as another
            // text the word matches by.
            var tokens: [FTS5TokenizerToken] = []
            for token in PostgresIndexText.documentTokens(in: text, language: language) {
                if token.position < tokens.count {
                    tokens[token.position].texts.append(token.text)
                } else {
                    tokens.append(FTS5TokenizerToken(texts: [token.text], start: token.start, end: token.end))
                }
            }
            var marked = Set<Int>()
            var distinct = 0
            for term in terms where !term.tokens.isEmpty {
                var found = false
                for start in tokens.indices where start + term.tokens.count <= tokens.count {
                    let matches = term.tokens.enumerated().allSatisfy { offset, token in
                        let texts = tokens[start + offset].texts
                        return term.prefix && offset == term.tokens.count - 1
                            ? texts.contains { $0.hasPrefix(token) } : texts.contains(token)
                    }
                    if matches {
                        found = true
                        for offset in term.tokens.indices { marked.insert(start + offset) }
                    }
                }
                if found { distinct += 1 }
            }
            if distinct > (best?.distinct ?? 0) { best = (column, tokens, marked, distinct) }
        }
        guard let best else { return nil }
        let text = Array(columns[best.column].utf8)
        // The window of `words` tokens with the most matches, the earliest of equals.
        var start = 0
        var most = -1
        for candidate in 0...max(0, best.tokens.count - words) {
            let count = (candidate..<min(candidate + words, best.tokens.count)).filter(best.marked.contains).count
            if count > most { (start, most) = (candidate, count) }
        }
        let end = min(start + words, best.tokens.count)
        // As FTS5's snippet(): a window that starts with the column keeps what comes before its first word,
        // and one that ends with the column keeps what comes after its last (a full stop, a bracket).
        var snippet = start > 0 ? "…" : String(decoding: text[0..<best.tokens[start].start], as: UTF8.self)
        for index in start..<end {
            let token = best.tokens[index]
            if index > start {
                snippet += String(decoding: text[best.tokens[index - 1].end..<token.start], as: UTF8.self)
            }
            let word = String(decoding: text[token.start..<token.end], as: UTF8.self)
            snippet += best.marked.contains(index) ? "[" + word + "]" : word
        }
        snippet += end < best.tokens.count ? "…" : String(decoding: text[best.tokens[end - 1].end...], as: UTF8.self)
        return snippet
    }
}

/// The tokens at one position and where its word is, for snippets.
struct FTS5TokenizerToken {
    /// The word, then what stands beside it (its stem, its pairs of characters).
    var texts: [String]
    var start: Int
    var end: Int
}
