public import Foundation
import ReplicaCore
import ReplicaText

/// A range of dates; either end may be open.
public struct DateRange: Hashable, Sendable {
    /// The earliest date included.
    public var start: Date?
    /// The first date no longer included.
    public var end: Date?

    /// Creates a range from `start` (included) to `end` (excluded); a `nil` end is open.
    public init(start: Date? = nil, end: Date? = nil) {
        self.start = start
        self.end = end
    }

    /// Whether `date` is at or after ``start`` and before ``end``, ignoring an open end.
    public func contains(_ date: Date) -> Bool {
        (start.map { date >= $0 } ?? true) && (end.map { date < $0 } ?? true)
    }
}

/// What to look for: words as a person or a model typed them, and filters.
///
/// The words are never pasted into the full-text engine's syntax. Quotes, parentheses, `AND`, `OR`,
/// `NEAR`, `NOT`, `column:` prefixes and other operator characters are plain text: a document containing
/// "and" is found by searching for `and`. A phrase in balanced double quotes matches those words in that
/// order; a word ending in `*` matches any word that starts with it.
///
/// For example:
/// ```swift
/// var query = SearchQuery("\"launch risk\" supplier*")
/// query.contentTypes = [.text]
/// query.modified = DateRange(start: lastWeek)
/// query.limit = 20
/// ```
public struct SearchQuery: Hashable, Sendable {
    /// The words to search for, or `nil` to list items that pass the filters, newest first.
    public var text: String?
    /// Match only items that have every word, each in any of its forms (as typed, or its stem in any of
    /// the query's languages). By default the words are ranked evidence: an item with any
    /// meaningful word is a candidate, and items with more of the words, rarer words, and the words near
    /// each other come first.
    public var requiresAllWords = false
    /// The languages the person types in, as BCP 47 tags (`de`, `pt-BR`; Core Spotlight's
    /// `keyboardLanguage`): the query's words are stemmed for the first that Snowball stems, and a model
    /// that does not read the first (``Embedder/languages``) leaves the search to the words. Empty: the
    /// language the text is in when it is clear (a sentence of four words or more), else English.
    public var languages: [String] = []
    /// Also match the index's words one edit from a typed word of five letters or more (two from nine)
    /// that the index does not hold, or holds in one or two items and fewer than a tenth of those of such
    /// a word (`lanch` finds "launch"; the first letter is kept, and a swap of two letters side by side is
    /// one edit),
    /// each ranked below the word as typed. Not where every word is required (``requiresAllWords``), and
    /// not for phrases or prefixes. `false`: the words as typed only (`--exact`).
    public var typoTolerance = true
    /// Rank by the words alone, without semantic search (Core Spotlight's `disableSemanticSearch`).
    public var disablesSemanticSearch = false
    /// Rank by meaning alone: the items nearest the text, whatever their words, down to a cosine of 0.20
    /// and half the nearest one's. Without an embedder, nothing is found.
    public var disablesLexicalSearch = false
    /// Only items whose content type conforms to one of these.
    public var contentTypes: [ContentType] = []
    /// Only items in one of these domains or under them.
    public var domains: [DomainIdentifier] = []
    /// Only these accounts (of those signed in); empty means every signed-in account.
    public var accounts: [AccountID] = []
    /// Only items created in this range.
    public var created: DateRange?
    /// Only items modified in this range.
    public var modified: DateRange?
    /// Only items with an author whose name or handle contains one of these (case-insensitive).
    public var authors: [String] = []
    /// Only items with a recipient whose name or handle contains one of these (case-insensitive).
    public var recipients: [String] = []
    /// Only items made by these owners.
    public var owners: [ItemOwner] = []
    /// No items made by these owners.
    public var excludedOwners: [ItemOwner] = []
    /// Only items whose attributes satisfy this condition, as Core Spotlight's query strings write it
    /// (see ``SearchQuery/init(queryString:limit:)``).
    public var predicate: QueryPredicate?
    /// The time zone in which the predicate's `$time.today`, `$time.this_week` and the like begin.
    public var timeZone: TimeZone = .current
    /// The attributes each result carries (Core Spotlight's `fetchAttributes`); `nil` for every attribute
    /// but the text content. Name `textContent` to get the full text too.
    public var fetchAttributes: [AttributeKey]?
    /// The most results to return.
    public var limit: Int = 20

    /// The largest `limit` accepted.
    public static let maximumLimit = 10_000
    /// The most values one filter may list (``contentTypes``, ``domains``, ``authors``, …): each is a term
    /// of one SQL expression, and SQLite refuses an expression nested more than 1,000 deep.
    public static let maximumFilterValues = 200
    /// The most bytes a query's text may hold (64 KiB): far past any question, and a bound on what one
    /// request costs (its words are also limited to 64).
    public static let maximumTextBytes = 65_536

    /// Creates a query for these words (or, with `nil`, a listing), returning at most `limit` results.
    public init(_ text: String? = nil, limit: Int = 20) {
        self.text = text
        self.limit = limit
    }

    /// A query for the items that satisfy a Core Spotlight query string, newest first.
    ///
    /// For example:
    /// ```swift
    /// var query = try SearchQuery(queryString: #"authorNames == "ada*"cd && contentModificationDate >= $time.this_week"#)
    /// query.fetchAttributes = [.title, .authorNames]
    /// ```
    ///
    /// The string is `attribute op value` comparisons joined with `&&`, `||`, `!` and parentheses: see
    /// ``QueryPredicate`` for the operators, wildcards and modifiers, and ``TimeExpression`` for dates.
    /// Typed words can be added too (`text`), and the predicate then filters what they find.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidQuery` naming the column of the mistake.
    public init(queryString: String, limit: Int = 20) throws {
        self.init(nil, limit: limit)
        predicate = try QueryPredicate(queryString: queryString)
    }

    /// Checks the query and returns the safe full-text pattern for its words (`nil` without words).
    ///
    /// - Throws: ``ReplicaError`` with code `invalidQuery` when the text has no searchable word, and
    ///   `invalidArgument` for a limit out of range.
    ///
    /// - Parameter indexLanguages: the languages of the index's items, the commonest first
    ///   (``WrittenLanguages/common``), read only when ``languages`` are not given: when the query's own
    ///   cannot be told, its words are stemmed for each of them; when CLD2 tells a language other than
    ///   the commonest of the index's items (a Spanish question it takes for English or Galician, in an
    ///   account of Spanish notes and a few English ones), for theirs after it. Their function words
    ///   count only beside the others.
    package func validatedPattern(indexLanguages: () throws -> [String] = { [] }) throws -> FTSPattern? {
        guard (1...Self.maximumLimit).contains(limit) else {
            throw ReplicaError(
                .invalidArgument, "the result limit must be between 1 and \(Self.maximumLimit); it is \(limit)")
        }
        for (name, count) in [
            ("content types", contentTypes.count), ("domains", domains.count), ("authors", authors.count),
            ("recipients", recipients.count), ("owners", owners.count), ("excluded owners", excludedOwners.count),
        ]
        where count > Self.maximumFilterValues {
            throw ReplicaError(
                .invalidArgument,
                "a query may name at most \(Self.maximumFilterValues) \(name); it names \(count). "
                    + "Name fewer, or a type or domain above them (account.a matches account.a.notes)")
        }
        guard let text else { return nil }
        guard text.utf8.count <= Self.maximumTextBytes else {
            throw ReplicaError(
                .invalidQuery,
                "the query is \(text.utf8.count) bytes long; the most a query may hold is "
                    + "\(Self.maximumTextBytes / 1024) KiB: search for its words, not the whole text")
        }
        var (languages, known) = self.languages(of: text)
        if self.languages.isEmpty {
            let others = try indexLanguages()
            if !known, !others.isEmpty {
                languages = others
            } else if known, let told = languages.first, let commonest = others.first, commonest != told {
                languages += others.filter { $0 != told }
            }
        }
        let stemming = languages.compactMap(TextAnalyzer.stemmingLanguage(ofTag:))
        return try FTSPattern(
            text: text, requiringAll: requiresAllWords, language: stemming.first,
            moreLanguages: Array(stemming.dropFirst()), functionWords: FunctionWords(languages: languages))
    }

    /// The language the query is in, for choosing whether to search by meaning too
    /// (``Embedder/languages``): the first the person typed in; for text whose letters are mostly of a
    /// script other than Latin (a Chinese question has no spaces to count its words by), the one CLD2 is
    /// sure of, else `und` (undetermined, and not English); for Latin letters, the one CLD2 is sure of
    /// in a text of ``wordsToTellTheModelsLanguage`` words or more; else `nil`, not told.
    package func languageForMeaning() -> String? {
        guard let text else { return nil }
        if let told = languages.first { return TextAnalyzer.languageCode(ofTag: told) }
        let letters = text.unicodeScalars.filter(\.properties.isAlphabetic)
        // Basic Latin to Latin Extended-B and IPA, and Latin Extended Additional (Vietnamese).
        let latin = letters.filter { $0.value < 0x0300 || (0x1E00...0x1EFF).contains($0.value) }.count
        let otherScript = 2 * latin < letters.count
        // CLD2 runs only where its answer counts: not for the few Latin words most queries are.
        guard !letters.isEmpty,
            otherScript || text.split(whereSeparator: \.isWhitespace).count >= Self.wordsToTellTheModelsLanguage
        else { return nil }
        let detected = TextAnalyzer.language(of: text).flatMap { $0.isReliable ? $0.code : nil }
            .map(TextAnalyzer.languageCode(ofTag:))
        // CLD2 answers English when it cannot tell; no English is written in other letters.
        return otherScript ? detected.flatMap { $0 == "en" ? nil : $0 } ?? "und" : detected
    }

    /// How many words a query of Latin letters needs before the model's choice trusts CLD2 with its
    /// language: a wrong language costs an English question its search by meaning, which a wrongly
    /// stemmed word does not (CLD2 is sure "Can I delete Python?" is Latin).
    static let wordsToTellTheModelsLanguage = 6

    /// How many words a query needs before its language is told from them.
    static let wordsToTellTheLanguage = 4

    /// The languages the query is written in, and whether they are known: ``languages`` when given,
    /// else the one CLD2 is sure of; else English, not known.
    func languages(of text: String) -> (codes: [String], known: Bool) {
        if !languages.isEmpty { return (languages, true) }
        // A word or two can look like another language (CLD2 is sure "eiger" is German), and a query
        // stemmed for the wrong one misses its own words: only a sentence is told apart.
        guard text.split(whereSeparator: \.isWhitespace).count >= Self.wordsToTellTheLanguage,
            let detected = TextAnalyzer.language(of: text), detected.isReliable
        else { return (["en"], false) }
        return ([detected.code], true)
    }
}
