import Foundation
import ReplicaSQLite

/// Who made an item and from what: shown to models as provenance, used to remove a source's items.
public struct ItemOrigin: Hashable, Sendable {
    /// `api` for items indexed through ``SearchableIndex`` or `replica import`, `records` for the
    /// record store's projection, `source:<name>` for a watched source.
    public var owner: String
    /// The version of the thing the item was built from: a record version, a commit, a file stamp.
    public var version: String?

    public init(owner: String, version: String? = nil) {
        self.owner = owner
        self.version = version
    }

    /// Items a host indexed directly.
    public static let api = ItemOrigin(owner: "api")
}

/// What indexing one item did.
enum UpsertOutcome: Equatable {
    case inserted, replaced, merged
    /// An update (`isUpdate`) for an item that is not in the index; ignored, as Core Spotlight does.
    case ignoredUpdate
}

/// The SQL that changes one index, run on the writer connection inside a transaction the caller owns.
///
/// The index's public operations, batches and the projection engine all write through this type, so a
/// checkpoint or client state can commit in the same transaction as the writes it describes.
struct IndexWriter {
    let connection: Connection
    let now: Date
    let defaultLifetime: TimeInterval

    // MARK: Indexing

    @discardableResult
    func index(_ item: SearchableItem, origin: ItemOrigin = .api) throws -> UpsertOutcome {
        let existing = try connection.cached("SELECT id, attributes, domain, expires FROM items WHERE identifier = ?")
            .firstRow([.text(item.uniqueIdentifier.rawValue)]) { row in
                (id: row.int64(0), attributes: row.text(1), domain: row.optionalText(2), expires: row.double(3))
            }
        var attributes = item.attributeSet
        var domain = item.domainIdentifier
        var expiration = item.expirationDate
        var outcome = existing == nil ? UpsertOutcome.inserted : .replaced
        if item.isUpdate {
            guard let existing, existing.expires > now.timeIntervalSince1970 else { return .ignoredUpdate }
            var stored = try IndexReader.decodeAttributes(existing.attributes)
            stored.textContent = try connection.cached("SELECT body FROM items_text WHERE rowid = ?")
                .firstRow([.integer(existing.id)]) { $0.optionalText(0) } ?? nil
            attributes = stored.merging(item.attributeSet)
            domain = domain ?? existing.domain.map(DomainIdentifier.init(rawValue:))
            expiration = expiration ?? Date(timeIntervalSince1970: existing.expires)
            outcome = .merged
        }
        let expires = (expiration ?? now.addingTimeInterval(defaultLifetime)).timeIntervalSince1970
        let text = TextColumns(attributes)
        let row: [SQLValue] = [
            .text(item.uniqueIdentifier.rawValue),
            SQLValue(domain?.rawValue),
            SQLValue(attributes.contentType?.rawValue),
            .text(" " + attributes.contentTypeTree.joined(separator: " ") + " "),
            SQLValue(attributes.contentCreationDate?.timeIntervalSince1970),
            SQLValue(attributes.contentModificationDate?.timeIntervalSince1970),
            .real(expires),
            .text(Self.filterText(attributes.authorStrings)),
            .text(Self.filterText(attributes.recipientStrings)),
            .text(attributes.json(excluding: [.textContent]).serialized()),
            .text(origin.owner),
            SQLValue(origin.version),
            .real(now.timeIntervalSince1970),
        ]
        let rowID: Int64
        if let existing {
            try connection.cached("DELETE FROM items_text WHERE rowid = ?").run([.integer(existing.id)])
            try connection.cached("""
                UPDATE items SET identifier = ?1, domain = ?2, content_type = ?3, type_tree = ?4, created = ?5,
                    modified = ?6, expires = ?7, authors = ?8, recipients = ?9, attributes = ?10, owner = ?11,
                    source_version = ?12, indexed = ?13
                WHERE id = ?14
                """).run(row + [.integer(existing.id)])
            rowID = existing.id
        } else {
            try connection.cached("""
                INSERT INTO items(identifier, domain, content_type, type_tree, created, modified, expires, authors,
                    recipients, attributes, owner, source_version, indexed)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                """).run(row)
            rowID = connection.lastInsertRowID
        }
        try connection.cached("INSERT INTO items_text(rowid, title, keywords, people, description, body) VALUES (?, ?, ?, ?, ?, ?)")
            .run([.integer(rowID), .text(text.title), .text(text.keywords), .text(text.people), .text(text.description),
                  .text(text.body)])
        return outcome
    }

    /// Names and handles, lowercased, one per line with a line break on each side, so a filter can look
    /// for `\n<name>` anywhere in a line with `instr`.
    static func filterText(_ strings: [String]) -> String {
        strings.isEmpty ? "" : "\n" + strings.map { $0.lowercased() }.joined(separator: "\n") + "\n"
    }

    // MARK: Deleting

    /// Deletes the items with these identifiers; returns how many there were.
    @discardableResult
    func delete(identifiers: [ItemIdentifier]) throws -> Int {
        var count = 0
        for identifier in identifiers {
            guard let id = try connection.cached("SELECT id FROM items WHERE identifier = ?")
                .firstRow([.text(identifier.rawValue)], { $0.int64(0) }) else { continue }
            try deleteRow(id)
            count += 1
        }
        return count
    }

    /// Deletes every item whose domain is one of these or lies under one of them.
    @discardableResult
    func delete(domains: [DomainIdentifier]) throws -> Int {
        var count = 0
        for domain in domains {
            let condition = "domain = ?1 OR (domain >= ?1 || '.' AND domain < ?1 || '/')"
            try connection.cached("DELETE FROM items_text WHERE rowid IN (SELECT id FROM items WHERE \(condition))")
                .run([.text(domain.rawValue)])
            try connection.cached("DELETE FROM items WHERE \(condition)").run([.text(domain.rawValue)])
            count += connection.changes
        }
        return count
    }

    /// Deletes every item a given owner made (a source being removed).
    @discardableResult
    func delete(owner: String) throws -> Int {
        try connection.cached("DELETE FROM items_text WHERE rowid IN (SELECT id FROM items WHERE owner = ?)").run([.text(owner)])
        try connection.cached("DELETE FROM items WHERE owner = ?").run([.text(owner)])
        return connection.changes
    }

    /// Deletes every item. The full-text table is recreated from its own stored definition, which is much
    /// faster than deleting row by row and leaves no old text in it.
    @discardableResult
    func deleteAll() throws -> Int {
        let count = try connection.scalarInt("SELECT count(*) FROM items") ?? 0
        guard let definition = try connection.scalar("SELECT sql FROM sqlite_schema WHERE name = 'items_text'"),
              case .text(let sql) = definition
        else { throw ReplicaError(.corruptIndex, "the index has lost its full-text table") }
        let settings = try connection.prepare("SELECT k, v FROM items_text_config WHERE k = 'rank'").rows { row in
            (row.text(0), row.value(1))
        }
        try connection.execute("DELETE FROM items")
        try connection.execute("DROP TABLE items_text")
        try connection.execute(sql)
        for (key, value) in settings {
            try connection.execute("INSERT INTO items_text(items_text, \(key)) VALUES ('\(key)', ?)", [value])
        }
        return count
    }

    func deleteRow(_ id: Int64) throws {
        try connection.cached("DELETE FROM items_text WHERE rowid = ?").run([.integer(id)])
        try connection.cached("DELETE FROM items WHERE id = ?").run([.integer(id)])
    }

    /// Deletes up to `limit` items whose expiration date has passed; returns how many.
    @discardableResult
    func purgeExpired(limit: Int = 1000) throws -> Int {
        let ids = try connection.cached("SELECT id FROM items WHERE expires <= ? LIMIT ?")
            .rows([.real(now.timeIntervalSince1970), .integer(Int64(limit))]) { $0.int64(0) }
        for id in ids { try deleteRow(id) }
        return ids.count
    }

    // MARK: Client state and facts

    func setClientState(_ state: Data) throws {
        try connection.cached("INSERT INTO client_state(id, state, updated) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET state = excluded.state, updated = excluded.updated")
            .run([SQLValue(state), .real(now.timeIntervalSince1970)])
    }

    func setMeta(_ key: String, _ value: String?) throws {
        if let value {
            try connection.cached("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
                .run([.text(key), .text(value)])
        } else {
            try connection.cached("DELETE FROM meta WHERE key = ?").run([.text(key)])
        }
    }
}

/// The searchable text of an item, split into the full-text columns in ranking order.
struct TextColumns: Equatable {
    var title: String
    var keywords: String
    var people: String
    var description: String
    var body: String

    init(_ attributes: AttributeSet) {
        func join(_ keys: [AttributeKey]) -> String {
            var seen = Set<String>()
            return keys.flatMap { attributes[$0]?.strings ?? [] }.filter { seen.insert($0).inserted }.joined(separator: "\n")
        }
        title = join([.title, .displayName, .subject])
        keywords = join([.keywords, .alternateNames, .projects, .organizations])
        var seen = Set<String>()
        people = (attributes.authorStrings + attributes.recipientStrings).filter { seen.insert($0).inserted }.joined(separator: "\n")
        description = join([.contentDescription, .headline, .comment, .information, .path, .namedLocation, .city, .artist, .album])
        body = attributes.textContent ?? ""
    }
}
