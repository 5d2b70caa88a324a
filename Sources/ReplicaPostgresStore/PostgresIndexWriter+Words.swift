import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres
import ReplicaText

extension PostgresIndexWriter {
    // MARK: Words made by another analyzer

    /// The last row whose words `replica.words_next` holds while the words are being made again
    /// (``WordsRemake``), or `nil` when they are not: read once per writer.
    func remakeFrontier() throws -> Int64? {
        if let frontier = remakeFrontierRead { return frontier }
        let frontier = try recordedRemakeFrontier()
        remakeFrontierRead = .some(frontier)
        return frontier
    }

    /// Makes the next `batchSize` items' words again with this analyzer into `replica.words_next` (those
    /// that differ from the item's), in the writer's transaction, and writes them over the items' words
    /// once every item has been made again (``WordsRemake``). The account's other writers wait for the
    /// batch: a text written meanwhile is not made again from the text it replaced. The new words'
    /// vocabulary is counted in `tally` as they are made (``WordsRemake/VocabularyTally``).
    package func remakeWords(batchSize: Int, tally: WordsRemake.VocabularyTally) throws -> WordsRemake.Step {
        try lockItemsAgainstOtherWriters()
        if try wordsAreCurrent() { return .finished }
        let frontier = try remakeFrontier() ?? 0
        if frontier == 0 { try setMeta(WordsRemake.countedKey, tally.begin()) }
        let result = try execute(
            """
            SELECT id, title, keywords, people, description, body, CASE WHEN strpos(attributes, '"language"') > 0 THEN attributes END
            FROM replica.items WHERE account = $1 AND index_name = $2 AND id > $3 ORDER BY id LIMIT $4
            """, [.int(frontier), .int(Int64(batchSize))])
        guard result.rowCount > 0 else {
            try finishRemake(counted: tally.counts(through: frontier, mark: try meta(WordsRemake.countedKey)))
            return .finished
        }
        // The attributes are read only when they may name a language (most items' do not).
        let rows = (0..<result.rowCount).map { row in
            WordsRemake.StoredText(
                id: result.int(row, 0) ?? 0,
                text: TextColumns(
                    title: result.string(row, 1) ?? "", keywords: result.string(row, 2) ?? "",
                    people: result.string(row, 3) ?? "", description: result.string(row, 4) ?? "",
                    body: result.string(row, 5) ?? "", language: nil),
                stored: nil, attributes: result.string(row, 6))
        }
        // Each chunk's words are written while the next are made, on every core: the writer's thread
        // mostly waits for the server here, so the chunks' analysis may have the other cores.
        var last = frontier
        var counts: [String: Int64] = [:]
        try WordsRemake.StoredText.withLanguagesFound(
            rows, unknown: try languageWhenUnknown(), ahead: ProcessInfo.processInfo.activeProcessorCount,
            prepare: { (id: $0.id, words: Self.words(of: $0.text)) }
        ) { chunk in
            var ids = PostgresBinaryArray(of: .int8)
            var words = PostgresBinaryArray(of: .tsvector)
            var lengths = PostgresBinaryArray(of: .int4)
            for row in chunk {
                ids.append(row.id)
                words.append(binary: row.words.binary)
                lengths.append(Int64(row.words.length))
                for word in row.words.vocabulary { counts[word, default: 0] += 1 }
            }
            last = chunk.last?.id ?? last
            // Only the words that differ from an item's are kept for the swap: an analyzer's new version
            // changes few of an index's words, often none (the ICU data of a script it does not hold), and
            // PostgreSQL writes every row it updates anew, with an entry in each of its indexes.
            try execute(
                """
                INSERT INTO replica.words_next (account, index_name, id, words, length)
                    SELECT $1, $2, made.id, made.words, made.length
                    FROM unnest($3::bigint[], $4::tsvector[], $5::integer[]) AS made(id, words, length)
                    JOIN replica.items AS item ON item.account = $1 AND item.index_name = $2 AND item.id = made.id
                    WHERE item.words IS DISTINCT FROM made.words OR item.length IS DISTINCT FROM made.length
                    ON CONFLICT (account, index_name, id) DO UPDATE SET words = excluded.words, length = excluded.length
                """, [ids.value, words.value, lengths.value])
        }
        tally.add(counts, after: frontier, through: last)
        remakeFrontierRead = .some(last)
        return try recordRemadeBatch(through: last, count: result.rowCount)
    }

    /// Writes the new words over the items' words at once, counts the index's words and its vocabulary
    /// again from them (the vocabulary `counted` as the batches made the words, when it is given),
    /// records the analyzer, and builds the ranking lists again if the index kept them; when no item's
    /// words changed, records the analyzer alone (the counts and the lists are right).
    private func finishRemake(counted: [String: Int64]?) throws {
        guard
            try execute("SELECT 1 FROM replica.words_next WHERE account = $1 AND index_name = $2 LIMIT 1").rowCount > 0
        else {
            try endRemake()
            remakeFrontierRead = .some(nil)
            return
        }
        let keptLists =
            try execute("SELECT 1 FROM replica.ranking_state WHERE account = $1 AND index_name = $2").rowCount == 1
        try removeRankingLists()
        try execute(
            """
            UPDATE replica.items AS item SET words = made.words, length = made.length FROM replica.words_next AS made
            WHERE item.account = $1 AND item.index_name = $2 AND made.account = $1 AND made.index_name = $2 AND item.id = made.id
            """)
        try execute("DELETE FROM replica.words_next WHERE account = $1 AND index_name = $2")
        try execute(
            """
            UPDATE replica.index_statistics SET words = (SELECT coalesce(sum(length), 0) FROM replica.items
                WHERE account = $1 AND index_name = $2)
            WHERE account = $1 AND index_name = $2
            """)
        if let counted { try replaceVocabulary(with: counted) } else { try countVocabularyAgain() }
        try endRemake()
        remakeFrontierRead = .some(nil)
        if keptLists { _ = try buildRankingLists() }
    }

    /// Ends a remake of an index that was just emptied (``deleteAll(owner:)``): an empty index's words
    /// are this analyzer's.
    func abandonRemake() throws {
        try execute("DELETE FROM replica.words_next WHERE account = $1 AND index_name = $2")
        try endRemake()
        remakeFrontierRead = .some(nil)
    }

    /// Drops the new words a remake made of items whose text was just written: their `items.words` are
    /// this analyzer's already, and the swap must not write the words of their old text over them.
    func forgetRemadeWords(of id: Int64) throws {
        guard let frontier = try remakeFrontier(), id <= frontier else { return }
        try execute("DELETE FROM replica.words_next WHERE account = $1 AND index_name = $2 AND id = $3", [.int(id)])
    }

    /// Counts the vocabulary again from the items' words (each lexeme with the items that hold it, as
    /// `ts_stat` reads them), keeping those the vocabulary holds.
    private func countVocabularyAgain() throws {
        let counted = try execute(
            """
            SELECT word, ndoc FROM ts_stat(format('SELECT words FROM replica.items WHERE account = %L AND index_name = %L', $1::text, $2::text))
            WHERE char_length(word) BETWEEN \(TextAnalyzer.Vocabulary.shortest) AND \(TextAnalyzer.Vocabulary.longest)
            """)
        var counts: [String: Int64] = [:]
        for row in 0..<counted.rowCount {
            guard let word = counted.string(row, 0), TextAnalyzer.Vocabulary.holds(word) else { continue }
            counts[word] = counted.int(row, 1) ?? 0
        }
        try replaceVocabulary(with: counts)
    }

    /// Replaces the index's vocabulary with `counts` (each word the vocabulary holds, with its items),
    /// and drops the changes this writer counted: they were made before.
    private func replaceVocabulary(with counts: [String: Int64]) throws {
        vocabularyChanges = [:]
        try execute("DELETE FROM replica.vocabulary WHERE account = $1 AND index_name = $2")
        var words = PostgresBinaryArray(of: .text)
        var documents = PostgresBinaryArray(of: .int8)
        for (word, count) in counts where count > 0 {
            words.append(word)
            documents.append(count)
        }
        try execute(
            """
            INSERT INTO replica.vocabulary (account, index_name, word, documents)
                SELECT $1, $2, c.word, c.documents FROM unnest($3::text[], $4::bigint[]) AS c(word, documents)
            """, [words.value, documents.value])
    }

    /// Makes the account's other writers wait until this transaction ends (and waits for theirs).
    func lockItemsAgainstOtherWriters() throws {
        try connection.execute("LOCK TABLE replica.items\(table.suffix) IN SHARE ROW EXCLUSIVE MODE")
    }

    /// The text columns of a stored row (title at `first`, then keywords, people, description and body)
    /// with the language their words were stemmed for, found again from them and the row's attributes
    /// as when the row was written (the store keeps no column of it); when CLD2 cannot tell, the one a
    /// row written now would get (``IndexWriter/languageWhenUnknown()``).
    func storedText(_ result: PostgresResult, _ row: Int, from first: Int, attributes: Int) throws -> TextColumns {
        var text = TextColumns(
            title: result.string(row, first) ?? "", keywords: result.string(row, first + 1) ?? "",
            people: result.string(row, first + 2) ?? "", description: result.string(row, first + 3) ?? "",
            body: result.string(row, first + 4) ?? "", language: nil)
        try text.findLanguage(
            given: TextColumns.languages(inAttributes: result.string(row, attributes) ?? "{}"),
            whenUnknown: languageWhenUnknown())
        return text
    }
}
