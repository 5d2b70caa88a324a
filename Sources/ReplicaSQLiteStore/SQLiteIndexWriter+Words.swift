import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import ReplicaText

extension SQLiteIndexWriter {
    // MARK: Words made by another analyzer

    /// The last row whose words `items_text_next` holds while the words are being made again
    /// (``WordsRemake``), or `nil` when they are not: read once per writer.
    func remakeFrontier() throws -> Int64? {
        if let frontier = remakeFrontierRead { return frontier }
        let frontier = try recordedRemakeFrontier()
        remakeFrontierRead = .some(frontier)
        return frontier
    }

    /// The full-text table that holds (or will hold) the words of row `id`: `items_text`, or while the
    /// words are being made again `items_text_next` for the rows it has reached and none for the rest
    /// (the remake reaches them, and `items_text` answers searches unchanged until the swap: FTS5 makes a
    /// row's tokens again to remove them, and this analyzer may not make the old ones).
    func textTable(ofRow id: Int64) throws -> String? {
        guard let frontier = try remakeFrontier() else { return "items_text" }
        return id <= frontier ? "items_text_next" : nil
    }

    /// Makes the next `batchSize` items' words again with this analyzer into a new full-text table, in
    /// the caller's transaction, and swaps it in once every item has them (``WordsRemake``). The
    /// vocabulary is counted at the swap from FTS5's own tokens, which cost little to read: `tally` is
    /// not used.
    package func remakeWords(batchSize: Int, tally: WordsRemake.VocabularyTally) throws -> WordsRemake.Step {
        if try wordsAreCurrent() { return .finished }
        var frontier = try remakeFrontier()
        if frontier == nil {
            try startRemake()
            frontier = 0
        }
        guard var last = frontier else { return .finished }
        let rows = try connection.cached(
            """
            SELECT id, title, keywords, people, description, body, language,
                CASE WHEN instr(attributes, '"language"') > 0 THEN attributes END
            FROM items WHERE id > ? ORDER BY id LIMIT ?
            """
        ).rows([.integer(last), .integer(Int64(batchSize))]) { row -> WordsRemake.StoredText in
            // The attributes are read only when they may name a language (most items' do not).
            WordsRemake.StoredText(
                id: row.int64(0),
                text: TextColumns(
                    title: row.text(1), keywords: row.text(2), people: row.text(3),
                    description: row.text(4), body: row.text(5), language: nil),
                stored: row.optionalText(6), attributes: row.optionalText(7))
        }
        guard !rows.isEmpty else {
            try finishRemake()
            return .finished
        }
        let setLanguage = try connection.cached("UPDATE items SET language = ? WHERE id = ?")
        try WordsRemake.StoredText.withLanguagesFound(rows, unknown: try languageWhenUnknown(), prepare: { $0 }) {
            chunk in
            for row in chunk {
                if row.text.language != row.stored {
                    try setLanguage.run([SQLValue(row.text.language), .integer(row.id)])
                }
                try indexNextText(row.id, row.text)
                last = row.id
            }
        }
        remakeFrontierRead = .some(last)
        return try recordRemadeBatch(through: last, count: rows.count)
    }

    /// Adds row `id`'s words to the full-text table they are made again into, stemmed for the row's
    /// language; the vocabulary is counted at the swap. Both a remake's batches and a row written while
    /// it runs (``indexText(_:_:)``) write them here.
    func indexNextText(_ id: Int64, _ text: TextColumns) throws {
        let insert = try connection.cached(Self.indexNextTextSQL)
        defer { insert.rewind() }
        try insert.bind(.integer(id), at: 1)
        try text.bind(to: insert, from: 2, after: nil)
        try TextAnalyzer.withDocumentLanguage(text.language, counting: nil) { try insert.step() }
    }

    /// Creates the empty full-text table the words are made again into, as `items_text` is defined (the
    /// current tokenizer, the same ranking weights and settings); the ranking lists stop following writes.
    private func startRemake() throws {
        guard case .text(let sql)? = try connection.scalar("SELECT sql FROM sqlite_schema WHERE name = 'items_text'")
        else {
            throw ReplicaError(.corruptIndex, "the index has lost its full-text table")
        }
        try connection.execute("DROP TABLE IF EXISTS items_text_next")
        try connection.execute(sql.replacingOccurrences(of: "items_text", with: "items_text_next"))
        try copyTextSettings(to: "items_text_next")
        try setMeta(WordsRemake.frontierKey, "0")
        try setMeta(WordsRemake.remadeKey, "0")
        remakeFrontierRead = .some(0)
    }

    /// Copies the full-text table's settings (ranking weights, hash size; not FTS5's own 'version') to `table`.
    func copyTextSettings(to table: String, from settings: [(String, SQLValue)]? = nil) throws {
        let settings =
            try settings
            ?? connection.prepare("SELECT k, v FROM items_text_config WHERE k != 'version'").rows {
                ($0.text(0), $0.value(1))
            }
        for (key, value) in settings {
            // FTS5 takes every setting through its 'rank' column: INSERT INTO t(t, rank) VALUES (name, value).
            try connection.execute("INSERT INTO \(table)(\(table), rank) VALUES (?, ?)", [.text(key), value])
        }
    }

    /// Swaps the new full-text table in at once, counts the vocabulary again from its words, records the
    /// analyzer, and builds the ranking lists again if the index kept them.
    private func finishRemake() throws {
        let keptLists = try RankingLists.areKept(connection)
        try RankingLists.clear(connection)
        keepsRankingLists = false
        try connection.execute("DROP TABLE items_text")
        try connection.execute("ALTER TABLE items_text_next RENAME TO items_text")
        try countVocabularyAgain()
        try endRemake()
        remakeFrontierRead = .some(nil)
        if keptLists { _ = try rebuildRankingLists() }
    }

    /// Ends a remake of an index that was just emptied (``deleteAll(owner:)``): an empty index's words
    /// are this analyzer's.
    func abandonRemake() throws {
        try connection.execute("DROP TABLE IF EXISTS items_text_next")
        try endRemake()
        remakeFrontierRead = .some(nil)
    }

    // MARK: The vocabulary

    /// Counts the vocabulary again from the full-text index's own tokens (each with the items that hold
    /// it, as FTS5's `fts5vocab` reads them), keeping those the vocabulary holds.
    private func countVocabularyAgain() throws {
        TextAnalyzer.Vocabulary.discard()
        try connection.execute("DELETE FROM vocabulary")
        try connection.execute("DELETE FROM vocabulary_held_back")
        try connection.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.remade_words USING fts5vocab(main, items_text, row)")
        defer { try? connection.execute("DROP TABLE IF EXISTS temp.remade_words") }
        // Into an empty table: each upsert inserts.
        let insert = try vocabularyUpsert()
        try connection.prepare("SELECT term, doc FROM temp.remade_words").each { row in
            let word = row.text(0)
            if TextAnalyzer.Vocabulary.holds(word) { try insert.run([.text(word), .integer(row.int64(1))]) }
            return true
        }
    }

    /// Writes the vocabulary changes counted on this thread (``TextAnalyzer/Vocabulary``) into the
    /// index's `vocabulary`, in the caller's transaction: each token's items added or taken away, a
    /// token no item holds any more removed. What loads held back is added up first.
    ///
    /// - Parameter holdingBack: in a load (``IndexLoad``): the changes are appended to
    ///   `vocabulary_held_back` instead, and nothing is added up.
    package func saveVocabulary(holdingBack: Bool) throws {
        let changes = TextAnalyzer.Vocabulary.drain()
        if holdingBack {
            let append = try connection.cached("INSERT INTO vocabulary_held_back(word, change) VALUES (?, ?)")
            for (word, change) in changes { try append.run([.text(word), .integer(change)]) }
            return
        }
        try addUpHeldBackVocabulary()
        guard !changes.isEmpty else { return }
        let upsert = try vocabularyUpsert()
        var emptied: [String] = []
        for (word, change) in changes {
            try upsert.run([.text(word), .integer(change)])
            if change < 0 { emptied.append(word) }
        }
        let remove = try connection.cached(
            "DELETE FROM vocabulary WHERE letter = substr(?1, 1, 1) AND length = length(?1) AND word = ?1 AND documents <= 0"
        )
        for word in emptied { try remove.run([.text(word)]) }
    }

    /// Adds a token's change (`?2`) to its count in `vocabulary` (`?1` the token), keyed by its first
    /// character and its length in characters, as SQLite's `substr` and `length` count them (migration 0018).
    private func vocabularyUpsert() throws -> Statement {
        try connection.cached(
            """
            INSERT INTO vocabulary(letter, length, word, documents) VALUES (substr(?1, 1, 1), length(?1), ?1, ?2)
            ON CONFLICT(letter, length, word) DO UPDATE SET documents = documents + excluded.documents
            """)
    }

    /// Whether loads held back vocabulary changes not added up yet: a row, or none.
    static let holdsBackVocabularySQL = "SELECT 1 FROM vocabulary_held_back LIMIT 1"

    /// Adds the changes loads held back into `vocabulary`, each token once, and empties
    /// `vocabulary_held_back`: one grouped pass instead of an upsert a token a transaction.
    private func addUpHeldBackVocabulary() throws {
        // Every write outside a load asks: a statement prepared once per connection.
        guard try connection.cached(Self.holdsBackVocabularySQL).firstRow([], { _ in true }) == true else { return }
        try connection.execute(
            """
            INSERT INTO vocabulary(letter, length, word, documents)
            SELECT substr(word, 1, 1), length(word), word, sum(change) FROM vocabulary_held_back WHERE true
            GROUP BY word HAVING sum(change) != 0
            ON CONFLICT(letter, length, word) DO UPDATE SET documents = documents + excluded.documents
            """)
        // The tokens no item holds any more, in one pass over the table (once a load, at its end): a
        // row-value `IN` over the tokens held back would seek by their letter only.
        try connection.execute("DELETE FROM vocabulary WHERE documents <= 0")
        try connection.execute("DELETE FROM vocabulary_held_back")
    }
}
