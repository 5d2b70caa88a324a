package import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite
import ReplicaText

/// The SQL that changes one index, run on the writer connection inside a transaction the caller owns.
///
/// The index's public operations, batches and the projection engine all write through this type, so a
/// checkpoint or client state can commit in the same transaction as the writes it describes. The
/// full-text index is external-content: its entries for a row are removed (SQLite reads the row's
/// current text to do so) before the row changes or goes.
package final class SQLiteIndexWriter: IndexRowWriter {
    let connection: Connection
    package let now: Date
    package let defaultLifetime: TimeInterval
    /// Content types (and trees) already recorded in this transaction.
    private var recordedTypes = ContentTypeMemo()
    /// The statements every indexed item uses, prepared once per writer rather than looked up by text.
    private lazy var insertStatement = Result { try connection.cached(Self.insertSQL) }
    private lazy var bulkInsertStatement = Result { try connection.cached(Self.bulkInsertSQL) }
    /// Set while a bulk load into an empty index runs without the identifier index (its identifiers are
    /// known to be distinct): rows are inserted without looking for one to replace.
    var insertsAreNew = false
    /// Whether a load's rows may have their text analyzed on the thread that prepares them
    /// (``PreparedRow/preanalyzed()``); a test turns it off to compare.
    var analyzesAhead = true
    /// The percentage of a load's rows analyzed ahead, as the last load left it (see `pipeline`).
    var aheadPercent = 50
    /// Whether the index keeps ranking lists, which the writer tells of every row whose text it indexes
    /// (deletes reach them through a trigger; see migration 0011): read once per writer, and again after
    /// it builds or removes them.
    var keepsRankingLists: Bool?
    /// ``remakeFrontier()`` once read: `.some(nil)` when the words are not being made again.
    var remakeFrontierRead: Int64??
    package var writtenLanguages = WrittenLanguages()
    private lazy var indexTextStatement = Result { try connection.cached(Self.indexTextSQL) }
    private lazy var updateStatement = Result { try connection.cached(Self.updateSQL) }
    private lazy var storedRowStatement = Result { try connection.cached(Self.storedRowSQL) }
    private lazy var removeTextStatement = Result { try connection.cached(Self.removeTextSQL) }
    /// Whether a search-eligible activity is about an item (one that may not have been indexed when it
    /// was donated): read once per writer, so an index without activities pays nothing per insert.
    private lazy var activitiesMayStandIn = Result {
        try connection.cached("SELECT 1 FROM activities WHERE related IS NOT NULL AND search = 1 LIMIT 1").firstRow(
            [], { _ in true }) == true
    }
    /// The row last bound to each statement that writes items rows, and the text last bound to the
    /// full-text insert, in this writer. Those statements are rewound, not cleared, so the next row binds
    /// only what differs from the last: from one item to the next, most metadata (domain, content type,
    /// expiration, owner, empty columns) is the same, and each text binding costs SQLite an allocation and
    /// a copy.
    private var boundRows: [(statement: Statement, row: PreparedRow)] = []
    private var lastBoundText: TextColumns?
    /// Items this writer refused to write because another owner made them: each owner (the API, the
    /// record store, one source, one followed table) changes only its own items. The caller decides what a
    /// refusal means: an error for the API, a skipped entry for a source, quarantine for a record.
    package var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] = []

    init(connection: Connection, now: Date, defaultLifetime: TimeInterval) {
        self.connection = connection
        self.now = now
        self.defaultLifetime = defaultLifetime
    }

    /// Inserts a row known to be new; usable while the identifier index is dropped.
    static let bulkInsertSQL = """
        INSERT INTO items(identifier, domain, content_type, created, modified, expires, authors, recipients, attributes,
            owner, source_version, indexed, title, keywords, people, description, body, language)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
        """

    /// Inserts a row unless its identifier is taken (then the caller replaces or merges).
    static let insertSQL = bulkInsertSQL + "\nON CONFLICT(identifier) DO NOTHING"

    static let updateSQL = """
        UPDATE items SET identifier = ?1, domain = ?2, content_type = ?3, created = ?4, modified = ?5, expires = ?6,
            authors = ?7, recipients = ?8, attributes = ?9, owner = ?10, source_version = ?11, indexed = ?12,
            title = ?13, keywords = ?14, people = ?15, description = ?16, body = ?17, language = ?18
        WHERE id = ?19
        """

    /// The stored row an insert conflicted with, read to compare with the row that would replace it.
    static let storedRowSQL = """
        SELECT id, domain, content_type, created, modified, expires, authors, recipients, attributes, owner,
            title, keywords, people, description, body, language
        FROM items WHERE identifier = ?
        """

    /// Removes a row's full-text entries given the text it was indexed with, which the caller has just read
    /// from `items`; FTS5 would otherwise read the row again itself
    /// ([the 'delete' command](https://www.sqlite.org/fts5.html#the_delete_command)).
    static let removeTextSQL = """
        INSERT INTO items_text(items_text, rowid, title, keywords, people, description, body) VALUES ('delete', ?, ?, ?, ?, ?, ?)
        """

    /// Binding the text again is about three times faster than `INSERT … SELECT` from `items`
    /// (measured with SQLite 3.40; see `replica-bench sql-variants`).
    static let indexTextSQL =
        "INSERT INTO items_text(rowid, title, keywords, people, description, body) VALUES (?, ?, ?, ?, ?, ?)"
    /// ``indexTextSQL`` into the table the words are made again into (``WordsRemake``).
    static let indexNextTextSQL = indexTextSQL.replacingOccurrences(of: "items_text", with: "items_text_next")

    // MARK: Row operations (IndexRowWriter)

    package func insertIfNew(_ row: PreparedRow) throws -> Int64? {
        let insert = try (insertsAreNew ? bulkInsertStatement : insertStatement).get()
        try bind(row, to: insert)
        defer { insert.rewind() }
        try insert.step()
        guard connection.changes == 1 else { return nil }
        let id = connection.lastInsertRowID
        try indexText(id, row.text)
        return id
    }

    package func writeSourceVersion(of row: PreparedRow, over stored: StoredRow) throws {
        try connection.cached("UPDATE items SET source_version = ? WHERE id = ?").run([
            SQLValue(row.origin.version), .integer(stored.id),
        ])
    }

    package func writeMetadata(of row: PreparedRow, over stored: StoredRow) throws {
        // The full-text entries stay as they are.
        try update(stored.id, to: row)
    }

    /// Binds a row's values to a statement that writes items rows, only those that differ from the row
    /// bound to it before.
    private func bind(_ row: PreparedRow, to statement: Statement) throws {
        let slot = boundRows.firstIndex { $0.statement === statement }
        let previous = slot.map { boundRows[$0].row }
        // Forgotten until the binding is complete: a failure halfway leaves the next row to bind everything.
        if let slot { boundRows.remove(at: slot) }
        try row.bind(to: statement, after: previous)
        boundRows.append((statement, row))
    }

    /// Writes a row's values over the items row `id` (every rewrite of an existing row comes here).
    private func update(_ id: Int64, to row: PreparedRow) throws {
        let update = try updateStatement.get()
        try bind(row, to: update)
        try update.bind(.integer(id), at: 19)
        defer { update.rewind() }
        try update.step()
    }

    package func storedRow(_ identifier: ItemIdentifier) throws -> StoredRow? {
        try storedRowStatement.get().firstRow([.text(identifier.rawValue)]) { row in
            let text = TextColumns(
                title: row.text(10), keywords: row.text(11), people: row.text(12), description: row.text(13),
                body: row.text(14), language: row.optionalText(15))
            return StoredRow(
                id: row.int64(0), domain: row.optionalText(1), contentType: row.optionalText(2),
                created: row.optionalDouble(3), modified: row.optionalDouble(4), expires: row.double(5),
                authors: row.optionalText(6), recipients: row.optionalText(7), attributes: row.text(8),
                owner: ItemOwner(rawValue: row.text(9)), text: text)
        }
    }

    package func mayHaveStandIns() throws -> Bool { try activitiesMayStandIn.get() }

    /// Replaces the items row and its full-text entries, which are removed with the text read from it
    /// (exactly what they were made from) rather than have FTS5 read the row again.
    package func rewrite(_ stored: StoredRow, with row: PreparedRow) throws {
        if try textTable(ofRow: stored.id) == "items_text" {
            let remove = try removeTextStatement.get()
            defer { remove.reset() }
            try remove.bind(.integer(stored.id), at: 1)
            try stored.text.bind(to: remove, from: 2)
            try TextAnalyzer.withDocumentLanguage(stored.text.language, counting: .removing) { try remove.step() }
        } else {
            try removeText(ofRow: stored.id)
        }
        try update(stored.id, to: row)
        try indexText(stored.id, row.text)
        try dropVectorsOfChangedText(stored.id)
    }

    private func rankingListsAreKept() throws -> Bool {
        if let keepsRankingLists { return keepsRankingLists }
        let kept = try RankingLists.areKept(connection)
        keepsRankingLists = kept
        return kept
    }

    /// Adds the full-text entries of a row just written, tells the ranking lists of it, and counts its
    /// language among those written (``WrittenLanguages``).
    func indexText(_ id: Int64, _ text: TextColumns) throws {
        writtenLanguages.add(text)
        switch try textTable(ofRow: id) {
        case "items_text": break
        case nil: return
        case _?:
            // While the words are made again, into the new table alone (``textTable(ofRow:)``).
            try indexNextText(id, text)
            return
        }
        let statement = try indexTextStatement.get()
        let previous = lastBoundText
        lastBoundText = nil
        defer { statement.rewind() }
        try statement.bind(.integer(id), at: 1)
        try text.bind(to: statement, from: 2, after: previous)
        let index = {
            _ = try TextAnalyzer.withDocumentLanguage(text.language, counting: .adding) { try statement.step() }
        }
        if let preanalysis = text.preanalysis { try preanalysis.replaying(index) } else { try index() }
        lastBoundText = text
        if try rankingListsAreKept() { try RankingLists.recordChange(id, connection) }
    }

    /// Records a content type's tree once per transaction, so filters can match types under it.
    package func recordContentType(_ type: ContentType, tree explicit: [String]?) throws {
        guard let tree = recordedTypes.treeToRecord(for: type, explicit: explicit) else { return }
        try connection.cached(
            """
            INSERT INTO content_types(name, tree) VALUES (?1, ?2)
            ON CONFLICT(name) DO UPDATE SET tree = excluded.tree WHERE ?3 AND excluded.tree != content_types.tree
            """
        ).run([.text(type.rawValue), .text(tree), SQLValue(explicit != nil)])
        recordedTypes.noteRecorded(type, tree: tree)
    }

    /// Removes the full-text entries of the items row `id`, which FTS5 makes again from the row's text
    /// stemmed for the language it was indexed in.
    func removeText(ofRow id: Int64) throws {
        guard let table = try textTable(ofRow: id) else { return }
        let language = try connection.cached("SELECT language FROM items WHERE id = ?").firstRow([.integer(id)]) {
            $0.optionalText(0)
        }
        try TextAnalyzer.withDocumentLanguage(language ?? nil, counting: .removing) {
            try connection.cached("DELETE FROM \(table) WHERE rowid = ?").run([.integer(id)])
        }
    }

    /// The row of an item, if `owner` made it (any owner's when `owner` is `nil`).
    package func rowID(of identifier: ItemIdentifier, owner: ItemOwner?) throws -> Int64? {
        try connection.cached("SELECT id FROM items WHERE identifier = ?1 AND (?2 IS NULL OR owner = ?2)")
            .firstRow([.text(identifier.rawValue), SQLValue(owner?.rawValue)]) { $0.int64(0) }
    }

}
