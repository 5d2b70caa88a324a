import Synchronization

/// The function words of a query's languages: words that say how a question is put ("de", "la", "der",
/// "και", "में"), not what it is about, folded as the analyzer folds words.
///
/// Snowball's stop-word lists for the languages it has them for, and short lists of replica's own for
/// Greek, Arabic, Hindi, Chinese, Japanese, Korean and Thai (`FunctionWords+Lists.swift` says where each
/// comes from). English has its own list in the search (with its contractions), and the words of
/// Chinese, Japanese, Korean and Thai count in every query as English's do (``ofTheirOwnScripts``).
/// Vietnamese has none: its compounds are made of syllables that are function words alone.
public struct FunctionWords: Hashable, Sendable {
    /// The languages (ISO 639-1 codes) whose lists are held.
    public let languages: [String]
    private let words: Set<String>

    /// The function words of `languages` (BCP 47 tags or ISO 639-1 codes; only the language subtag counts).
    public init(languages: [String]) {
        var unique: [String] = []
        for code in languages.map(TextAnalyzer.languageCode(ofTag:)) where !unique.contains(code) {
            unique.append(code)
        }
        self.languages = unique
        words = unique.reduce(into: Set<String>()) { $0.formUnion(Self.folded(of: $1)) }
    }

    /// Whether `word`, one word folded as the analyzer folds it (a query's words are), is a function word
    /// of these languages. (The lists hold single words: a word the analyzer splits is none of them.)
    public func contains(_ word: String) -> Bool { words.contains(word) }

    /// The function words of Chinese, Japanese, Korean and Thai, which count in every query as English's
    /// do: no other language writes them, and a query written without spaces is never long enough for
    /// the search to tell its language (it asks for four words between spaces).
    public static let ofTheirOwnScripts = FunctionWords(languages: ["zh", "ja", "ko", "th"])

    public static func == (left: FunctionWords, right: FunctionWords) -> Bool { left.languages == right.languages }
    public func hash(into hasher: inout Hasher) { hasher.combine(languages) }

    private static let foldedLists = Mutex<[String: Set<String>]>([:])

    /// One language's list, folded as the analyzer folds an item's words, at its first use (a one-shot
    /// `replica search` folds only the lists it asks for).
    private static func folded(of language: String) -> Set<String> {
        if let folded = foldedLists.withLock({ $0[language] }) { return folded }
        let folded = Set(
            (lists[language] ?? "").split(whereSeparator: \.isWhitespace).flatMap {
                TextAnalyzer.tokens(in: String($0), for: .query).map(\.text)
            })
        foldedLists.withLock { $0[language] = folded }
        return folded
    }
}
