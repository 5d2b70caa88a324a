import Foundation
import ReplicaCore
import ReplicaText

/// The numbers the ranking is made of, the same for every backend.
package enum Ranking {
    /// How close in meaning an item must be to be found by meaning (closeness: the cosine measured from
    /// the model's ``Embedder/similarityBaseline``, the cosine itself for MiniLM): a floor under the
    /// relative cut of ``closeEnoughByMeaning(_:score:match:)``, the same beside the words and by meaning
    /// alone. 0.20 lets "pet health" find a vet's note (0.33) with MiniLM, and a Spanish question find
    /// its Chinese answer with e5, whose cosines across languages are lower than within one (0.80 against
    /// 0.91 for the answer, on XQuAD-R); the relative cut keeps the rest out. Beside the words, 0.30 put
    /// 471 of 1,190 Chinese answers to Spanish questions out of reach (362 at 0.20) and none of the
    /// Chinese questions' own (`docs/benchmarks/languages.md`). For a model whose unrelated texts come
    /// closer than that (``Embedder/unrelatedCloseness``), an item below where they reach must also
    /// stand out from the index's other items (``MeaningFloor``).
    package static let minimumSimilarity = 0.20

    /// How much the words weigh beside meaning in hybrid search (meaning: the rest).
    package static let wordsWeight = 0.4

    /// How much the words weigh beside meaning when the query is in a language none of the index's items
    /// are commonly written in (a Spanish question over Chinese notes): its words can match only what
    /// languages share, numbers and names, and at 0.4 those lifted the wrong sentences above the answer
    /// meaning found. On XQuAD-R with e5, Spanish questions over the Chinese sentences scored 0.673 at
    /// 0.4, 0.706 at 0.2 (and at 0.1) and 0.721 by meaning alone (`docs/benchmarks/languages.md`).
    package static let wordsWeightAcrossLanguages = 0.2

    /// The least span of closeness that the meaning's share of a hybrid score is spread over: from the
    /// search's closest item (1) down to its least close candidate (0), or down to this far below the
    /// closest when its candidates lie nearer each other. Counted over the candidates' own span rather
    /// than from the model's baseline, closeness weighs alike for every model: with e5, whose cosines
    /// lie between 0.7 and 1, hybrid nDCG@10 went from 0.822 to 0.850 on the Python FAQ and from 0.715
    /// to 0.742 on Debian's, every other set within 0.003 (`docs/benchmarks/languages.md`, 2026-12-06).
    /// No set's candidates lay within 0.2 of each other; among three notes about as close as each
    /// other, the least span keeps meaning from reordering them on a hair's difference.
    package static let closenessSpan = 0.2

    /// The meaning's share (0 to 1) of the hybrid score of an item `closeness` close to the query, when
    /// the search's candidates lie from `farthest` to `closest`: 1 for the closest, 0 for the least
    /// close (or for one ``closenessSpan`` below the closest, when they lie nearer each other).
    package static func meaningShare(_ closeness: Double, closest: Double, farthest: Double) -> Double {
        max(1 - (closest - closeness) / max(closest - farthest, closenessSpan), 0)
    }

    /// Whether a query in `language` (told or seen; `nil` or `und` when it cannot be told) is in one of
    /// the languages an index's items are commonly written in (``WrittenLanguages/commonOfEvery``), so
    /// that its words weigh ``wordsWeight``, not ``wordsWeightAcrossLanguages``. A query whose language
    /// cannot be told, and an index whose languages are not counted, count as the same language. So does
    /// a query in a language without stems (Chinese, Japanese, Thai…) over an index that does not count
    /// its items in those languages (``WrittenLanguages/countsUnstemmed``: made before they were
    /// counted): uncounted, a Japanese question over Japanese paragraphs found none of them written in
    /// Japanese and weighed its words as across languages (JSQuAD hybrid nDCG@10 0.943 against 0.953).
    /// The counts (`written`) are read only when the query's language is told or seen.
    package static func isWritten(_ language: String?, in written: @autoclosure () throws -> WrittenLanguages) rethrows
        -> Bool
    {
        guard let language, language != "und" else { return true }
        let written = try written()
        guard written.countsUnstemmed || TextAnalyzer.stems(language) else { return true }
        let common = written.commonOfEvery
        return common.isEmpty || common.contains(language)
    }

    /// The share of a query's best score that an item found by meaning alone must reach.
    package static let meaningShareOfBest = 0.5

    /// How many of the best candidates by BM25 get the second step's lookups.
    static let rerankDepth = 40

    /// The most candidates BM25 hands to the second step.
    static let maximumCandidates = 1_000

    /// How many words the share of words present is counted over (the rest still count in BM25).
    package static let maximumCountedTerms = 12

    /// How many candidates a search looks at: typed text a few times more than asked for, to rank
    /// them; a listing, no more.
    static func candidateCount(_ query: SearchQuery, pattern: FTSPattern?) -> Int {
        pattern == nil ? query.limit : max(query.limit, min(maximumCandidates, max(query.limit * 3, query.limit + 30)))
    }

    /// `results` (best first) without the items found by meaning alone that score less than
    /// ``meaningShareOfBest`` of the best: a query's best evidence sets the bar. Beside an exact match of
    /// its words (INV-2024-0917 at 0.69), the 49 other invoices close in meaning (0.30) are left out;
    /// when nothing matches by the words, the nearest item by meaning is the best and its peers stay.
    package static func closeEnoughByMeaning<Result>(
        _ results: [Result], score: (Result) -> Double,
        match: (Result) -> SearchMatch
    ) -> [Result] {
        guard let best = results.map(score).max(), best > 0 else { return results }
        return results.filter { match($0) != .semantic || score($0) >= meaningShareOfBest * best }
    }

    /// How many of `sources` have each word and each title.
    package static func tally(_ sources: [CompletionSource]) -> (words: [String: Int], titles: [String: Int]) {
        var words: [String: Int] = [:]
        var titles: [String: Int] = [:]
        for source in sources {
            for word in source.words { words[word, default: 0] += 1 }
            if let title = source.title { titles[title, default: 0] += 1 }
        }
        return (words, titles)
    }
}

// The ranking, written once over the backend's primitives (`IndexReader`), so that every backend ranks
// the same candidates the same way.
extension IndexReader {
    /// Runs a search; rows whose stored attributes cannot be read are left out and named in `unreadable`.
    ///
    /// Typed text is ranked in two steps. BM25 (with the column weights) picks the candidates: a few
    /// times more than asked for. Each candidate then gets a score from 0 to 1 that means the same in
    /// every index, whatever its size (BM25 alone depends on how many items an index holds, so a title
    /// match alone in a small index would lose to body matches from a big one):
    ///
    ///     0.65 × BM25 ÷ the best BM25 of the search in this index
    ///   + 0.20 × the share of the meaningful words the item has (one it has only through the
    ///            correction of a typo, three quarters: ``Typos``)
    ///   + 0.10 if a word is in the title, keywords or people
    ///   + 0.05 if all the words are near each other (within 2 per word + 4)
    ///
    /// A query of function words alone ("the which how") is ranked by them, its scores multiplied by
    /// ``FTSPattern/functionWordsScoreScale`` (0.3): never as high as the best match (0.65 at least) of a
    /// query with a meaningful word.
    /// The weights were chosen on the FAQ set of `Benchmarks/quality` (see `docs/benchmarks/quality.md`).
    /// With `semantic`, items are also found by meaning, and each result's score is
    /// 0.4 × the score above + 0.6 × the closeness of its best passage to the query, as a share of the
    /// span from the search's least close candidate (0) to its closest (1; a span of at least
    /// ``Ranking/closenessSpan``; the closeness is the cosine measured from the model's
    /// ``Embedder/similarityBaseline``; an item not embedded yet keeps the score above): see
    /// `docs/benchmarks/quality.md` for the weights' measurements and `docs/benchmarks/languages.md` for
    /// the span. A query in a language none of the index's items are commonly written in (among those
    /// the index counts: ``Ranking/isWritten(_:in:)``) weighs its words 0.2 and meaning 0.8
    /// (``Ranking/wordsWeightAcrossLanguages``). An item found by meaning alone needs a closeness
    /// of at least ``Ranking/minimumSimilarity`` (and, below the model's ``Embedder/unrelatedCloseness``,
    /// to stand out from the index's other items: ``MeaningFloor``) and, with its closeness itself in
    /// place of the share, half the search's best score (``Ranking/closeEnoughByMeaning(_:score:match:)``).
    package func search(_ query: SearchQuery, pattern: FTSPattern?, semantic: SemanticQuery? = nil) throws -> (
        found: [FoundItem], unreadable: [ItemIdentifier]
    ) {
        let (candidates, unreadable) = try lexicalCandidates(query, pattern: pattern)
        return (try finishing(candidates, query: query, pattern: pattern, semantic: semantic), unreadable)
    }

    /// The pattern of `query`'s text, its words stemmed for the query's languages or, when those cannot
    /// be told, for the languages of this index's items (``WrittenLanguages``).
    package func pattern(of query: SearchQuery) throws -> FTSPattern? {
        try query.validatedPattern(indexLanguages: { WrittenLanguages(meta: try meta(WrittenLanguages.key)).common })
    }

    /// The first half of ``search(_:pattern:semantic:)``, which needs no query vector: the candidates
    /// by their words, ranked (or the listing, without typed text). A search by meaning alone has none.
    package func lexicalCandidates(_ query: SearchQuery, pattern: FTSPattern?) throws
        -> (found: [(item: FoundItem, rowID: Int64)], unreadable: [ItemIdentifier])
    {
        if pattern != nil, query.disablesLexicalSearch { return ([], []) }
        let pattern = try pattern.map { query.typoTolerance ? try correctingTypos($0) : $0 }
        let (found, inHeading, unreadable) = try matches(
            query, pattern: pattern, limit: Ranking.candidateCount(query, pattern: pattern))
        guard let pattern else { return (found, unreadable) }
        return (try rank(found, pattern, inHeading: inHeading), unreadable)
    }

    /// The second half of ``search(_:pattern:semantic:)``: the items found by meaning fused in, entity
    /// priority and engagement added, the best `limit` returned with the attributes asked for.
    package func finishing(
        _ found: [(item: FoundItem, rowID: Int64)], query: SearchQuery, pattern: FTSPattern?,
        semantic: SemanticQuery?
    ) throws -> [FoundItem] {
        guard pattern != nil else { return try fetching(query.fetchAttributes, found.prefix(query.limit).map(\.item)) }
        let candidates = Ranking.candidateCount(query, pattern: pattern)
        // The query's language, told or seen: CLD2 runs once for this index's search, and only when the
        // search is by meaning too.
        let language = semantic == nil ? nil : query.languageForMeaning()
        let semantic = try readingThisIndex(semantic, query: query, language: language)
        var found = found
        if query.disablesLexicalSearch {
            guard let semantic else { return [] }
            found = try fuse([], semantic, query: query, candidates: candidates, meaningOnly: true)
        } else if let semantic {
            found = try fuse(
                found, semantic, query: query, candidates: candidates,
                wordsWeight: try isWrittenIn(language) ? Ranking.wordsWeight : Ranking.wordsWeightAcrossLanguages)
        }
        found = try raisingPriorityAndEngagement(found)
        if let semantic { found = try showingBestPassages(found, limit: query.limit, semantic: semantic) }
        return try fetching(query.fetchAttributes, try withSnippets(found.prefix(query.limit)))
    }

    /// `semantic`, or `nil` when its model would only reorder what the words found: the model reads some
    /// languages only (``SemanticQuery/languages``: MiniLM, English), the query's own cannot be told (a
    /// few words in Latin letters: ``SearchQuery/languageForMeaning()``; one told or seen is judged by the
    /// store before the vector is made), and none of the languages of this index's items
    /// (``WrittenLanguages/commonOfEvery``) is one it reads. Three Turkish words over Turkish sentences are
    /// then read as Turkish, as their stems are: MiniLM's vectors took 0.007 nDCG@10 from the words on
    /// XQuAD-R in Turkish. By meaning alone, and in an index whose languages are not counted, the model
    /// is always asked.
    private func readingThisIndex(_ semantic: SemanticQuery?, query: SearchQuery, language: String?) throws
        -> SemanticQuery?
    {
        guard let semantic, let read = semantic.languages, !query.disablesLexicalSearch, language == nil
        else { return semantic }
        let written = try WrittenLanguages(meta: meta).commonOfEvery
        return written.isEmpty || written.contains(where: read.contains) ? semantic : nil
    }

    /// Whether the query's `language` (told, or seen: ``SearchQuery/languageForMeaning()``) is one the
    /// index's items are commonly written in (``Ranking/isWritten(_:in:)``).
    private func isWrittenIn(_ language: String?) throws -> Bool {
        try Ranking.isWritten(language, in: try WrittenLanguages(meta: meta))
    }

    /// The items among the first `limit` found by meaning alone, each with its best passage as its
    /// snippet where that is not its first: no word of the query is there to show around (an English
    /// question's German answer), and the start of a long text may say nothing of what was found.
    private func showingBestPassages(
        _ found: [(item: FoundItem, rowID: Int64)], limit: Int, semantic: SemanticQuery
    ) throws -> [(item: FoundItem, rowID: Int64)] {
        let shown = found.prefix(limit).filter { $0.item.match == .semantic }.map(\.rowID)
        guard !shown.isEmpty else { return found }
        var passages: [Int64: (number: Int, asked: SemanticQuery)] = [:]
        for asked in [semantic] + semantic.alongside {
            for (rowID, number) in try bestPassages(of: shown, to: asked.vector, model: asked.model) where number > 0 {
                passages[rowID] = (number, asked)
            }
        }
        guard !passages.isEmpty else { return found }
        let bodies = try textContents(
            of: found.prefix(limit).filter { passages[$0.rowID] != nil }.map(\.item.item.uniqueIdentifier))
        return found.map { candidate in
            guard let (number, asked) = passages[candidate.rowID] else { return candidate }
            // The text the model read, in which its passages were counted.
            let attributes = candidate.item.item.attributeSet
            let text = PendingEmbedding.text(
                title: attributes.title, description: attributes.contentDescription,
                body: bodies[candidate.item.item.uniqueIdentifier])
            guard let start = asked.passageStart(number, text), start > text.startIndex else { return candidate }
            var shown = candidate
            let words = text[start...].prefix(240)
            shown.item.snippet =
                "…" + words.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                + (words.endIndex < text.endIndex ? "…" : "")
            return shown
        }
    }

    /// The items, each with its snippet made where the reader left it to be made (``FoundItem/pendingSnippet``).
    func withSnippets(_ found: ArraySlice<(item: FoundItem, rowID: Int64)>) throws -> [FoundItem] {
        guard found.contains(where: { $0.item.pendingSnippet != nil }) else { return found.map(\.item) }
        let matching = found.compactMap {
            candidate -> (rowID: Int64, identifier: ItemIdentifier, expression: String)? in
            guard case .matching(let expression) = candidate.item.pendingSnippet else { return nil }
            return (candidate.rowID, candidate.item.item.uniqueIdentifier, expression)
        }
        let snippets = matching.isEmpty ? [:] : try self.snippets(matching)
        return found.map { candidate in
            var item = candidate.item
            switch item.pendingSnippet {
            case .matching: item.snippet = snippets[candidate.rowID]
            case .made(let make): item.snippet = make()
            case nil: break
            }
            item.pendingSnippet = nil
            return item
        }
    }

    /// Completions of a typed prefix: words of the index that begin with it (as they are written, not as
    /// stemmed), and titles with such a word, each with how often it was seen among the first `sample`
    /// items that have one.
    package func completions(of prefix: String, sample: Int = 200) throws -> (
        words: [String: Int], titles: [String: Int]
    ) {
        Ranking.tally(try completionSourcesCorrectingTypos(of: prefix, sample: sample))
    }

    /// The first 200 items that have a word beginning with `prefix` (see ``IndexReader/completionSources(of:sample:)``);
    /// when none has, those with a word beginning with the prefix a typo in it most likely meant
    /// (``correctedPrefix(of:)``).
    package func completionSources(of prefix: String) throws -> [CompletionSource] {
        try completionSourcesCorrectingTypos(of: prefix, sample: 200)
    }

    private func completionSourcesCorrectingTypos(of prefix: String, sample: Int) throws -> [CompletionSource] {
        let found = try completionSources(of: prefix, sample: sample)
        guard found.isEmpty, let corrected = try correctedPrefix(of: prefix) else { return found }
        return try completionSources(of: corrected, sample: sample)
    }

    /// ``IndexReader/nearest(to:model:filters:limit:floor:)`` with no floor.
    package func nearest(to query: [Float], model: String, filters: SearchQuery, limit: Int) throws -> [(
        rowID: Int64, cosine: Double
    )] {
        try nearest(to: query, model: model, filters: filters, limit: limit, floor: .none)
    }

    /// Adds each entity's priority bonus (``SearchableIndex/entityBonus(_:)``) and ``Engagement/weight`` ×
    /// each item's engagement to its score, then sorts again: once, and only when something was added.
    func raisingPriorityAndEngagement(_ found: [(item: FoundItem, rowID: Int64)]) throws -> [(
        item: FoundItem, rowID: Int64
    )] {
        let engagement = try self.engagement(of: found.map(\.item.item.uniqueIdentifier))
        guard !engagement.isEmpty || found.contains(where: { $0.item.item.attributeSet[.entityPriority] != nil }) else {
            return found
        }
        var raised = found.map { candidate in
            var candidate = candidate
            let engaged = engagement[candidate.item.item.uniqueIdentifier] ?? 0
            candidate.item.engagement = engaged
            candidate.item.score = min(
                1,
                candidate.item.score + SearchableIndex.entityBonus(candidate.item.item.attributeSet)
                    + Engagement.weight * engaged)
            return candidate
        }
        raised.sort { $0.item.score > $1.item.score }
        return raised
    }

    /// Keeps only the attributes a query fetches (Core Spotlight's `fetchAttributes`), reading the text
    /// content back when it is one of them.
    private func fetching(_ keys: [AttributeKey]?, _ found: [FoundItem]) throws -> [FoundItem] {
        guard let keys else { return found }
        let wanted = Set(keys)
        let texts = wanted.contains(.textContent) ? try textContents(of: found.map(\.item.uniqueIdentifier)) : [:]
        return found.map { result in
            var result = result
            var attributes = AttributeSet()
            for key in wanted { attributes[key] = result.item.attributeSet[key] }
            if let text = texts[result.item.uniqueIdentifier], !text.isEmpty { attributes.textContent = text }
            result.item.attributeSet = attributes
            return result
        }
    }

    /// Lexical candidates and the items nearest in meaning, scored together.
    ///
    /// - Parameter meaningOnly: rank by meaning alone: each score is the cosine itself.
    private func fuse(
        _ lexical: [(item: FoundItem, rowID: Int64)], _ semantic: SemanticQuery, query: SearchQuery,
        candidates: Int, meaningOnly: Bool = false, wordsWeight: Double = Ranking.wordsWeight
    ) throws -> [(item: FoundItem, rowID: Int64)] {
        // The nearest items above the floor, and the cosines of the lexical candidates, wherever they rank.
        // Cosines as closeness from the model's baseline (``Embedder/similarityBaseline``). An item has
        // one model's vectors: the store's, or a former model's until it is embedded again.
        var cosines: [(rowID: Int64, cosine: Double)] = []
        var cosine: [Int64: Double] = [:]
        for asked in [semantic] + semantic.alongside {
            let floor = asked.meaningFloor(atCloseness: Ranking.minimumSimilarity)
            cosines += try nearest(
                to: asked.vector, model: asked.model, filters: query, limit: candidates, floor: floor
            )
            .map { (rowID: $0.rowID, cosine: asked.closeness($0.cosine)) }
            for (rowID, found) in try self.cosines(of: lexical.map(\.rowID), to: asked.vector, model: asked.model) {
                cosine[rowID] = max(cosine[rowID] ?? -1, asked.closeness(found))
            }
        }
        if !semantic.alongside.isEmpty {
            cosines = Array(cosines.sorted { $0.cosine > $1.cosine }.prefix(candidates))
        }
        let nearestRows = Set(cosines.map(\.rowID))
        for (rowID, similarity) in cosines { cosine[rowID] = max(cosine[rowID] ?? -1, similarity) }
        let lexicalRows = Set(lexical.map(\.rowID))
        // Meaning weighs as a share of the span from the least close candidate to the closest
        // (`Ranking.meaningShare`), as BM25 counts relative to its best match. Which items found by
        // meaning alone are shown still follows their closeness itself (the floor, and
        // `closeEnoughByMeaning` over the absolute scores below).
        let closest = cosine.values.max() ?? 0
        let farthest = cosine.values.min() ?? 0
        let relative = { (similarity: Double) in
            Ranking.meaningShare(similarity, closest: closest, farthest: farthest)
        }
        let mixed = { (words: Double, meaning: Double) in wordsWeight * words + (1 - wordsWeight) * meaning }
        var fused: [(candidate: (item: FoundItem, rowID: Int64), absolute: Double)] = lexical.map { candidate in
            var candidate = candidate
            guard let similarity = cosine[candidate.rowID] else { return (candidate, candidate.item.score) }
            let words = candidate.item.score
            candidate.item.score = mixed(words, relative(similarity))
            candidate.item.match = nearestRows.contains(candidate.rowID) ? .both : .lexical
            return (candidate, mixed(words, max(similarity, 0)))
        }
        // An item found by meaning alone must be close: every text has some similarity to every other (the
        // floor), and close against the query's best result (see `closeEnoughByMeaning`). And when every
        // word is required, meaning adds no item of its own. By meaning alone, the closeness is the score.
        let onlyByMeaning = query.requiresAllWords ? [] : cosines.filter { !lexicalRows.contains($0.rowID) }
        for var found in try foundItems(onlyByMeaning.map(\.rowID)) {
            let similarity = max(cosine[found.rowID] ?? 0, 0)
            found.item.score = meaningOnly ? similarity : mixed(0, relative(similarity))
            found.item.match = .semantic
            fused.append((found, meaningOnly ? similarity : mixed(0, similarity)))
        }
        return Ranking.closeEnoughByMeaning(fused, score: \.absolute, match: \.candidate.item.match)
            .map(\.candidate)
            .sorted { $0.item.score > $1.item.score }
    }

    /// Scores candidates as ``search(_:pattern:semantic:)`` describes, best first.
    private func rank(
        _ candidates: [(item: FoundItem, rowID: Int64)], _ pattern: FTSPattern,
        inHeading headings: Set<Int64>
    ) throws -> [(item: FoundItem, rowID: Int64)] {
        guard let best = candidates.map(\.item.score).max(), best > 0 else {
            return candidates.map { candidate in
                var candidate = candidate
                candidate.item.score = 0
                return candidate
            }
        }
        let terms = Array(pattern.meaningfulTerms.prefix(Ranking.maximumCountedTerms))
        // Only the best by BM25 get the checks below (the rest keep 0.65 × their relative BM25, which
        // ranks them after).
        let depth = min(candidates.count, Ranking.rerankDepth)
        let checked = candidates.prefix(depth).map(\.rowID)
        // Under `requiresAll` every candidate has every word.
        let present =
            pattern.requiresAll || terms.count == 1
            ? Dictionary(uniqueKeysWithValues: checked.map { ($0, terms.count) })
            : try wordsPresent(terms, in: checked, allMatched: pattern.meaningfulTerms.count == terms.count)
        // A word an item has only through a correction of a typo in it counts three quarters.
        var corrected: [Int64: Int] = [:]
        for term in terms where !term.typos.isEmpty {
            let typed = try rows(matching: .term(term.asTyped), among: checked)
            let typos = try rows(matching: .any(term.typos.map { .term(.word($0, prefix: false)) }), among: checked)
            for rowID in typos where !typed.contains(rowID) { corrected[rowID, default: 0] += 1 }
        }
        // Only an item with every word can have them all near each other.
        let withEveryWord = checked.filter { present[$0] == terms.count }
        let close =
            try pattern.nearMatch.map { withEveryWord.isEmpty ? [] : try rows(matching: $0, among: withEveryWord) }
            ?? Set(withEveryWord)
        var ranked = candidates.enumerated().map { position, candidate in
            guard position < depth else {
                var scored = candidate
                scored.item.score = 0.65 * candidate.item.score / best
                return scored
            }
            let present = present[candidate.rowID] ?? 0
            let inHeading = headings.contains(candidate.rowID)
            let close = close.contains(candidate.rowID)
            var scored = candidate
            let words = Double(present) - 0.25 * Double(corrected[candidate.rowID] ?? 0)
            scored.item.score =
                0.65 * candidate.item.score / best + 0.20 * words / Double(max(terms.count, 1))
                + (inHeading ? 0.10 : 0) + (close ? 0.05 : 0)
            return scored
        }
        if !pattern.hasMeaningfulWord {
            for position in ranked.indices { ranked[position].item.score *= FTSPattern.functionWordsScoreScale }
        }
        ranked.sort { $0.item.score > $1.item.score }
        return ranked
    }

    /// How many of `terms` each of `rowIDs` holds, each of which matched at least one of the query's terms.
    ///
    /// One query a term instead of a lookup per candidate and term (on the 100,000-item latency store,
    /// 9.6 ms of lookups a question became 5.7 ms of queries: `docs/benchmarks/indexing.md`): the items with the term and
    /// any other term. An item with two or more of the terms is among those of each of its terms; an item
    /// among none of them holds one term (`allMatched`: the terms are all the query's), or, when the query
    /// has more terms than are counted, one or none, which one more query tells.
    func wordsPresent(_ terms: [FTSPattern.Term], in rowIDs: [Int64], allMatched: Bool) throws -> [Int64: Int] {
        if let known = knownWordsPresent(terms, in: rowIDs) { return known }
        var counts = Dictionary(uniqueKeysWithValues: rowIDs.map { ($0, 0) })
        guard !rowIDs.isEmpty else { return counts }
        if terms.count == 2 {
            // The items with both: the same list for each of the two.
            for rowID in try rows(matching: .all([.term(terms[0]), .term(terms[1])]), among: rowIDs) {
                counts[rowID] = 2
            }
        } else {
            for (index, term) in terms.enumerated() {
                let others = terms.indices.filter { $0 != index }.map { TermMatch.term(terms[$0]) }
                for rowID in try rows(matching: .all([.term(term), .any(others)]), among: rowIDs) {
                    counts[rowID, default: 0] += 1
                }
            }
        }
        let alone = counts.filter { $0.value == 0 }.map(\.key)
        guard !alone.isEmpty else { return counts }
        let withOne = allMatched ? Set(alone) : try rows(matching: .any(terms.map(TermMatch.term)), among: alone)
        for rowID in withOne { counts[rowID] = 1 }
        return counts
    }
}
