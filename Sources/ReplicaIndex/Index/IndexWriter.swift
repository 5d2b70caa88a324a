import Foundation
import ReplicaCore
import ReplicaSQLite

/// What indexing one item did.
package enum UpsertOutcome: Equatable {
    case inserted, replaced, merged
    /// The same item again: nothing but its source version was written.
    case unchanged
    /// An update (`isUpdate`) for an item that is not in the index; ignored, as Core Spotlight does.
    case ignoredUpdate
    /// Another owner made the item under this identifier: nothing was written (see
    /// ``IndexWriter/refusedOwnership``).
    case notOwned
}

/// The SQL that changes one index, run on the writer connection inside a transaction the caller owns.
///
/// The index's public operations, batches and the projection engine all write through this type, so a
/// checkpoint or client state can commit in the same transaction as the writes it describes. The
/// full-text index is external-content: its entries for a row are removed (SQLite reads the row's
/// current text to do so) before the row changes or goes.
package final class IndexWriter {
    let connection: Connection
    package let now: Date
    let defaultLifetime: TimeInterval
    /// Content types (and trees) already recorded in this transaction.
    private var recordedTypes: [String: String] = [:]
    /// The statements every indexed item uses, prepared once per writer rather than looked up by text.
    private lazy var insertStatement = Result { try connection.cached(Self.insertSQL) }
    private lazy var bulkInsertStatement = Result { try connection.cached(Self.bulkInsertSQL) }
    /// Set while a bulk load into an empty index runs without the identifier index (its identifiers are
    /// known to be distinct): rows are inserted without looking for one to replace.
    private var insertsAreNew = false
    private lazy var indexTextStatement = Result { try connection.cached(Self.indexTextSQL) }
    private lazy var updateStatement = Result { try connection.cached(Self.updateSQL) }
    private lazy var storedRowStatement = Result { try connection.cached(Self.storedRowSQL) }
    private lazy var removeTextStatement = Result { try connection.cached(Self.removeTextSQL) }
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
    package private(set) var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] = []

    /// Fails with ``ReplicaError/Code/notOwner`` if any write of this transaction was refused because
    /// another owner made the item; the caller's transaction then rolls back.
    package func throwIfRefused() throws {
        guard let first = refusedOwnership.first else { return }
        let more = refusedOwnership.count > 1 ? " (and \(refusedOwnership.count - 1) more)" : ""
        throw ReplicaError(.notOwner, "item '\(first.identifier)'\(more) was made by \(first.owner), and only its owner can change it; nothing was written. Use another identifier")
    }

    init(connection: Connection, now: Date, defaultLifetime: TimeInterval) {
        self.connection = connection
        self.now = now
        self.defaultLifetime = defaultLifetime
    }

    /// Inserts a row known to be new; usable while the identifier index is dropped.
    static let bulkInsertSQL = """
        INSERT INTO items(identifier, domain, content_type, created, modified, expires, authors, recipients, attributes,
            owner, source_version, indexed, title, keywords, people, description, body)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
        """

    /// Inserts a row unless its identifier is taken (then the caller replaces or merges).
    static let insertSQL = bulkInsertSQL + "\nON CONFLICT(identifier) DO NOTHING"

    static let updateSQL = """
        UPDATE items SET identifier = ?1, domain = ?2, content_type = ?3, created = ?4, modified = ?5, expires = ?6,
            authors = ?7, recipients = ?8, attributes = ?9, owner = ?10, source_version = ?11, indexed = ?12,
            title = ?13, keywords = ?14, people = ?15, description = ?16, body = ?17
        WHERE id = ?18
        """

    /// The stored row an insert conflicted with, read to compare with the row that would replace it.
    static let storedRowSQL = """
        SELECT id, domain, content_type, created, modified, expires, authors, recipients, attributes, owner,
            title, keywords, people, description, body
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
    static let indexTextSQL = "INSERT INTO items_text(rowid, title, keywords, people, description, body) VALUES (?, ?, ?, ?, ?, ?)"

    // MARK: Indexing

    @discardableResult
    package func index(_ item: SearchableItem, origin: ItemOrigin = .api) throws -> UpsertOutcome {
        if item.isUpdate { return try merge(item, origin: origin) }
        return try insert(PreparedRow(item, origin: origin, now: now, defaultLifetime: defaultLifetime))
    }

    /// Indexes many items. Rows are prepared (text columns, attribute JSON: pure work) on another thread,
    /// a chunk ahead of the one being written, so a second core takes that work off the writer's path.
    package func index(contentsOf items: [SearchableItem], origin: ItemOrigin = .api) throws {
        try index(contentsOf: items.map { ($0, origin) })
    }

    /// Indexes many items, each with its own origin (the projection engine's records have their versions).
    package func index(contentsOf entries: [(SearchableItem, ItemOrigin)]) throws {
        let chunkSize = 512
        guard entries.count > chunkSize else {
            for (item, origin) in entries { try index(item, origin: origin) }
            return
        }
        try withSecondaryIndexesDeferred(forAdding: entries) {
            try pipeline(entries, chunkSize: chunkSize)
        }
    }

    private func pipeline(_ entries: [(SearchableItem, ItemOrigin)], chunkSize: Int) throws {
        let chunks = stride(from: 0, to: entries.count, by: chunkSize).map { entries[$0..<min($0 + chunkSize, entries.count)] }
        let now = self.now, lifetime = self.defaultLifetime
        @Sendable func prepare(_ chunk: ArraySlice<(SearchableItem, ItemOrigin)>) -> [PreparedRow?] {
            chunk.map { item, origin in item.isUpdate ? nil : PreparedRow(item, origin: origin, now: now, defaultLifetime: lifetime) }
        }
        let first = chunks[0]
        var next = Prefetch { prepare(first) }
        for index in chunks.indices {
            let current = try next.get()
            if index + 1 < chunks.count {
                let upcoming = chunks[index + 1]
                next = Prefetch { prepare(upcoming) }
            }
            for ((item, origin), row) in zip(chunks[index], current) {
                if let row { _ = try insert(row) } else { try self.index(item, origin: origin) }
            }
        }
    }

    /// For a load much larger than what the index holds, drops the domain and expiration indexes for the
    /// length of `body` and builds them again afterwards: one sorted build costs less than an index
    /// insert per row ([SQLite's advice for bulk loads](https://www.sqlite.org/faq.html#q19)). Into an
    /// empty index, a load of distinct new items (no updates) drops the identifier index too. It all
    /// happens in the caller's transaction, so a failure or a crash leaves the indexes as they were.
    private func withSecondaryIndexesDeferred(forAdding entries: [(SearchableItem, ItemOrigin)], _ body: () throws -> Void) throws {
        let count = entries.count
        let existing = count >= 20_000 ? (try connection.scalarInt("SELECT count(*) FROM items") ?? 0) : .max
        guard existing < count / 4 else { return try body() }
        var names = ["items_domain", "items_expires"]
        let allNew = existing == 0 && !entries.contains { $0.0.isUpdate }
            && Set(entries.lazy.map(\.0.uniqueIdentifier)).count == count
        if allNew { names.append("items_identifier") }
        let definitions = try connection.prepare(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items' AND name IN (\(names.map { "'\($0)'" }.joined(separator: ", ")))"
        ).rows { ($0.text(0), $0.text(1)) }
        for (name, _) in definitions { try connection.execute("DROP INDEX \(name)") }
        insertsAreNew = allNew
        defer { insertsAreNew = false }
        try body()
        insertsAreNew = false
        for (_, sql) in definitions { try connection.execute(sql) }
    }

    @discardableResult
    private func insert(_ row: PreparedRow) throws -> UpsertOutcome {
        CrashPoints.reach("index.item")
        if let type = row.contentType { try recordContentType(ContentType(rawValue: type), tree: row.explicitTree) }
        let insert = try (insertsAreNew ? bulkInsertStatement : insertStatement).get()
        try bind(row, to: insert)
        defer { insert.rewind() }
        try insert.step()
        if connection.changes == 1 {
            try indexText(connection.lastInsertRowID, row.text)
            return .inserted
        }
        guard let stored = try storedRow(ItemIdentifier(row.identifier)) else {
            throw ReplicaError(.storage, "item '\(row.identifier)' neither inserted nor found")
        }
        if stored.owner != row.origin.owner {
            refusedOwnership.append((identifier: ItemIdentifier(row.identifier), writer: row.origin.owner, owner: stored.owner))
            return .notOwned
        }
        if stored.matches(row) {
            // The same item again (a record edit outside its searchable fields, a replay): no reindex.
            try connection.cached("UPDATE items SET source_version = ? WHERE id = ?").run([SQLValue(row.origin.version), .integer(stored.id)])
            return .unchanged
        }
        if stored.text.hasSameColumns(as: row.text) {
            // Same text, other metadata: the full-text entries stay as they are.
            try update(stored.id, to: row)
            return .replaced
        }
        try replace(stored.id, indexedWith: stored.text, with: row)
        return .replaced
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

    /// Writes a row's values over the items row `id`.
    private func update(_ id: Int64, to row: PreparedRow) throws {
        let update = try updateStatement.get()
        try bind(row, to: update)
        try update.bind(.integer(id), at: 18)
        defer { update.rewind() }
        try update.step()
    }

    /// An items row as stored, to compare with one about to replace it.
    private struct StoredRow {
        var id: Int64
        var values: [SQLValue]
        var text: TextColumns

        var owner: ItemOwner {
            if case .text(let owner) = values[8] { return ItemOwner(rawValue: owner) }
            return .other("")
        }

        func matches(_ row: PreparedRow) -> Bool {
            text.hasSameColumns(as: row.text) && values == [SQLValue(row.domain), SQLValue(row.contentType), SQLValue(row.created), SQLValue(row.modified),
                                           .real(row.expires), SQLValue(row.authors), SQLValue(row.recipients), .text(row.attributes),
                                           .text(row.origin.owner.rawValue)]
        }
    }

    private func storedRow(_ identifier: ItemIdentifier) throws -> StoredRow? {
        try storedRowStatement.get().firstRow([.text(identifier.rawValue)]) { row in
            var text = TextColumns(AttributeSet())
            text.title = row.text(10)
            text.keywords = row.text(11)
            text.people = row.text(12)
            text.description = row.text(13)
            text.body = row.text(14)
            return StoredRow(id: row.int64(0), values: (1...9).map { row.value(Int32($0)) }, text: text)
        }
    }

    /// Merges an update into the stored item; an update of a missing or expired item is ignored.
    private func merge(_ item: SearchableItem, origin: ItemOrigin) throws -> UpsertOutcome {
        let existing = try connection.cached("SELECT id, domain, expires, \(IndexReader.itemColumns), body FROM items WHERE identifier = ?")
            .firstRow([.text(item.uniqueIdentifier.rawValue)]) { row in
                let (stored, storedOrigin, _) = try IndexReader.decodeItem(row, offset: 3, textContent: row.optionalText(13))
                return (id: row.int64(0), domain: row.optionalText(1), expires: row.double(2),
                        stored: stored.attributeSet, owner: storedOrigin.owner)
            }
        guard let existing, existing.expires > now.timeIntervalSince1970 else { return .ignoredUpdate }
        guard existing.owner == origin.owner else {
            refusedOwnership.append((identifier: item.uniqueIdentifier, writer: origin.owner, owner: existing.owner))
            return .notOwned
        }
        let stored = existing.stored
        let merged = SearchableItem(
            uniqueIdentifier: item.uniqueIdentifier,
            domainIdentifier: item.domainIdentifier ?? existing.domain.map(DomainIdentifier.init(rawValue:)),
            attributeSet: stored.merging(item.attributeSet),
            expirationDate: item.expirationDate ?? Date(timeIntervalSince1970: existing.expires))
        let row = PreparedRow(merged, origin: origin, now: now, defaultLifetime: defaultLifetime)
        if let type = row.contentType { try recordContentType(ContentType(rawValue: type), tree: row.explicitTree) }
        try replace(existing.id, indexedWith: nil, with: row)
        return .merged
    }

    /// Replaces the items row `id` and its full-text entries.
    ///
    /// - Parameter indexed: the row's text columns as just read from `items` (exactly what its full-text
    ///   entries were made from), or `nil` to have FTS5 read them.
    private func replace(_ id: Int64, indexedWith indexed: TextColumns?, with row: PreparedRow) throws {
        if let indexed {
            let remove = try removeTextStatement.get()
            defer { remove.reset() }
            try remove.bind(.integer(id), at: 1)
            try indexed.bind(to: remove, from: 2)
            try remove.step()
        } else {
            try connection.cached("DELETE FROM items_text WHERE rowid = ?").run([.integer(id)])
        }
        try update(id, to: row)
        try indexText(id, row.text)
    }

    /// Adds the full-text entries of a row just written.
    private func indexText(_ id: Int64, _ text: TextColumns) throws {
        let statement = try indexTextStatement.get()
        let previous = lastBoundText
        lastBoundText = nil
        defer { statement.rewind() }
        try statement.bind(.integer(id), at: 1)
        try text.bind(to: statement, from: 2, after: previous)
        try statement.step()
        lastBoundText = text
    }

    /// Records a content type's tree once per transaction, so filters can match types under it.
    private func recordContentType(_ type: ContentType, tree explicit: [String]?) throws {
        if explicit == nil, recordedTypes[type.rawValue] != nil { return }
        let tree = " " + (explicit ?? type.tree).joined(separator: " ") + " "
        guard recordedTypes[type.rawValue] != tree else { return }
        try connection.cached("""
            INSERT INTO content_types(name, tree) VALUES (?1, ?2)
            ON CONFLICT(name) DO UPDATE SET tree = excluded.tree WHERE ?3 AND excluded.tree != content_types.tree
            """).run([.text(type.rawValue), .text(tree), SQLValue(explicit != nil)])
        recordedTypes[type.rawValue] = tree
    }

    /// Names and handles, lowercased, one per line with a line break on each side, so a filter can look
    /// for a name anywhere with `instr`; `nil` when there are none.
    package static func filterText(_ strings: [String]) -> String? {
        strings.isEmpty ? nil : "\n" + strings.map { $0.lowercased() }.joined(separator: "\n") + "\n"
    }

    /// The row of an item, if `owner` made it (any owner's when `owner` is `nil`).
    package func rowID(of identifier: ItemIdentifier, owner: ItemOwner? = nil) throws -> Int64? {
        try connection.cached("SELECT id FROM items WHERE identifier = ?1 AND (?2 IS NULL OR owner = ?2)")
            .firstRow([.text(identifier.rawValue), SQLValue(owner?.rawValue)]) { $0.int64(0) }
    }

    // MARK: Deleting

    /// Deletes the items with these identifiers that `owner` made; returns how many there were.
    ///
    /// - Parameter owner: the owner deleting; `nil` deletes whoever made them (for the store's own
    ///   maintenance: items their owner no longer vouches for, deletions a host asks of the store).
    @discardableResult
    package func delete(identifiers: [ItemIdentifier], owner: ItemOwner?) throws -> Int {
        var count = 0
        for identifier in identifiers {
            guard let id = try rowID(of: identifier, owner: owner) else { continue }
            try deleteRow(id)
            count += 1
        }
        return count
    }

    /// Deletes every item `owner` made (any owner's when `nil`) whose domain is one of these or lies under
    /// one of them.
    @discardableResult
    package func delete(domains: [DomainIdentifier], owner: ItemOwner?) throws -> Int {
        var count = 0
        let condition = "domain IS NOT NULL AND (domain = ?1 OR (domain >= ?1 || '.' AND domain < ?1 || '/')) AND (?2 IS NULL OR owner = ?2)"
        for domain in domains {
            try connection.cached("DELETE FROM items_text WHERE rowid IN (SELECT id FROM items WHERE \(condition))")
                .run([.text(domain.rawValue), SQLValue(owner?.rawValue)])
            try connection.cached("DELETE FROM items WHERE \(condition)").run([.text(domain.rawValue), SQLValue(owner?.rawValue)])
            count += connection.changes
        }
        return count
    }

    /// Deletes every item a given owner made.
    @discardableResult
    package func delete(owner: ItemOwner) throws -> Int {
        try connection.cached("DELETE FROM items_text WHERE rowid IN (SELECT id FROM items WHERE owner = ?)").run([.text(owner.rawValue)])
        try connection.cached("DELETE FROM items WHERE owner = ?").run([.text(owner.rawValue)])
        return connection.changes
    }

    /// Deletes every item `owner` made (every item when `owner` is `nil`).
    ///
    /// When no other owner has items in the index, the full-text index is recreated from its own stored
    /// definition, which is much faster than removing its entries row by row.
    @discardableResult
    package func deleteAll(owner: ItemOwner?) throws -> Int {
        if let owner, try connection.scalar("SELECT 1 FROM items WHERE owner != ? LIMIT 1", [.text(owner.rawValue)]) != nil {
            return try delete(owner: owner)
        }
        let count = try connection.scalarInt("SELECT count(*) FROM items") ?? 0
        guard case .text(let sql)? = try connection.scalar("SELECT sql FROM sqlite_schema WHERE name = 'items_text'") else {
            throw ReplicaError(.corruptIndex, "the index has lost its full-text table")
        }
        // Its settings (ranking weights, hash size) are kept; 'version' belongs to FTS5 itself.
        let settings = try connection.prepare("SELECT k, v FROM items_text_config WHERE k != 'version'").rows { ($0.text(0), $0.value(1)) }
        try connection.execute("DROP TABLE items_text")
        try connection.execute("DELETE FROM items")
        try connection.execute(sql)
        for (key, value) in settings {
            // FTS5 takes every setting through its 'rank' column: INSERT INTO t(t, rank) VALUES (name, value).
            try connection.execute("INSERT INTO items_text(items_text, rank) VALUES (?, ?)", [.text(key), value])
        }
        return count
    }

    package func deleteRow(_ id: Int64) throws {
        CrashPoints.reach("index.delete")
        try connection.cached("DELETE FROM items_text WHERE rowid = ?").run([.integer(id)])
        try connection.cached("DELETE FROM items WHERE id = ?").run([.integer(id)])
    }

    /// Deletes up to `limit` items whose expiration date has passed; returns how many.
    @discardableResult
    package func purgeExpired(limit: Int = 1000) throws -> Int {
        // The second condition matches the partial index's, so the index is used.
        let ids = try connection.cached("SELECT id FROM items WHERE expires <= ? AND expires < 32503680000 LIMIT ?")
            .rows([.real(now.timeIntervalSince1970), .integer(Int64(limit))]) { $0.int64(0) }
        for id in ids { try deleteRow(id) }
        return ids.count
    }

    // MARK: Client state and facts

    package func setClientState(_ state: Data) throws {
        try connection.cached("INSERT INTO client_state(id, state, updated) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated")
            .run([SQLValue(state), .real(now.timeIntervalSince1970)])
    }

    package func setMeta(_ key: String, _ value: String?) throws {
        if let value {
            try connection.cached("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .run([.text(key), .text(value)])
        } else {
            try connection.cached("DELETE FROM meta WHERE key = ?").run([.text(key)])
        }
    }
}

/// The values of an items row, worked out from an item without touching the database, so that many can
/// be prepared on another thread; bound straight into a statement, without an intermediate array.
struct PreparedRow: Sendable {
    let identifier: String
    let domain: String?
    let contentType: String?
    let explicitTree: [String]?
    let created: Double?
    let modified: Double?
    let expires: Double
    let authors: String?
    let recipients: String?
    let attributes: String
    let origin: ItemOrigin
    let indexed: Double
    let text: TextColumns

    init(_ item: SearchableItem, origin: ItemOrigin, now: Date, defaultLifetime: TimeInterval) {
        let attributes = item.attributeSet
        text = TextColumns(attributes)
        identifier = item.uniqueIdentifier.rawValue
        domain = item.domainIdentifier?.rawValue
        contentType = attributes.contentType?.rawValue
        explicitTree = attributes.explicitContentTypeTree
        created = attributes.contentCreationDate?.timeIntervalSince1970
        modified = attributes.contentModificationDate?.timeIntervalSince1970
        expires = (item.expirationDate ?? now.addingTimeInterval(defaultLifetime)).timeIntervalSince1970
        authors = IndexWriter.filterText(text.authors)
        recipients = IndexWriter.filterText(text.recipients)
        self.attributes = attributes.serializedJSON(excludingStoredElsewhere: ())
        self.origin = origin
        indexed = now.timeIntervalSince1970
    }

    /// Binds parameters 1…17 of ``IndexWriter/insertSQL`` and ``IndexWriter/updateSQL``.
    ///
    /// - Parameter previous: the row whose values the statement still holds (rewound, not reset); only the
    ///   values that differ from it are bound again. The identifier and the title and body, which differ
    ///   almost always, are bound without comparing.
    package func bind(to statement: Statement, after previous: PreparedRow? = nil) throws {
        guard let previous else { return try bindAll(to: statement) }
        try statement.bind(.text(identifier), at: 1)
        if domain != previous.domain { try statement.bind(SQLValue(domain), at: 2) }
        if contentType != previous.contentType { try statement.bind(SQLValue(contentType), at: 3) }
        if created != previous.created { try statement.bind(SQLValue(created), at: 4) }
        if modified != previous.modified { try statement.bind(SQLValue(modified), at: 5) }
        if expires != previous.expires { try statement.bind(.real(expires), at: 6) }
        if authors != previous.authors { try statement.bind(SQLValue(authors), at: 7) }
        if recipients != previous.recipients { try statement.bind(SQLValue(recipients), at: 8) }
        if attributes != previous.attributes { try statement.bind(.text(attributes), at: 9) }
        if origin.owner != previous.origin.owner { try statement.bind(.text(origin.owner.rawValue), at: 10) }
        if origin.version != previous.origin.version { try statement.bind(SQLValue(origin.version), at: 11) }
        if indexed != previous.indexed { try statement.bind(.real(indexed), at: 12) }
        try text.bind(to: statement, from: 13, after: previous.text)
    }

    private func bindAll(to statement: Statement) throws {
        try statement.bind(.text(identifier), at: 1)
        try statement.bind(SQLValue(domain), at: 2)
        try statement.bind(SQLValue(contentType), at: 3)
        try statement.bind(SQLValue(created), at: 4)
        try statement.bind(SQLValue(modified), at: 5)
        try statement.bind(.real(expires), at: 6)
        try statement.bind(SQLValue(authors), at: 7)
        try statement.bind(SQLValue(recipients), at: 8)
        try statement.bind(.text(attributes), at: 9)
        try statement.bind(.text(origin.owner.rawValue), at: 10)
        try statement.bind(SQLValue(origin.version), at: 11)
        try statement.bind(.real(indexed), at: 12)
        try text.bind(to: statement, from: 13)
    }
}

/// The searchable text of an item, split into the full-text columns in ranking order, and the names
/// its people filters match.
///
/// Built in one pass over the item's attributes (a handful) rather than one look-up per known key (dozens),
/// because every indexed item goes through here.
struct TextColumns: Sendable {
    var title = ""
    var keywords = ""
    var people = ""
    var description = ""
    var body = ""
    var authors: [String] = []
    var recipients: [String] = []

    /// Binds the five full-text columns, in ranking order, to parameters `first` … `first + 4`.
    ///
    /// - Parameter previous: the columns the statement still holds (rewound, not reset); the keywords,
    ///   people and description are bound again only when they differ from those.
    package func bind(to statement: Statement, from first: Int32, after previous: TextColumns? = nil) throws {
        try statement.bind(.text(title), at: first)
        if keywords != previous?.keywords { try statement.bind(.text(keywords), at: first + 1) }
        if people != previous?.people { try statement.bind(.text(people), at: first + 2) }
        if description != previous?.description { try statement.bind(.text(description), at: first + 3) }
        try statement.bind(.text(body), at: first + 4)
    }

    /// Whether the five full-text columns are the same (the people lists aside).
    package func hasSameColumns(as other: TextColumns) -> Bool {
        title == other.title && keywords == other.keywords && people == other.people && description == other.description
            && body == other.body
    }

    /// Where an attribute's text goes, and its place among the attributes that go there.
    enum Role {
        case title, keywords, description, author, recipient
    }

    static let roles: [AttributeKey: (Role, Int)] = {
        var roles: [AttributeKey: (Role, Int)] = [:]
        for (order, key) in [AttributeKey.title, .displayName, .subject].enumerated() { roles[key] = (.title, order) }
        for (order, key) in [AttributeKey.keywords, .alternateNames, .projects, .organizations].enumerated() { roles[key] = (.keywords, order) }
        for (order, key) in [AttributeKey.contentDescription, .headline, .comment, .information, .path, .namedLocation, .city,
                             .artist, .album].enumerated() {
            roles[key] = (.description, order)
        }
        for (order, key) in [AttributeKey.authors, .authorNames, .authorEmailAddresses, .creator].enumerated() { roles[key] = (.author, order) }
        for (order, key) in [AttributeKey.recipients, .recipientNames, .recipientEmailAddresses, .primaryRecipients,
                             .additionalRecipients, .participants].enumerated() {
            roles[key] = (.recipient, order)
        }
        return roles
    }()

    init(_ attributes: AttributeSet) {
        var found: [(role: Role, order: Int, strings: [String])] = []
        for (key, value) in attributes.values {
            if key == .textContent {
                body = value.textValue ?? ""
            } else if let (role, order) = Self.roles[key] {
                found.append((role, order, value.strings))
            }
        }
        guard !found.isEmpty else { return }
        found.sort { ($0.order) < ($1.order) }
        var title: [String] = [], keywords: [String] = [], description: [String] = []
        for entry in found {
            switch entry.role {
            case .title: title += entry.strings
            case .keywords: keywords += entry.strings
            case .description: description += entry.strings
            case .author: authors += entry.strings
            case .recipient: recipients += entry.strings
            }
        }
        self.title = Self.unique(title)
        self.keywords = Self.unique(keywords)
        self.description = Self.unique(description)
        self.people = Self.unique(authors + recipients)
    }

    /// The strings, each once, one per line.
    private static func unique(_ strings: [String]) -> String {
        switch strings.count {
        case 0: return ""
        case 1: return strings[0]
        default:
            var seen = Set<String>()
            return strings.filter { seen.insert($0).inserted }.joined(separator: "\n")
        }
    }
}
