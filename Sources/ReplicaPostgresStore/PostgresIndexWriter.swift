package import Foundation
import ReplicaCore
package import ReplicaIndex
package import ReplicaPostgres
import ReplicaText

/// The SQL that changes one index of one account in PostgreSQL, run inside a transaction the caller owns:
/// the PostgreSQL side of what `SQLiteIndexWriter` does, with the same outcomes.
///
/// The caller has named the account for the transaction (`set_config('replica.account', …, true)`) and
/// made its partitions (`replica.add_account()`). Every statement still names the account and the index
/// itself (`account = $1 AND index_name = $2`): row-level security is a second line, and under Citus the
/// account condition is what routes a statement to its shard.
///
/// The words of an item are written with it (`words`, `length`, from ``PostgresIndexText``), and the
/// index's statistics (`index_statistics`: how many items, how many words) change in the same statement
/// as the rows they count, so BM25's averages are exact in every snapshot.
///
/// For example:
/// ```
/// try connection.transaction {
///     let table = try PostgresSignIn.name("alice", on: connection)
///     try connection.execute("SELECT replica.add_account()")
///     let writer = PostgresIndexWriter(connection: connection, account: "alice", indexName: "default", table: table,
///                                      now: Date(), defaultLifetime: 30 * 24 * 3600)
///     try writer.index(SearchableItem(uniqueIdentifier: "n1", attributeSet: AttributeSet(contentType: .plainText)))
/// }
/// ```
package final class PostgresIndexWriter: IndexRowWriter {
    let connection: PostgresConnection
    let account: AccountID
    let indexName: String
    /// The account's own partitions, which every statement writes (see ``AccountPartitions``).
    let table: AccountPartitions
    package let now: Date
    package let defaultLifetime: TimeInterval
    /// Content types (and trees) already recorded in this transaction.
    var recordedTypes = ContentTypeMemo()
    /// The vocabulary's changes this transaction made: how many more (or fewer) items hold each token.
    var vocabularyChanges: [String: Int64] = [:]
    /// Whether a search-eligible activity is about an item (one that may not have been indexed when it
    /// was donated): read once per writer, as the SQLite writer does, so an index without activities
    /// pays nothing per insert.
    var activitiesMayStandIn: Bool?
    /// ``remakeFrontier()`` once read: `.some(nil)` when the words are not being made again.
    var remakeFrontierRead: Int64??
    package var writtenLanguages = WrittenLanguages()
    package var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] = []
    /// The row a bulk load is writing one by one, with the words it made for it ahead.
    var wordsMadeAhead: ReadyRow?

    /// Makes a writer for one index of one account, inside the caller's transaction.
    ///
    /// - Parameters:
    ///   - connection: A connection in a transaction whose `replica.account` is `account`.
    ///   - table: The account's partitions, which exist.
    ///   - now: The time the writes take as now: new items expire from it, and what expired by then is purged.
    ///   - defaultLifetime: How long an item without an expiration date lives.
    package init(
        connection: PostgresConnection, account: AccountID, indexName: String, table: AccountPartitions, now: Date,
        defaultLifetime: TimeInterval
    ) {
        self.connection = connection
        self.account = account
        self.indexName = indexName
        self.table = table
        self.now = now
        self.defaultLifetime = defaultLifetime
    }

    /// Runs a statement whose `$1` and `$2` are the account and the index name, and `$3`… `parameters`,
    /// on the account's partitions of the tables it names.
    @discardableResult
    func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try table.run(sql, [.text(account.rawValue), .text(indexName)] + parameters, on: connection)
    }

    // MARK: Statements

    /// The items columns a row writes, in the order of ``values(of:words:)``.
    static let itemColumns = """
        identifier, domain, content_type, created, modified, expires, authors, recipients, attributes, owner, source_version, indexed,
        title, keywords, people, description, body, words, length
        """

    /// Adds to the index's statistics what the rows of the statement's `rows` (a `WITH` query with a
    /// `length` column) add (`sign` 1) or take away (`sign` -1); nothing when there are none.
    static func countStatistics(of rows: String, sign: Int) -> String {
        let minus = sign < 0 ? "-" : ""
        return """
            INSERT INTO replica.index_statistics AS statistics (account, index_name, items, words)
                SELECT $1::text, $2::text, \(minus)count(*), \(minus)coalesce(sum(length), 0) FROM \(rows) HAVING count(*) > 0
                ON CONFLICT (account, index_name) DO UPDATE
                SET items = statistics.items + excluded.items, words = statistics.words + excluded.words
            """
    }

    /// Records the rows of the statement's `rows` (a `WITH` query with an `id` column) as changed since the
    /// ranking lists were built, when the index keeps lists: a search then ranks them through the GIN
    /// index, not through the lists (``RankingLists``). The statement that writes an item's text records
    /// it, so the record cannot miss a build: a build locks the items against writers first.
    static func recordRankingChanges(of rows: String) -> String {
        """
        INSERT INTO replica.ranking_changes (account, index_name, id)
            SELECT $1::text, $2::text, id FROM \(rows)
            WHERE EXISTS (SELECT 1 FROM replica.ranking_state WHERE account = $1 AND index_name = $2)
            ON CONFLICT DO NOTHING
        """
    }

    /// Adds the number of rows of the statement's `rows` (a `WITH` query) to the meta value
    /// `vectors_version`, the change sequence of the index's vectors; nothing when there are none.
    static func bumpVectorsVersion(by rows: String) -> String {
        """
        INSERT INTO replica.meta AS meta (account, index_name, key, value)
            SELECT $1::text, $2::text, 'vectors_version', count(*)::text FROM \(rows) HAVING count(*) > 0
            ON CONFLICT (account, index_name, key) DO UPDATE SET value = (meta.value::bigint + excluded.value::bigint)::text
        """
    }

    /// Inserts a row unless its identifier is taken (then the caller replaces or merges it), counting it.
    static let insertSQL = """
        WITH inserted AS (
            INSERT INTO replica.items(account, index_name, \(itemColumns))
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20::tsvector, $21)
            ON CONFLICT (account, index_name, identifier) DO NOTHING
            RETURNING id, length
        ), counted AS (
            \(countStatistics(of: "inserted", sign: 1))
        ), changed AS (
            \(recordRankingChanges(of: "inserted"))
        )
        SELECT id FROM inserted
        """

    /// Writes a row over the stored item with its identifier, its words included, and moves the
    /// statistics by the change in its length.
    ///
    /// Rows are found by identifier here, not by `id`: before the partition's first `ANALYZE` (a bulk
    /// load into a new account), PostgreSQL's generic plan for `account = $1 AND index_name = $2 AND
    /// id = $n` may pick the identifier index, whose first two columns match too, and read every row of
    /// the index through it (measured: 10 ms a statement at 10,000 items).
    static let replaceSQL = """
        WITH previous AS (
            SELECT length, words FROM replica.items WHERE account = $1 AND index_name = $2 AND identifier = $3
        ), updated AS (
            UPDATE replica.items SET identifier = $3, domain = $4, content_type = $5, created = $6, modified = $7, expires = $8,
                authors = $9, recipients = $10, attributes = $11, owner = $12, source_version = $13, indexed = $14,
                title = $15, keywords = $16, people = $17, description = $18, body = $19, words = $20::tsvector, length = $21
            WHERE account = $1 AND index_name = $2 AND identifier = $3
            RETURNING id, length
        ), changed AS (
            \(recordRankingChanges(of: "updated"))
        ), counted AS (
            INSERT INTO replica.index_statistics AS statistics (account, index_name, items, words)
                SELECT $1::text, $2::text, 0, sum(updated.length - previous.length) FROM updated, previous
                HAVING sum(updated.length - previous.length) <> 0
                ON CONFLICT (account, index_name) DO UPDATE SET words = statistics.words + excluded.words
        )
        SELECT count(*), (SELECT \(vocabularyOf("previous")) FROM previous) FROM updated
        """

    /// The lexemes of the `words` of the statement's `rows` (a `WITH` query) that the vocabulary may
    /// count, each row's once, for ``countVocabulary(_:by:)``: lexemes hold no control character (the
    /// tokenizer splits at them), so U+001F separates them.
    static func vocabularyOf(_ rows: String) -> String {
        """
        (SELECT string_agg(l.lexeme, E'\\x1f') FROM \(rows) AS r, unnest(tsvector_to_array(r.words)) AS l(lexeme)
            WHERE char_length(l.lexeme) BETWEEN \(TextAnalyzer.Vocabulary.shortest) AND \(TextAnalyzer.Vocabulary.longest))
        """
    }

    /// Counts the words and the language of a row whose text was just written, once per row written, as
    /// the SQLite writer counts them where it indexes a row's text.
    func countWritten(_ words: PostgresIndexText.Words, text: TextColumns) {
        countVocabulary(words.vocabulary, by: 1)
        writtenLanguages.add(text)
    }

    /// Counts lexemes in the vocabulary's changes: as ``vocabularyOf(_:)`` returns them (U+001F between
    /// them), each an item gained (`by` 1) or lost (-1).
    func countVocabulary(_ lexemes: some Sequence<some StringProtocol>, by change: Int64) {
        for lexeme in lexemes where TextAnalyzer.Vocabulary.holds(String(lexeme)) {
            vocabularyChanges[String(lexeme), default: 0] += change
        }
    }

    /// Writes the vocabulary's changes into `replica.vocabulary`, in the writer's transaction: each
    /// token's items added or taken away, a token no item holds any more removed.
    package func saveVocabulary() throws {
        guard !vocabularyChanges.isEmpty else { return }
        // A remake running meanwhile must count its vocabulary again from the items' words at its swap.
        if try remakeFrontier() != nil { try setMeta(WordsRemake.countedKey, nil) }
        var words = PostgresBinaryArray(of: .text)
        var changes = PostgresBinaryArray(of: .int8)
        for (word, change) in vocabularyChanges where change != 0 {
            words.append(word)
            changes.append(change)
        }
        vocabularyChanges = [:]
        try execute(
            """
            INSERT INTO replica.vocabulary AS v (account, index_name, word, documents)
                SELECT $1, $2, c.word, c.change FROM unnest($3::text[], $4::bigint[]) AS c(word, change)
                ON CONFLICT (account, index_name, word) DO UPDATE SET documents = v.documents + excluded.documents
            """, [words.value, changes.value])
        try execute(
            "DELETE FROM replica.vocabulary WHERE account = $1 AND index_name = $2 AND word = ANY($3::text[]) AND documents <= 0",
            [words.value])
    }

    /// Writes a row's metadata over the stored item with its identifier, whose text (and so words) stays as it is.
    static let updateSQL = """
        UPDATE replica.items SET identifier = $3, domain = $4, content_type = $5, created = $6, modified = $7, expires = $8,
            authors = $9, recipients = $10, attributes = $11, owner = $12, source_version = $13, indexed = $14
        WHERE account = $1 AND index_name = $2 AND identifier = $3
        """

    /// Parameters 3… of ``insertSQL`` and ``replaceSQL`` (the first twelve of them, ``updateSQL``'s) for a row.
    ///
    /// - Parameter words: the row's words and length, or `nil` for ``updateSQL``.
    static func values(of row: PreparedRow, words: PostgresIndexText.Words?) -> [PostgresValue] {
        var values: [PostgresValue] = [
            .text(row.identifier), PostgresValue(row.domain), PostgresValue(row.contentType),
            PostgresValue(row.created),
            PostgresValue(row.modified), .double(row.expires), PostgresValue(row.authors),
            PostgresValue(row.recipients),
            .text(row.attributes), .text(row.origin.owner.rawValue), PostgresValue(row.origin.version),
            .double(row.indexed),
        ]
        if let words {
            values += [
                .text(row.text.title), .text(row.text.keywords), .text(row.text.people), .text(row.text.description),
                .text(row.text.body), words.value, .int(Int64(words.length)),
            ]
        }
        return values
    }

    /// The words of an item's text columns as ``PostgresIndexText`` makes them, stemmed for their language.
    static func words(of text: TextColumns) -> PostgresIndexText.Words {
        PostgresIndexText.vector(
            title: text.title, keywords: text.keywords, people: text.people, description: text.description,
            body: text.body, language: text.language)
    }

    // MARK: Row operations (IndexRowWriter)

    /// The words of `row`: those made ahead with it (``wordsMadeAhead``), else made now.
    private func wordsToWrite(_ row: PreparedRow) -> PostgresIndexText.Words {
        if let ahead = wordsMadeAhead, ahead.row.identifier == row.identifier,
            ahead.row.text.hasSameColumns(as: row.text)
        {
            return ahead.words
        }
        return Self.words(of: row.text)
    }

    package func insertIfNew(_ row: PreparedRow) throws -> Int64? {
        let words = wordsToWrite(row)
        let inserted = try execute(Self.insertSQL, Self.values(of: row, words: words))
        guard inserted.rowCount == 1, let id = inserted.int(0, 0) else { return nil }
        countWritten(words, text: row.text)
        return id
    }

    package func writeSourceVersion(of row: PreparedRow, over stored: StoredRow) throws {
        // Written only when it differs: rewriting a row costs PostgreSQL a new version of it, and every
        // index entry with it when its page is full (the GIN index's among them).
        try execute(
            """
            UPDATE replica.items SET source_version = $3
            WHERE account = $1 AND index_name = $2 AND identifier = $4 AND source_version IS DISTINCT FROM $3
            """, [PostgresValue(row.origin.version), .text(row.identifier)])
    }

    package func writeMetadata(of row: PreparedRow, over stored: StoredRow) throws {
        // The words and the vectors stay as they are.
        try execute(Self.updateSQL, Self.values(of: row, words: nil))
    }

    package func rewrite(_ stored: StoredRow, with row: PreparedRow) throws {
        let words = wordsToWrite(row)
        let replaced = try execute(Self.replaceSQL, Self.values(of: row, words: words))
        if replaced.int(0, 0) == 1 {
            countVocabulary((replaced.string(0, 1) ?? "").split(separator: "\u{1F}"), by: -1)
            countWritten(words, text: row.text)
        }
        try dropVectorsOfChangedText(stored.id)
        try forgetRemadeWords(of: stored.id)
    }

    package func storedRow(_ identifier: ItemIdentifier) throws -> StoredRow? {
        let result = try execute(
            """
            SELECT id, domain, content_type, created, modified, expires, authors, recipients, attributes, owner,
                title, keywords, people, description, body
            FROM replica.items WHERE account = $1 AND index_name = $2 AND identifier = $3
            """, [.text(identifier.rawValue)])
        guard result.rowCount == 1, let id = result.int(0, 0) else { return nil }
        let text = try storedText(result, 0, from: 10, attributes: 8)
        return StoredRow(
            id: id, domain: result.string(0, 1), contentType: result.string(0, 2), created: result.double(0, 3),
            modified: result.double(0, 4), expires: result.double(0, 5) ?? 0, authors: result.string(0, 6),
            recipients: result.string(0, 7), attributes: result.string(0, 8) ?? "",
            owner: ItemOwner(rawValue: result.string(0, 9) ?? ""), text: text)
    }

    /// Records a content type's tree once per transaction, so filters can match types under it; a tree
    /// the item brings replaces the one recorded.
    package func recordContentType(_ type: ContentType, tree explicit: [String]?) throws {
        guard let tree = recordedTypes.treeToRecord(for: type, explicit: explicit) else { return }
        try execute(
            """
            INSERT INTO replica.content_types AS types (account, index_name, name, tree) VALUES ($1, $2, $3, $4)
            ON CONFLICT (account, index_name, name) DO UPDATE SET tree = excluded.tree WHERE $5::boolean AND excluded.tree <> types.tree
            """, [.text(type.rawValue), .text(tree), .bool(explicit != nil)])
        recordedTypes.noteRecorded(type, tree: tree)
    }

    /// The row of an item, if `owner` made it (any owner's when `owner` is `nil`).
    package func rowID(of identifier: ItemIdentifier, owner: ItemOwner?) throws -> Int64? {
        let result = try execute(
            """
            SELECT id FROM replica.items WHERE account = $1 AND index_name = $2 AND identifier = $3 AND ($4::text IS NULL OR owner = $4)
            """, [.text(identifier.rawValue), PostgresValue(owner?.rawValue)])
        return result.rowCount > 0 ? result.int(0, 0) : nil
    }
}
