import Foundation
import ReplicaCore
import ReplicaText

/// A full-text MATCH pattern built from typed words, never from their syntax.
///
/// By default the words are evidence, not a conjunction: an item matching any meaningful word is a
/// candidate, and ranking (``IndexReader/search(_:pattern:)``) puts items with more of the words, rarer
/// words, and the words near each other first. Function words ("the", "which", "how", and those of the
/// query's languages: ``FunctionWords``) never decide a match on their own: they are left out unless
/// the text has nothing else. With `requiringAll`, every
/// word must match, as before.
///
/// A typed word is split where the index's analyzer (``TextAnalyzer``) splits the text: at every
/// character that is not a letter, a digit or a mark within a word, and between the words ICU's
/// dictionaries find in Chinese, Japanese or Thai. Each part is folded as the index folds it and, for a
/// language with stems, searched as typed or by its stem (which the index holds beside every word of
/// that stem), so that the form typed ranks first (``Term/forms(word:stems:typos:withStems:)``); a
/// Chinese, Japanese or Korean part of three or more characters is searched as itself and by its pairs
/// of characters (by its pairs alone where every word is required).
/// So a word joined by punctuation is the words it joins: `title:sourdough` is "title" and "sourdough", `garage/tyres` is
/// "garage" and "tyres", each found on its own, and an item with them side by side, as typed, gets the
/// ranking's closeness bonus (``nearExpression``). Parts of one letter and function words ("'s", "of")
/// count only in that bonus: `sourdough's` finds "sourdough", and "sourdough's" first. Two kinds of
/// joined word stay whole, one phrase: a word with a digit (`INV-2024-0917`, `2026-11-26`, `v1.2`), which
/// names one thing, and a word of nothing but single letters and function words (`U.S.A.`, `to-do`).
///
/// Every word and phrase becomes one FTS5 string (`"…"`, inner quotes doubled), so FTS5 reads it as text
/// and tokenizes it like the indexed text ([FTS5 strings](https://www.sqlite.org/fts5.html#fts5_strings)):
/// `NEAR(` becomes the word "near". `"two words"` in double quotes is a phrase, whatever joins its words.
/// A word ending in `*` becomes a prefix query (of its last part). Chunks with no letter or digit are
/// dropped; a text left with nothing is refused.
package struct FTSPattern: Hashable, Sendable {
    /// One searchable term.
    package enum Term: Hashable, Sendable {
        case word(String, prefix: Bool)
        case phrase(String, prefix: Bool)
        /// A word as typed (folded), its stems and the words a typo in it may have meant, any of which
        /// matches, at one place. The index holds the stem beside every word of that stem, so the word
        /// finds its other forms by the stem, and an item with the word as typed has both, and ranks
        /// above an item with another form only. A query whose language is not known has a stem for each
        /// language of the index's items (``WrittenLanguages``), the commonest first. `typos` are the
        /// index's words an edit or two away (``IndexReader/correctingTypos(_:)``), and their stems;
        /// `withStems` are those of them whose stem is among them too (each counts as a word typed beside
        /// its stem: ``alternativeWeights``).
        case forms(word: String, stems: [String], typos: [String] = [], withStems: [String] = [])

        var text: String {
            switch self {
            case .word(let text, _), .phrase(let text, _), .forms(let text, _, _, _): return text
            }
        }

        /// The term as FTS5 writes it: one string (inner quotes doubled), with `*` for a prefix; a word's
        /// forms OR-ed in parentheses, each a phrase of its own, as BM25 counts them.
        package var expression: String {
            switch self {
            case .word(let text, let prefix), .phrase(let text, let prefix):
                let quoted = Quoting.enclosed(text, in: "\"")
                return prefix ? quoted + " *" : quoted
            case .forms: return "(" + alternatives.map(\.expression).joined(separator: " OR ") + ")"
            }
        }

        /// The terms any of which matches this one, each one FTS5 phrase: a word's forms (the word first,
        /// FTS5's order of the phrases of the expression), or the term itself.
        package var alternatives: [Term] {
            guard case .forms(let word, let stems, let typos, _) = self else { return [self] }
            return ([word] + stems + typos).map { .word($0, prefix: false) }
        }

        /// How much each of ``alternatives`` counts in BM25 (each phrase's idf is multiplied by it): a
        /// word as typed ``typedFormWeight`` beside its stems, and so does a word a typo may have meant
        /// beside its stem; everything else 1. A stem is what the word means; the form typed, counted in
        /// full beside it, counted the word twice where it was written as typed (and a rare form
        /// outweighed the stem's other forms).
        ///
        /// - Parameter typed: what a form as typed weighs beside its stems (``FTSPattern/typedFormWeight(language:)``).
        package func alternativeWeights(typed: Double = FTSPattern.typedFormWeight) -> [Double] {
            guard case .forms(_, let stems, let typos, let withStems) = self else { return [1] }
            return [stems.isEmpty ? 1 : typed] + Array(repeating: 1, count: stems.count)
                + typos.map { withStems.contains($0) ? typed : 1 }
        }

        /// The term as typed, without the words its typos may have meant.
        package var asTyped: Term {
            guard case .forms(let word, let stems, let typos, _) = self, !typos.isEmpty else { return self }
            return stems.isEmpty ? .word(word, prefix: false) : .forms(word: word, stems: stems)
        }

        /// The words a typo in the term may have meant (``forms(word:stems:typos:withStems:)``).
        package var typos: [String] {
            guard case .forms(_, _, let typos, _) = self else { return [] }
            return typos
        }

        /// The term where only a phrase goes (in `NEAR`): a word's stem (its first), which stands wherever
        /// any of its forms does; for a word with a typo, the word it most likely meant (held by the most
        /// items); else the word typed, or the term itself.
        package var phrase: Term {
            guard case .forms(let word, let stems, let typos, _) = self else { return self }
            return .word(typos.first ?? stems.first ?? word, prefix: false)
        }

        /// A single word from the list of English function words, whatever its case and punctuation (a
        /// typographic apostrophe reads as `'`), or from the lists of the query's other languages, or of
        /// Chinese, Japanese, Korean and Thai (``FunctionWords/ofTheirOwnScripts``). A Vietnamese word typed with its
        /// marks is no English word, though folded it reads as one: "thể", "số" and "nó" are not "the",
        /// "so" and "no" (their form as written is a stem of theirs: ``TextAnalyzer/stems(_:)``).
        func isFunctionWord(in others: FunctionWords) -> Bool {
            let text: String
            var typedWithAccents = false
            switch self {
            case .word(let word, prefix: false): text = word
            case .forms(let word, let stems, _, _):
                text = word
                typedWithAccents = stems.contains { TextAnalyzer.isVietnameseForm($0, of: text) }
            default: return false
            }
            let letters = String(
                text.lowercased().replacingOccurrences(of: "\u{2019}", with: "'").unicodeScalars
                    .filter { $0.properties.isAlphabetic || $0 == "'" })
            return (!typedWithAccents && FTSPattern.functionWords.contains(letters)) || others.contains(text)
                || FunctionWords.ofTheirOwnScripts.contains(text)
        }
    }

    /// How much a word as typed counts beside its stem (``Term/alternativeWeights(typed:)``). Measured on XQuAD-R
    /// lexical nDCG@10 (docs/benchmarks/languages.md): against 1 (the word counted twice where it was
    /// written as typed), 0.3 gained 0.010 to 0.016 in Arabic, Greek, Hindi and Turkish and lost 0.005 in
    /// Spanish; 0.5 and 0.15 were within 0.004 of it, 0.5 a little better in Spanish and worse in Hindi.
    /// An item with the word as typed still ranks above one with another form of it.
    package static let typedFormWeight = 0.3

    /// What a word as typed weighs beside its stems in a query stemmed first for `language`: in
    /// Vietnamese, whose "stem" is the word as written (its tones spelled as VNI types them) and whose
    /// word as typed is the word with its accents folded (``TextAnalyzer/stems(_:)``), 0.1, since the
    /// folded form matches every word of its letters whatever its tones (XQuAD-R vi lexical nDCG@10: 0.844
    /// measured; simulated, 0.841 at 0.3 and 0.845 at 0.1); else ``typedFormWeight``.
    package static func typedFormWeight(language: String?) -> Double {
        language == "vi" ? 0.1 : typedFormWeight
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

    /// What one typed word or quoted phrase became: its terms and, for a word split at punctuation, the
    /// phrase of all its parts side by side (`garage/tyres`: "garage", "tyres" and "garage tyres").
    package struct Group: Hashable, Sendable {
        package var terms: [Term]
        package var joined: Term?
        /// The long Chinese, Japanese or Korean words among `terms` that are searched beside their pairs
        /// of characters (also among `terms`): an item whose text was cut into the same word has it, and
        /// ranks above one that has only the pairs. Never required, nor in `NEAR`: the pairs are.
        package var wholeWords: [Term] = []
        /// The pairs of characters of ``wholeWords`` among `terms`: each weighs ``pairWeight`` in BM25.
        package var pairs: [Term] = []

        package init(terms: [Term], joined: Term? = nil, wholeWords: [Term] = [], pairs: [Term] = []) {
            self.terms = terms
            self.joined = joined
            self.wholeWords = wholeWords
            self.pairs = pairs
        }

        /// What `NEAR` takes of the group: its word split at punctuation as one phrase (its parts side by
        /// side), else each of its terms as a phrase of its own.
        package var phrases: [Term] { joined.map { [$0] } ?? terms.filter { !wholeWords.contains($0) }.map(\.phrase) }

        /// The group as one expression for `NEAR`: its parts side by side, or its one term.
        package var expression: String { joined?.expression ?? phrases.map(\.expression).joined(separator: " ") }

        /// The group where every word is required: each word as typed or by any of its stems (one for each
        /// language the query is stemmed for), and a long word by its pairs alone (an item whose text the
        /// dictionary cut otherwise has the pairs, not the word).
        var requiringEveryWord: Group { Group(terms: terms.filter { !wholeWords.contains($0) }, joined: joined) }
    }

    package let groups: [Group]
    /// The language the words were stemmed for (the first, when they were for several).
    package let language: String?
    /// The function words of the query's languages, beside English's (``functionWords``).
    let functionWords: FunctionWords
    /// Every term, in the order typed.
    package var terms: [Term] { groups.flatMap(\.terms) }
    /// Whether every term must match; otherwise any meaningful term makes a candidate.
    package let requiresAll: Bool

    /// The most terms one query may have.
    static let maximumTerms = 64

    /// - Parameter language: the language the query's words are stemmed for (``SearchQuery/languages``):
    ///   each word with a stem is searched as typed or by its stem, which the index holds beside every
    ///   word with that stem in an item of the language (`houses` finds "house" and "housing", and
    ///   "houses" first), also with `requiringAll`; `nil` for none.
    /// - Parameter moreLanguages: other languages the words are stemmed for too, each stem one more way
    ///   a word matches, also with `requiringAll` (a required word is any of its forms).
    /// - Parameter functionWords: the function words of the languages the query is in, which count only
    ///   beside its other words, as English's always do.
    init(
        text: String, requiringAll: Bool = false, language: String? = "en", moreLanguages: [String] = [],
        functionWords: FunctionWords = FunctionWords(languages: [])
    ) throws {
        let languages = (language.map { [$0] } ?? []) + moreLanguages
        let groups = Self.groups(in: text, languages: languages, functionWords: functionWords).map {
            requiringAll ? $0.requiringEveryWord : $0
        }
        let count = groups.reduce(0) { $0 + $1.terms.count }
        guard count > 0 else {
            throw ReplicaError(
                .invalidQuery, "the query has no words to search for: type at least one word with a letter or a digit")
        }
        guard count <= Self.maximumTerms else {
            throw ReplicaError(.invalidQuery, "the query has \(count) words; use at most \(Self.maximumTerms)")
        }
        self.init(groups: groups, requiringAll: requiringAll, language: language, functionWords: functionWords)
    }

    private init(groups: [Group], requiringAll: Bool, language: String?, functionWords: FunctionWords) {
        self.groups = groups
        self.requiresAll = requiringAll
        self.language = language
        self.functionWords = functionWords
        meaningfulTerms = Self.meaningfulTerms(of: groups.flatMap(\.terms), functionWords: functionWords)
        hasMeaningfulWord = meaningfulTerms.contains { !$0.isFunctionWord(in: functionWords) }
        phraseWeights = Self.phraseWeights(
            groups: groups, terms: requiringAll ? groups.flatMap(\.terms) : meaningfulTerms,
            requiringAll: requiringAll, typed: Self.typedFormWeight(language: language))
    }

    /// Whether `term` is one of the query's function words (``functionWords``, English's among them).
    package func isFunctionWord(_ term: Term) -> Bool { term.isFunctionWord(in: functionWords) }

    /// Whether any word carries meaning: a query of function words alone ("the which how") has none, and
    /// is ranked by them anyway with scores below the best match of any real query (``functionWordsScoreScale``).
    package let hasMeaningfulWord: Bool

    /// What the scores of a query of function words alone are multiplied by: at most 0.3, below the
    /// 0.65 of the best match of any query with a meaningful word.
    package static let functionWordsScoreScale = 0.3

    /// The terms that carry meaning: the function words are left out, unless nothing else is left.
    /// Repeated terms count once. Found once, with the pattern: a search asks for them several times.
    package let meaningfulTerms: [Term]

    private static func meaningfulTerms(of terms: [Term], functionWords: FunctionWords) -> [Term] {
        var seen = Set<Term>()
        let distinct = terms.filter { seen.insert($0).inserted }
        let meaningful = distinct.filter { !$0.isFunctionWord(in: functionWords) }
        return meaningful.isEmpty ? distinct : meaningful
    }

    /// The pattern with each of its terms replaced as `replacing` says (a term it returns `nil` for
    /// stays): ``IndexReader/correctingTypos(_:)`` adds the words a typo may have meant.
    package func replacingTerms(_ replacing: (Term) throws -> Term?) rethrows -> FTSPattern {
        let groups = try groups.map { group in
            var group = group
            group.terms = try group.terms.map { try replacing($0) ?? $0 }
            return group
        }
        return FTSPattern(groups: groups, requiringAll: requiresAll, language: language, functionWords: functionWords)
    }

    /// The pattern for `MATCH`: every term (`requiresAll`), or any meaningful term. `AND` is written out:
    /// FTS5 reads two terms side by side as both only when neither is a word's forms in parentheses.
    package var matchExpression: String {
        requiresAll
            ? terms.map(\.expression).joined(separator: " AND ")
            : meaningfulTerms.map(\.expression).joined(separator: " OR ")
    }

    /// The weight of each phrase of ``matchExpression`` in BM25, in its order: a pair of characters of a
    /// longer Chinese, Japanese or Korean word ``pairWeight`` (unless it was typed as a word of its own
    /// too), a word's forms their ``Term/alternativeWeights(typed:)``. Where every word is required, a pair
    /// weighs 1 (a long word is searched by its pairs alone). Found once, with the pattern: each backend's
    /// search reads it more than once.
    package let phraseWeights: [Double]

    private static func phraseWeights(groups: [Group], terms: [Term], requiringAll: Bool, typed: Double) -> [Double] {
        if requiringAll { return terms.flatMap { $0.alternativeWeights(typed: typed) } }
        var pairs = Set<Term>()
        var words = Set<Term>()
        for group in groups {
            var others = group.terms
            for pair in group.pairs {
                pairs.insert(pair)
                if let index = others.firstIndex(of: pair) { others.remove(at: index) }
            }
            words.formUnion(others)
        }
        return terms.flatMap {
            pairs.contains($0) && !words.contains($0) ? [Self.pairWeight] : $0.alternativeWeights(typed: typed)
        }
    }

    /// How much a pair of characters of a longer Chinese, Japanese or Korean word counts beside the word
    /// (``Group/pairs``): the pairs find an item whose text the dictionary cut into other words, and the
    /// word as cut ranks above it. Measured on XQuAD-R zh and JSQuAD lexical nDCG@10 (docs/benchmarks/languages.md):
    /// at 1, a question's long words weighed once more for each pair; 0.3 took zh from 0.823 to 0.828 and
    /// ja from 0.937 to 0.941, 0.2 zh to 0.829 (a simulation had 0.5 short of both).
    package static let pairWeight = 0.3

    /// What the ranking's closeness bonus asks for: the typed words with a ranked term within a few
    /// words of each other, in any order, each word split at punctuation with its parts side by side; for
    /// one such word alone, its parts side by side; `nil` for a single term.
    package var nearMatch: TermMatch? {
        let ranked = Set(meaningfulTerms)
        var seen = Set<String>()
        let parts = groups.filter { $0.terms.contains(where: ranked.contains) }.filter {
            seen.insert($0.expression).inserted
        }
        if parts.count > 1 { return .near(parts, distance: 2 * parts.count + 4) }
        return groups.first(where: { $0.terms.contains(where: ranked.contains) })?.joined.map(TermMatch.term)
    }

    /// ``nearMatch`` as FTS5 writes it.
    var nearExpression: String? { nearMatch?.ftsExpression }

    package static func isSearchable(_ text: Substring) -> Bool {
        text.unicodeScalars.contains(where: isWordScalar)
    }

    /// Letters, digits and private-use characters: what FTS5's `unicode61` tokenizer keeps in a word
    /// (its default categories, `L* N* Co`); everything else separates words, except the accents of
    /// ``continuesWord(_:)`` within one.
    package static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let value = scalar.value
            return (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A)
                || (value >= 0x61 && value <= 0x7A)
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

    /// The groups of terms of a typed text: each quoted phrase, and each word between spaces (see the
    /// type's description).
    static func groups(
        in text: String, languages: [String], functionWords: FunctionWords = FunctionWords(languages: [])
    ) -> [Group] {
        var groups: [Group] = []
        // Control characters (NUL among them, which would end the pattern early) separate words.
        let characters = text.map { character in
            character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : character
        }
        var index = 0
        var word = ""

        func flushWord() {
            let (body, stars) = Substring(word).removingTrailing("*")
            let prefix = stars > 0
            word = ""
            if let group = Self.group(ofWord: body, prefix: prefix, languages: languages, functionWords: functionWords)
            {
                groups.append(group)
            }
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
                if isSearchable(Substring(phrase)) { groups.append(Group(terms: [.phrase(phrase, prefix: prefix)])) }
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
        return groups
    }

    /// The terms of one word typed between spaces (`*`s at its end already taken off as `prefix`), or
    /// `nil` when it has nothing to search.
    static func group(ofWord word: Substring, prefix: Bool, languages: [String], functionWords: FunctionWords) -> Group?
    {
        let parts = Self.parts(of: word, languages: prefix ? [] : languages)
        guard !parts.isEmpty else { return nil }
        if parts.count == 1 { return Group(terms: [parts[0].term(prefix: prefix)]) }
        // A long Chinese, Japanese or Korean word is searched by its pairs, which the index holds beside
        // every such word however its text was cut into words, and as itself, which an item whose text
        // was cut the same way holds too; they stand at one position there, so the parts are not a phrase.
        // So is text of a script written without spaces (Chinese, Japanese, Thai…), where what was typed
        // between spaces is a sentence, not a word split at punctuation: its words are searched each on
        // its own, a number among them too (`2015年`, `18世纪`).
        let unspaced = word.unicodeScalars.contains(where: Part.isCutWithoutSpaces)
        let joined = unspaced ? nil : Term.phrase(parts.map(\.text).joined(separator: " "), prefix: prefix)
        guard let joined else {
            // The pairs of a function word (Korean 어떻게, Chinese 为什么) are as weak as the word.
            var wordIsWeak = false
            let kept = parts.filter { part in
                let weak = part.isWeak(functionWords)
                if !part.isPair { wordIsWeak = weak }
                return !weak && !(part.isPair && wordIsWeak)
            }
            return Group(
                terms: kept.map { $0.term(prefix: false) },
                wholeWords: kept.filter(\.hasPairs).map { $0.term(prefix: false) },
                pairs: kept.filter(\.isPair).map { $0.term(prefix: false) })
        }
        // "don't", "it's": a function word as a whole, one term as before.
        let whole = Term.word(
            String(String.UnicodeScalarView(word.unicodeScalars.filter { $0 != "\"" })), prefix: prefix)
        if whole.isFunctionWord(in: functionWords) { return Group(terms: [whole]) }
        // A number, a date, a code: one thing, searched whole.
        if parts.contains(where: { $0.text.unicodeScalars.contains { $0.properties.generalCategory == .decimalNumber } }
        ) {
            return Group(terms: [joined])
        }
        let meaningful = parts.indices.filter { !parts[$0].isWeak(functionWords) }
        guard !meaningful.isEmpty else { return Group(terms: [joined]) }
        return Group(terms: meaningful.map { parts[$0].term(prefix: prefix && $0 == parts.count - 1) }, joined: joined)
    }

    /// One part of a typed word, as the analyzer splits it.
    struct Part {
        /// The word folded, before stemming.
        var word: String
        /// Its stems that differ from it, one for each language that has one, the first language's first.
        var stems: [String] = []
        /// Whether an apostrophe comes just before it ("ll" in "we'll").
        var afterApostrophe: Bool
        /// Whether it is a pair of characters of a longer Chinese, Japanese or Korean word.
        var isPair = false
        /// Whether it is such a longer word, followed by its pairs.
        var hasPairs = false

        /// Where one phrase stands for the part (a word split at punctuation, side by side): its first
        /// stem, else the word.
        var text: String { stems.first ?? word }

        /// The part as a term: the word and its stems when it has any, else the word.
        func term(prefix: Bool) -> Term {
            !stems.isEmpty && !prefix ? .forms(word: word, stems: stems) : .word(word, prefix: prefix)
        }

        /// A part that counts only beside the others: a single letter ("s" of "sourdough's"), a function
        /// word ("of" in "state-of-the-art") or the end of a contraction ("ll", "ve", "re").
        func isWeak(_ functionWords: FunctionWords) -> Bool {
            (word.count == 1 && !Self.isIdeograph(word.unicodeScalars.first!))
                || Term.word(word, prefix: false).isFunctionWord(in: functionWords)
                || (afterApostrophe && ["ll", "ve", "re"].contains(word))
        }

        /// A letter of a script whose words are found without spaces: Han, kana, Thai, Lao, Khmer and
        /// Burmese, which ICU's dictionaries cut, and Hangul, whose runs the index also holds as pairs (every
        /// part that ``isPair`` is of these scripts).
        static func isCutWithoutSpaces(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x0E00...0x0EFF, 0x1000...0x109F, 0x1100...0x11FF, 0x1780...0x17FF, 0x3040...0x30FF, 0x3130...0x318F,
                0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF, 0xFF66...0xFF9F,
                0x20000...0x3FFFF:
                true
            default: false
            }
        }

        /// A Han character or Hangul syllable, a word on its own (`书`, `집`), unlike a letter.
        static func isIdeograph(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF, 0xAC00...0xD7A3: true
            default: false
            }
        }
    }

    /// The words the analyzer finds in `word` (``TextAnalyzer``, as the index's tokenizer finds them in
    /// an item): each stemmed for `languages` where it has stems, and a Chinese, Japanese or Korean word of
    /// three or more characters as its pairs of characters.
    static func parts(of word: Substring, languages: [String]) -> [Part] {
        let text = String(word)
        let bytes = Array(text.utf8)
        var parts: [Part] = []
        for token in TextAnalyzer.tokens(in: text, for: .indexing) {
            if token.isColocated {
                // A pair of the word before: the word gives way to its pairs.
                guard let last = parts.last else { continue }
                if !last.isPair { parts[parts.count - 1].hasPairs = true }
                parts.append(Part(word: token.text, afterApostrophe: last.afterApostrophe, isPair: true))
                continue
            }
            let before = token.byteRange.lowerBound
            let afterApostrophe =
                before > 0
                && (bytes[before - 1] == UInt8(ascii: "'")
                    || (before >= 3 && bytes[(before - 3)..<before].elementsEqual("\u{2019}".utf8)))
            // Stemmed as typed, before its accents are folded, as the index stems an item's words
            // (Spanish "también" stems to "tambien", "tambien" to "tambi").
            let typed = String(decoding: bytes[token.byteRange], as: UTF8.self)
            var stems: [String] = []
            for language in languages {
                if let stem = TextAnalyzer.stem(typed, language: language), !stems.contains(stem) { stems.append(stem) }
            }
            parts.append(Part(word: token.text, stems: stems, afterApostrophe: afterApostrophe))
        }
        return parts
    }
}

/// What a search asks of the words: which of some items hold a combination of terms.
package indirect enum TermMatch: Hashable, Sendable {
    /// Items that hold the term.
    case term(FTSPattern.Term)
    /// Items that hold every one of the matches.
    case all([TermMatch])
    /// Items that hold any of the matches.
    case any([TermMatch])
    /// Items whose words of each group stand together, and the groups within `distance` words of one another.
    case near([FTSPattern.Group], distance: Int)
}

extension TermMatch {
    /// The match as an FTS5 `MATCH` expression.
    package var ftsExpression: String {
        switch self {
        case .term(let term): term.expression
        case .all(let matches): matches.map(\.ftsExpression).joined(separator: " AND ")
        case .any(let matches): "(" + matches.map(\.ftsExpression).joined(separator: " OR ") + ")"
        case .near(let groups, let distance):
            "NEAR(" + groups.map(\.expression).joined(separator: " ") + ", \(distance))"
        }
    }
}
