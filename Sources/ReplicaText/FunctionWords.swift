/// The function words of a query's languages: words that say how a question is put ("de", "la", "der",
/// "και", "में"), not what it is about, folded as the analyzer folds words.
///
/// Snowball's stop-word lists for the languages it has them for, and short lists of replica's own for
/// Greek, Arabic and Hindi (`FunctionWords+Lists.swift` says where each comes from). English has its own
/// list in the search (with its contractions). Vietnamese has none (its compounds are made of syllables
/// that are function words alone), nor have Chinese, Japanese, Korean and Thai, whose particles the
/// dictionaries cut into words of their own that BM25 weighs down for how common they are.
public struct FunctionWords: Hashable, Sendable {
    /// The languages (ISO 639-1 codes) whose lists are held.
    public let languages: [String]
    private let words: Set<String>

    /// The function words of `languages` (BCP 47 tags or ISO 639-1 codes; only the language subtag counts).
    public init(languages: [String]) {
        let codes = languages.map { String($0.prefix { $0 != "-" && $0 != "_" }).lowercased() }
        var unique: [String] = []
        for code in codes where !unique.contains(code) { unique.append(code) }
        self.languages = unique
        words = unique.reduce(into: Set<String>()) { $0.formUnion(Self.folded(of: $1)) }
    }

    /// Whether `word` (one word, folded by the analyzer or as typed) is a function word of these languages.
    public func contains(_ word: String) -> Bool {
        guard !words.isEmpty else { return false }
        if words.contains(word) { return true }
        let tokens = TextAnalyzer.tokens(in: word, for: .query)
        return tokens.count == 1 && tokens[0].text != word && words.contains(tokens[0].text)
    }

    public static func == (left: FunctionWords, right: FunctionWords) -> Bool { left.languages == right.languages }
    public func hash(into hasher: inout Hasher) { hasher.combine(languages) }

    /// Whether replica has a list of function words for `language` (an ISO 639-1 code) besides English's.
    public static func hasList(for language: String) -> Bool { lists[language] != nil }

    /// Every list, folded as the analyzer folds an item's words: made once, at the first use.
    private static let foldedLists: [String: Set<String>] = lists.mapValues { list in
        Set(list.split(whereSeparator: \.isWhitespace).flatMap { TextAnalyzer.tokens(in: String($0), for: .query).map(\.text) })
    }

    private static func folded(of language: String) -> Set<String> { foldedLists[language] ?? [] }
}
