package import Foundation
import ReplicaCore
import ReplicaText
import Synchronization

/// A row a search found, before it is tied to an account.
package struct FoundItem: Sendable {
    package var item: SearchableItem
    package var score: Double
    package var snippet: String?
    /// How the snippet is still to be made, when the reader left it for the items a search returns:
    /// making it costs a full-text look-up per candidate through SQLite's ranking lists, and a pass of
    /// the tokenizer over the item's text on PostgreSQL.
    package var pendingSnippet: PendingSnippet?
    package var origin: ItemOrigin
    package var indexedAt: Date
    package var match: SearchMatch = .lexical
    /// How engaged the person is with the item (``Engagement``), from 0 to 1.
    package var engagement: Double = 0
}

/// How a found item's snippet is still to be made (``FoundItem/pendingSnippet``).
package enum PendingSnippet: Sendable {
    /// By the reader (``IndexReader/snippets(_:)``), through the full-text index with this `MATCH`
    /// expression (the words the item has).
    case matching(String)
    /// From what the reader read already.
    case made(@Sendable () -> String?)
}

/// A query's vector for semantic search, and the model that made it (only vectors of that model count).
package struct SemanticQuery: Sendable {
    package var vector: [Float]
    package var model: String
    /// The model's ``Embedder/similarityBaseline``.
    package var baseline: Double
    /// The model's ``Embedder/unrelatedCloseness``.
    package var unrelatedCloseness: Double?
    /// Models the store used before this one, whose vectors an index may still hold.
    package var formerModels: [FormerModelQuery] = []
    /// The queries by those of ``formerModels`` whose vectors the index searched holds, asked beside this
    /// one: an item is found by the vectors it has until it is embedded again with the store's model.
    package var alongside: [SemanticQuery] = []
    /// Where a passage of a text begins, as the model cut it (``Embedder/passageStart(_:in:)``).
    package var passageStart: @Sendable (Int, String) -> String.Index? = { _, _ in nil }
    /// The languages the model reads (``Embedder/languages``), `nil` for many.
    package var languages: [String]?

    package init(
        vector: [Float], model: String, baseline: Double = 0, unrelatedCloseness: Double? = nil,
        formerModels: [FormerModelQuery] = [], languages: [String]? = nil,
        passageStart: @escaping @Sendable (Int, String) -> String.Index? = { _, _ in nil }
    ) {
        self.vector = vector
        self.model = model
        self.baseline = baseline
        self.unrelatedCloseness = unrelatedCloseness
        self.formerModels = formerModels
        self.languages = languages
        self.passageStart = passageStart
    }

    /// A cosine as closeness from the model's baseline: 1 stays 1, the baseline becomes 0.
    package func closeness(_ cosine: Double) -> Double { (cosine - baseline) / (1 - baseline) }

    /// The cosine whose closeness is `closeness`.
    package func cosine(atCloseness closeness: Double) -> Double { baseline + closeness * (1 - baseline) }

    /// Where items stop being close enough to this query to be found by meaning: a closeness of `floor`,
    /// and for a model whose unrelated texts come closer (``unrelatedCloseness``), standing out below it.
    package func meaningFloor(atCloseness floor: Double) -> MeaningFloor {
        MeaningFloor(cosine: cosine(atCloseness: floor), unrelated: unrelatedCloseness.map { cosine(atCloseness: $0) })
    }
}

/// Where items stop being close enough in meaning to a query to be found, in one model's cosines.
///
/// Every text has some similarity to every other. Under ``cosine`` nothing is found. Under ``unrelated``
/// (for a model whose unrelated texts can come as close as its weaker answers, as e5's do) an item is
/// found only if it stands out from the index's other items: ``standingOut`` spreads (median absolute
/// deviations) above their median cosine with the query. So nonsense, which lies about as far from
/// everything, finds nothing, while an answer in another language, closer than the index's other items
/// though no closer than some nonsense comes, is still found.
package struct MeaningFloor: Sendable {
    /// The cosine under which nothing is found.
    package var cosine: Double
    /// The cosine under which an item must stand out from the others; `nil` for the floor alone.
    package var unrelated: Double?

    /// No floor: every item counts.
    package static let none = MeaningFloor(cosine: -1)

    /// How many spreads above the median an item stands out at. On XQuAD-R with e5, three cut no answer
    /// from a question's first ten by meaning alone, in Chinese, Spanish or across the two; four cut up to
    /// 23 of 1,190 (`docs/benchmarks/languages.md`).
    package static let standingOut = 3.0

    /// The fewest passages that tell a background: in a smaller index every item counts above the floor.
    /// The median deviation of a handful of cosines says little: over six notes, a Spanish question's
    /// answer in Chinese stood only three deviations out.
    package static let fewestForBackground = 10

    /// The passages whose cosines give the median and the spread: every one up to twice this many, else
    /// every n-th, evenly spaced, from this many to twice as many.
    static let backgroundSample = 4_096

    package init(cosine: Double, unrelated: Double? = nil) {
        self.cosine = cosine
        self.unrelated = unrelated
    }

    /// The cosine an item's best passage must reach, given `scores`, the query's cosine with every
    /// passage of the index: the floor, raised (up to ``unrelated``) to where the passages stand out.
    package func threshold(among scores: [Float]) -> Double {
        guard let unrelated, unrelated > cosine, scores.count >= Self.fewestForBackground else { return cosine }
        let stride = max(1, scores.count / Self.backgroundSample)
        var sample = Swift.stride(from: 0, to: scores.count, by: stride).map { scores[$0] }
        sample.sort()
        let median = Self.median(ofSorted: sample)
        var deviations = sample.map { abs($0 - median) }
        deviations.sort()
        let spread = Self.median(ofSorted: deviations)
        return max(cosine, min(unrelated, Double(median) + Self.standingOut * Double(spread)))
    }

    private static func median(ofSorted values: [Float]) -> Float {
        let middle = values.count / 2
        return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
    }
}

/// A model a store used before its current one: an index keeps its items' vectors from it until they
/// are embedded again, and a search asks them with the query's vector by that model, made once for the
/// whole search and only when an index holds such vectors (loading a second model costs a one-shot
/// search about 200 ms).
package final class FormerModelQuery: Sendable {
    package let model: String
    package let baseline: Double
    package let unrelatedCloseness: Double?
    package let passageStart: @Sendable (Int, String) -> String.Index?
    private let make: @Sendable () async -> [Float]?
    private let made = Mutex<Task<[Float]?, Never>?>(nil)

    /// A former model `model` (its identifier) whose closeness is measured from `baseline` (its unrelated
    /// texts coming as close as `unrelatedCloseness`), the query's vector by it made by `make` (`nil` when
    /// the model failed).
    package init(
        model: String, baseline: Double, unrelatedCloseness: Double? = nil,
        passageStart: @escaping @Sendable (Int, String) -> String.Index?,
        make: @escaping @Sendable () async -> [Float]?
    ) {
        self.model = model
        self.baseline = baseline
        self.unrelatedCloseness = unrelatedCloseness
        self.passageStart = passageStart
        self.make = make
    }

    /// The query's vector by this model, made at the first call.
    package func vector() async -> [Float]? {
        let task = made.withLock { held in
            if let held { return held }
            let make = self.make
            let task = Task { await make() }
            held = task
            return task
        }
        return await task.value
    }
}

/// What one item gives the completions of a prefix: its words that begin with it and, when its title has
/// such a word, its title; with the item itself (without its text) so that its owner can be asked about it.
package struct CompletionSource: Sendable {
    /// The item, its text content left out.
    package var item: SearchableItem
    /// Who made it and from what version.
    package var origin: ItemOrigin
    /// When it was last written.
    package var indexedAt: Date
    /// Its words that begin with the prefix, lowercased, each once.
    package var words: Set<String>
    /// Its title, when the title has such a word.
    package var title: String?

    package init(item: SearchableItem, origin: ItemOrigin, indexedAt: Date, words: Set<String>, title: String?) {
        self.item = item
        self.origin = origin
        self.indexedAt = indexedAt
        self.words = words
        self.title = title
    }
}

extension CompletionSource {
    /// Calls `body` with each word of `text` (a run of letters and digits, and the accents FTS5 keeps
    /// within a word, as its tokenizer splits it), lowercased, that begins with `prefix`.
    package static func forEachWord(in text: String, beginning prefix: String, _ body: (String) -> Void) {
        guard let first = prefix.unicodeScalars.first else { return }
        let scalars = text.unicodeScalars
        var index = scalars.startIndex
        while index < scalars.endIndex {
            guard FTSPattern.isWordScalar(scalars[index]) else {
                index = scalars.index(after: index)
                continue
            }
            var end = scalars.index(after: index)
            while end < scalars.endIndex, FTSPattern.continuesWord(scalars[end]) { end = scalars.index(after: end) }
            // Most words differ from the prefix in their first letter: they are passed over unread.
            let start = scalars[index]
            let lowered = start.value >= 0x41 && start.value <= 0x5A ? Unicode.Scalar(start.value + 0x20)! : start
            if !start.isASCII || lowered == first {
                let word = String(scalars[index..<end]).lowercased()
                if word.hasPrefix(prefix) { body(word) }
            }
            index = end
        }
    }
}
