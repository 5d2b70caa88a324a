import Foundation

/// How many items of each language an index has been given: what a query whose language cannot be told
/// (a word or two, no ``SearchQuery/languages``) is stemmed for, and whether a query is in a language of
/// the index's items (``Ranking/isWritten(_:in:)``).
///
/// Each writer counts the languages of the rows it writes (the language their words are stemmed for:
/// ``TextColumns/language``; apart, a language without stems: ``TextColumns/unstemmedLanguage``) and
/// adds them to the index's `meta` once, as its transaction ends, on both backends. A new index starts at
/// none; an SQLite index made before the count has it counted once from its items by a migration; a
/// PostgreSQL one made before has none, and answers such queries in English as before. The counts only
/// grow: an item written twice counts twice, and a language whose items have all gone is still named. A
/// query stemmed for one language too many only has one more way for each word to match; one never
/// stemmed for the account's language would miss its items' other forms.
package struct WrittenLanguages: Equatable, Sendable {
    /// `meta`: the counts of languages with stems, as `de:12 en:3400`.
    package static let key = "languages"
    /// `meta`: the counts of languages without stems (Chinese, Japanese, Thai…), as `ja:40 zh:3`. An index
    /// that held items in such languages before they were counted has none (``countsUnstemmed``).
    package static let unstemmedKey = "languages_unstemmed"

    /// The least share of the items written that makes a language one a query is stemmed for.
    package static let leastShare = 0.02
    /// The most languages a query is stemmed for.
    package static let most = 4

    /// Languages with stems, by items.
    package private(set) var counts: [String: Int]
    /// Languages without stems, by items.
    package private(set) var unstemmed: [String: Int]
    /// Whether the index counts its items in languages without stems: one made before they were counted,
    /// holding such items, does not, and cannot tell a Japanese query from one across languages.
    package let countsUnstemmed: Bool
    /// The languages known of the index's items as this writer settles the language of rows CLD2 could
    /// not tell (``IndexWriter/settleLanguage(of:)``): the counts `meta` held when first needed, and the
    /// known languages of the rows given since; `nil` until needed.
    var known: [String: Int]?

    package init(counts: [String: Int] = [:], unstemmed: [String: Int] = [:]) {
        self.counts = counts
        self.unstemmed = unstemmed
        countsUnstemmed = true
    }

    /// The counts stored in `meta` (``key``, ``unstemmedKey``); none from a value that cannot be read.
    package init(meta: String?, unstemmedMeta: String? = nil) {
        counts = Self.counts(meta)
        unstemmed = Self.counts(unstemmedMeta)
        countsUnstemmed = unstemmedMeta != nil
    }

    /// The counts an index's `meta` holds.
    package init(meta: (String) throws -> String?) rethrows {
        self.init(meta: try meta(Self.key), unstemmedMeta: try meta(Self.unstemmedKey))
    }

    fileprivate static func counts(_ meta: String?) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in (meta ?? "").split(separator: " ") {
            let parts = entry.split(separator: ":")
            guard parts.count == 2, let count = Int(parts[1]), count > 0 else { continue }
            counts[String(parts[0]), default: 0] += count
        }
        return counts
    }

    fileprivate static func meta(_ counts: [String: Int]) -> String {
        counts.keys.sorted().map { "\($0):\(counts[$0]!)" }.joined(separator: " ")
    }

    /// The counts of languages with stems as `meta` stores them, by language.
    package var meta: String { Self.meta(counts) }

    package mutating func add(_ language: String?, count: Int = 1) {
        guard let language, count > 0 else { return }
        counts[language, default: 0] += count
    }

    /// Counts a row written: its language with stems, else its language without.
    package mutating func add(_ text: TextColumns) {
        if let language = text.language {
            add(language)
        } else if let language = text.unstemmedLanguage {
            unstemmed[language, default: 0] += 1
        }
    }

    /// The language of the most items in `counts` (of two as common, the first in alphabetical order),
    /// else English: the language an item's words are stemmed for when CLD2 cannot tell its text's.
    package static func commonest(of counts: [String: Int]) -> String {
        counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? "en"
    }

    /// The languages with stems of at least ``leastShare`` of the items written, the commonest first, at
    /// most ``most``: those a query whose language cannot be told is stemmed for.
    package var common: [String] { Self.common(of: counts) }

    /// The languages, with stems or without, of at least ``leastShare`` of the items written, the
    /// commonest first, at most ``most``: those the index's items are written in.
    package var commonOfEvery: [String] { Self.common(of: counts.merging(unstemmed, uniquingKeysWith: +)) }

    private static func common(of counts: [String: Int]) -> [String] {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return [] }
        return counts.filter { Double($0.value) >= leastShare * Double(total) }
            .sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .prefix(most).map(\.key)
    }
}

extension IndexWriter {
    /// Settles the language of a row about to be written whose language CLD2 could not tell
    /// (``TextColumns/languageIsKnown``): the language most of the index's items are in, counting those
    /// written before this transaction and the rows given to this writer so far, else English. A short
    /// note in an account of Spanish is stemmed as Spanish. A known language is counted for the rows
    /// that follow.
    ///
    /// - Returns: whether the language changed (words made for the old one must be made again).
    @discardableResult
    package func settleLanguage(of text: inout TextColumns) throws -> Bool {
        var known = try knownLanguages()
        defer { writtenLanguages.known = known }
        guard !text.languageIsKnown else {
            if let language = text.language { known[language, default: 0] += 1 }
            return false
        }
        let settled = WrittenLanguages.commonest(of: known)
        text.languageIsKnown = true
        guard settled != text.language else { return false }
        text.language = settled
        return true
    }

    /// The language a row whose language CLD2 cannot tell is stemmed for, by the index's items as this
    /// writer knows them (``settleLanguage(of:)``), without counting a row.
    package func languageWhenUnknown() throws -> String {
        WrittenLanguages.commonest(of: try knownLanguages())
    }

    private func knownLanguages() throws -> [String: Int] {
        if let known = writtenLanguages.known { return known }
        let known = WrittenLanguages(meta: try meta(WrittenLanguages.key)).counts
        writtenLanguages.known = known
        return known
    }

    /// Adds the languages this writer counted (``writtenLanguages``) to those `meta` holds, in the
    /// writer's transaction, and forgets them. An index that holds no count (one made on PostgreSQL
    /// before the count began, whose items' languages are not stored; for languages without stems, one
    /// that held such items before they were counted) is left without one: counting from its next items
    /// would name their language alone.
    package func saveWrittenLanguages() throws {
        let written = writtenLanguages
        guard !written.counts.isEmpty || !written.unstemmed.isEmpty else { return }
        defer { writtenLanguages = WrittenLanguages() }
        for (key, counts) in [
            (WrittenLanguages.key, written.counts), (WrittenLanguages.unstemmedKey, written.unstemmed),
        ]
        where !counts.isEmpty {
            guard let counted = try meta(key) else { continue }
            try setMeta(
                key, WrittenLanguages.meta(WrittenLanguages.counts(counted).merging(counts, uniquingKeysWith: +)))
        }
    }
}
