import Foundation
import ReplicaCore
import ReplicaText
import Synchronization

/// Making an index's words again when another analyzer made them (an older replica, another ICU).
///
/// Searches keep reading the old words while the new ones are made, a batch per transaction, beside
/// them: in a new full-text table on SQLite, in `replica.words_next` on PostgreSQL. When every item has
/// its new words they are swapped in at once, the vocabulary is counted again from them, the analyzer is
/// recorded, and the ranking lists, if the index kept them, are built again. How far it has gone is
/// kept with each batch, so a remake that is killed goes on from its last batch.
///
/// While it runs on SQLite, an item written is searchable by its new text once the swap is done; until
/// then the old words answer for the items they held (the old table is not changed: FTS5 makes a row's
/// tokens again to remove them, and this analyzer may not make the old ones). On PostgreSQL an item
/// written meanwhile gets this analyzer's words in `items` at once, and is searchable by them.
package enum WordsRemake {
    /// `meta`: the analyzer that made the words searches read (``TextAnalyzer/version``).
    package static let analyzerKey = "analyzer"
    /// `meta`: the last row whose words have been made again, while they are being made.
    package static let frontierKey = "words_remade_to"
    /// `meta`: how many items' words have been made again so far.
    package static let remadeKey = "words_remade_items"
    /// `meta`: the mark of the ``VocabularyTally`` counting the new words' vocabulary, while no write
    /// has changed an item's words since the remake's first batch.
    package static let countedKey = "words_remade_tally"

    /// What one batch did.
    package enum Step: Sendable, Equatable {
        /// A batch was made again: this many items' words have been so far; more may be left.
        case madeAgain(Int)
        /// Every item has its new words, swapped in (or the index's words were this analyzer's already).
        case finished
    }
}

extension WordsRemake {
    /// An item's text columns as stored, read to make their words again.
    package struct StoredText: Sendable {
        package var id: Int64
        /// Its columns; `language` is found by ``withLanguagesFound(_:_:)``.
        package var text: TextColumns
        /// The language its words were stemmed for when it was written.
        package var stored: String?
        /// Its attributes' JSON when they may name a language, else `nil`.
        package var attributes: String?

        package init(id: Int64, text: TextColumns, stored: String?, attributes: String?) {
            self.id = id
            self.text = text
            self.stored = stored
            self.attributes = attributes
        }

        /// Hands `body` the rows, a chunk of at most 512 at a time, each with the language its words are
        /// stemmed for found again, as a new item's is (its `language` attribute, else the language of its
        /// text, else `unknown`: ``IndexWriter/languageWhenUnknown()``), made into what `prepare` makes of
        /// it, in order. The next `ahead` chunks are prepared on other cores while `body` writes these, as a
        /// bulk load prepares its rows, on threads that give way to searches: a remake is background work.
        package static func withLanguagesFound<Prepared: Sendable>(
            _ rows: [StoredText], unknown: String, ahead: Int = 1,
            prepare: @escaping @Sendable (StoredText) -> Prepared,
            _ body: ([Prepared]) throws -> Void
        ) throws {
            try Prefetch.pipelined(
                rows, chunkSize: 512, ahead: ahead, givingWay: true,
                prepare: { chunk in
                    chunk.map { row in
                        var row = row
                        row.text.findLanguage(
                            given: row.attributes.map(TextColumns.languages(inAttributes:)) ?? [], whenUnknown: unknown)
                        return prepare(row)
                    }
                }
            ) { _, prepared in try body(prepared) }
        }
    }
}

extension WordsRemake {
    /// The vocabulary of the new words, counted as one process's batches make them, so that the swap
    /// need not count it again from every item's words (on PostgreSQL, `ts_stat` over the index: about a
    /// tenth of a remake's time). The swap takes it only when those batches made every item's words, in
    /// order from the first, and no write changed an item's words meanwhile: the first batch records a
    /// mark of its own in `meta` (``countedKey``), and a writer that changes words while a remake runs
    /// removes it. Anything else (a remake resumed by another process, a batch rolled back, a write
    /// meanwhile) leaves the swap counting the vocabulary again, as before.
    package final class VocabularyTally: Sendable {
        private struct State {
            var counts: [String: Int64] = [:]
            /// The last row the counts cover, from the first; `nil` when they do not.
            var through: Int64?
            var mark: String?
        }
        private let state = Mutex(State())

        package init() {}

        /// Starts counting from the first item; returns the mark the batch records in `meta`.
        package func begin() -> String {
            let mark = UUID().uuidString
            state.withLock { $0 = State(through: 0, mark: mark) }
            return mark
        }

        /// Adds a batch's counts (each word with how many of the batch's items hold it), made of the rows
        /// after `first` through `last`: kept only when the counts so far end at `first`.
        package func add(_ counts: [String: Int64], after first: Int64, through last: Int64) {
            state.withLock { state in
                guard state.through == first else {
                    state = State()
                    return
                }
                state.counts.merge(counts, uniquingKeysWith: +)
                state.through = last
            }
        }

        /// The counts, when they cover every row through `frontier` and `mark` (what `meta` holds) is
        /// this tally's own; `nil` otherwise. They are handed over once.
        package func counts(through frontier: Int64, mark: String?) -> [String: Int64]? {
            state.withLock { state in
                defer { state = State() }
                guard let own = state.mark, own == mark, state.through == frontier else { return nil }
                return state.counts
            }
        }
    }
}

// The remake's record in `meta`, kept alike by both backends' writers.
extension IndexWriter {
    /// Whether the index's words were made by this analyzer (``TextAnalyzer/version``).
    package func wordsAreCurrent() throws -> Bool {
        try meta(WordsRemake.analyzerKey) == TextAnalyzer.version
    }

    /// Records this analyzer as the one that made the index's words.
    package func recordAnalyzer() throws {
        try setMeta(WordsRemake.analyzerKey, TextAnalyzer.version)
    }

    /// The last row whose new words have been made, as `meta` records it, or `nil` when no remake runs.
    package func recordedRemakeFrontier() throws -> Int64? {
        try meta(WordsRemake.frontierKey).flatMap { Int64($0) }
    }

    /// Records a batch made again, through row `last`, of `count` items, in the batch's transaction; a
    /// crash test may kill the process here, before the commit.
    package func recordRemadeBatch(through last: Int64, count: Int) throws -> WordsRemake.Step {
        let remade = (try meta(WordsRemake.remadeKey).flatMap { Int($0) } ?? 0) + count
        try setMeta(WordsRemake.frontierKey, String(last))
        try setMeta(WordsRemake.remadeKey, String(remade))
        CrashPoints.reach("words.remake")
        return .madeAgain(remade)
    }

    /// Ends a remake (its words swapped in, or the index emptied): its record goes, and this analyzer is
    /// recorded.
    package func endRemake() throws {
        try setMeta(WordsRemake.frontierKey, nil)
        try setMeta(WordsRemake.remadeKey, nil)
        try setMeta(WordsRemake.countedKey, nil)
        try recordAnalyzer()
    }
}

/// Whether an index's words are this analyzer's, and how far making them again has gone.
public struct WordsStatus: Sendable, Equatable {
    /// The analyzer that made the words searches read (the version of the replica's analyzer that made
    /// them, which begins `replica-analyzer` and its number), or `nil` when the index records none.
    public var analyzer: String?
    /// Whether the words are this analyzer's.
    public var isCurrent: Bool { analyzer == TextAnalyzer.version }
    /// Items whose words have been made again by this analyzer so far, while they are being made
    /// (`nil` when no remake has started).
    public var remade: Int?
    /// The items the index holds.
    public var items: Int

    public init(analyzer: String?, remade: Int?, items: Int) {
        self.analyzer = analyzer
        self.remade = remade
        self.items = items
    }
}

extension SearchableIndex {
    /// Whether the index's words are this analyzer's, and how far making them again has gone.
    public func wordsStatus() async throws -> WordsStatus {
        try await read { reader in
            WordsStatus(
                analyzer: try reader.meta(WordsRemake.analyzerKey),
                remade: try reader.meta(WordsRemake.remadeKey).flatMap { Int($0) },
                items: try reader.count())
        }
    }

    /// Whether the index's words are this analyzer's: ``wordsStatus()`` without counting the items.
    package func wordsAreCurrent() async throws -> Bool {
        try await read { reader in try reader.meta(WordsRemake.analyzerKey) == TextAnalyzer.version }
    }

    /// Makes the index's words again with this analyzer when another one made them: `batchSize` items per
    /// transaction, while searches read the old words, which the new ones replace at once at the end
    /// (see `WordsRemake`). A remake that was stopped (cancelled, killed) goes on from its last batch.
    /// `replica sync`, `import`, `records import` and `watch` call it through
    /// ``Store/remakeStaleWords(accounts:progress:)``.
    ///
    /// - Parameters:
    ///   - batchSize: items per transaction; other writers wait for at most one batch.
    ///   - progress: told the items made again so far and the items the index holds, after each batch.
    /// - Returns: `true` when the words are this analyzer's (made again now or already), `false` when the
    ///   task was cancelled first.
    @discardableResult
    public func remakeWords(batchSize: Int = 5_000, progress: @escaping @Sendable (Int, Int) -> Void = { _, _ in })
        async throws -> Bool
    {
        let status = try await wordsStatus()
        guard !status.isCurrent else { return true }
        let tally = WordsRemake.VocabularyTally()
        while !Task.isCancelled {
            let step = try await write(purgingExpired: false) { writer in
                try writer.remakeWords(batchSize: max(1, batchSize), tally: tally)
            }
            guard case .madeAgain(let remade) = step else { return true }
            progress(remade, status.items)
        }
        return false
    }
}
