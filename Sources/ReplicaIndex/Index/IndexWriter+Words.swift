import Foundation
import ReplicaCore
import ReplicaSQLite
import ReplicaText

extension SQLiteIndexWriter {
    // MARK: Words made by another analyzer

    /// What the index records of the analyzer that made its words (`meta` key `analyzer`).
    static let analyzerKey = "analyzer"

    /// Whether the index's words were made by this analyzer (``TextAnalyzer/version``).
    package func wordsAreCurrent() throws -> Bool {
        try meta(Self.analyzerKey) == TextAnalyzer.version
    }

    /// Makes every item's words again with this analyzer, each item stemmed for its language (found
    /// again, as a new item's is), and records the analyzer; the ranking lists, if the index kept them,
    /// are built again from the new words. Runs in the caller's transaction: a kill leaves the old words
    /// and the old record, and the next open starts again.
    package func remakeWords() throws {
        let keptLists = try RankingLists.areKept(connection)
        try RankingLists.clear(connection)
        keepsRankingLists = false
        try connection.execute("INSERT INTO items_text(items_text) VALUES ('delete-all')")
        try connection.execute("DELETE FROM vocabulary")
        TextAnalyzer.Vocabulary.discard()
        let read = try connection.prepare("""
            SELECT id, title, keywords, people, description, body, language, attributes FROM items WHERE id > ? ORDER BY id LIMIT 1000
            """)
        let setLanguage = try connection.prepare("UPDATE items SET language = ? WHERE id = ?")
        var last: Int64 = 0
        while true {
            let rows = try read.rows([.integer(last)]) { row -> (id: Int64, text: TextColumns, stored: String?) in
                var text = TextColumns(title: row.text(1), keywords: row.text(2), people: row.text(3), description: row.text(4),
                                       body: row.text(5), language: nil)
                text.findLanguage(given: TextColumns.languages(inAttributes: row.text(7)))
                return (row.int64(0), text, row.optionalText(6))
            }
            guard let end = rows.last?.id else { break }
            for (id, text, stored) in rows {
                if text.language != stored { try setLanguage.run([SQLValue(text.language), .integer(id)]) }
                try indexText(id, text)
            }
            last = end
        }
        try setMeta(Self.analyzerKey, TextAnalyzer.version)
        try saveVocabulary()
        if keptLists { _ = try rebuildRankingLists() }
    }

    // MARK: The vocabulary

    /// Writes the vocabulary changes counted on this thread (``TextAnalyzer/Vocabulary``) into the
    /// index's `vocabulary`, in the caller's transaction: each token's items added or taken away, a
    /// token no item holds any more removed.
    package func saveVocabulary() throws {
        let changes = TextAnalyzer.Vocabulary.drain()
        guard !changes.isEmpty else { return }
        let upsert = try connection.cached("""
            INSERT INTO vocabulary(word, documents) VALUES (?1, ?2)
            ON CONFLICT(word) DO UPDATE SET documents = documents + excluded.documents
            """)
        var emptied: [String] = []
        for (word, change) in changes {
            try upsert.run([.text(word), .integer(change)])
            if change < 0 { emptied.append(word) }
        }
        let remove = try connection.cached("DELETE FROM vocabulary WHERE word = ? AND documents <= 0")
        for word in emptied { try remove.run([.text(word)]) }
    }
}
