import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaText

extension PostgresIndexWriter {
    // MARK: Words made by another analyzer

    /// Whether the index's words were made by this analyzer (``TextAnalyzer/version``, meta `analyzer`).
    package func wordsAreCurrent() throws -> Bool {
        try meta("analyzer") == TextAnalyzer.version
    }

    /// Makes every item's words again with this analyzer, each item stemmed for its language (found again,
    /// as a new item's is), in the writer's transaction, with the index's count of words; the ranking
    /// lists, if the index kept them, are built again from the new words. A kill leaves the old words
    /// and the old record, and the next open starts again.
    package func remakeWords() throws {
        let keptLists = try execute("SELECT 1 FROM replica.ranking_state WHERE account = $1 AND index_name = $2").rowCount == 1
        try removeRankingLists()
        try execute("DELETE FROM replica.vocabulary WHERE account = $1 AND index_name = $2")
        vocabularyChanges = [:]
        var last: Int64 = 0
        while true {
            let result = try execute("""
                SELECT id, title, keywords, people, description, body, attributes FROM replica.items
                WHERE account = $1 AND index_name = $2 AND id > $3 ORDER BY id LIMIT 1000
                """, [.int(last)])
            guard result.rowCount > 0 else { break }
            var ids = PostgresBinaryArray(of: .int8)
            var words = PostgresBinaryArray(of: .tsvector)
            var lengths = PostgresBinaryArray(of: .int4)
            for row in 0..<result.rowCount {
                let made = Self.words(of: Self.storedText(result, row, from: 1, attributes: 6))
                countVocabulary(made.vocabulary, by: 1)
                last = result.int(row, 0) ?? last
                ids.append(last)
                words.append(binary: made.binary)
                lengths.append(Int64(made.length))
            }
            try execute("""
                UPDATE replica.items AS item SET words = made.words, length = made.length
                FROM unnest($3::bigint[], $4::tsvector[], $5::integer[]) AS made(id, words, length)
                WHERE item.account = $1 AND item.index_name = $2 AND item.id = made.id
                """, [ids.value, words.value, lengths.value])
        }
        try execute("""
            UPDATE replica.index_statistics SET words = (SELECT coalesce(sum(length), 0) FROM replica.items
                WHERE account = $1 AND index_name = $2)
            WHERE account = $1 AND index_name = $2
            """)
        try setMeta("analyzer", TextAnalyzer.version)
        try saveVocabulary()
        if keptLists { _ = try buildRankingLists() }
    }

    /// Makes the account's other writers wait until this transaction ends (and waits for theirs).
    func lockItemsAgainstOtherWriters() throws {
        try connection.execute("LOCK TABLE replica.items\(table.suffix) IN SHARE ROW EXCLUSIVE MODE")
    }

    /// The text columns of a stored row (title at `first`, then keywords, people, description and body)
    /// with the language their words were stemmed for, found again from them and the row's attributes
    /// as when the row was written: the store keeps no column of it.
    static func storedText(_ result: PostgresResult, _ row: Int, from first: Int, attributes: Int) -> TextColumns {
        var text = TextColumns(title: result.string(row, first) ?? "", keywords: result.string(row, first + 1) ?? "",
                               people: result.string(row, first + 2) ?? "", description: result.string(row, first + 3) ?? "",
                               body: result.string(row, first + 4) ?? "", language: nil)
        text.findLanguage(given: TextColumns.languages(inAttributes: result.string(row, attributes) ?? "{}"))
        return text
    }
}
