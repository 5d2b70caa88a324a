package import Foundation
import ReplicaCore

// The index's rules written once, above the seam: the insert that writes over a stored item only what
// changed, Core Spotlight's `isUpdate` merge, the owner refusal of both, what follows the insert of a new
// item (its enrichment queued, the activities that stood in for it dropped) and the once-per-transaction
// record of a content type's tree. Each backend's writer gives the row-level operations they are written
// on (``IndexRowWriter``), so every backend behaves alike.

/// An items row as stored, read to decide what writing an item over it does.
package struct StoredRow {
    /// Its row.
    package var id: Int64
    package var domain: String?
    package var contentType: String?
    package var created: Double?
    package var modified: Double?
    /// When it expires, in seconds since 1970, as stored.
    package var expires: Double
    package var authors: String?
    package var recipients: String?
    /// Its attributes but those kept in columns of their own, as JSON (``PreparedRow/attributes``).
    package var attributes: String
    /// Who made it.
    package var owner: ItemOwner
    /// Its text columns, with the language their words were made for.
    package var text: TextColumns

    package init(
        id: Int64, domain: String?, contentType: String?, created: Double?, modified: Double?, expires: Double,
        authors: String?, recipients: String?, attributes: String, owner: ItemOwner, text: TextColumns
    ) {
        self.id = id
        self.domain = domain
        self.contentType = contentType
        self.created = created
        self.modified = modified
        self.expires = expires
        self.authors = authors
        self.recipients = recipients
        self.attributes = attributes
        self.owner = owner
        self.text = text
    }

    /// Whether writing `row` over it would change nothing but its source version.
    package func matches(_ row: PreparedRow) -> Bool {
        text.hasSameColumns(as: row.text) && domain == row.domain && contentType == row.contentType
            && created == row.created && modified == row.modified && expires == row.expires
            && authors == row.authors && recipients == row.recipients && attributes == row.attributes
            && owner == row.origin.owner
    }

    /// Its attributes as the item had them, its text content among them.
    ///
    /// - Throws: ``ReplicaError`` `corruptIndex` when the stored JSON cannot be read back.
    package func attributeSet() throws -> AttributeSet {
        try AttributeSet(
            stored: attributes, contentType: contentType, body: text.body, title: text.title,
            description: text.description)
    }
}

/// The row-level operations of a backend's writer that the rules above the seam are written on.
///
/// A backend reads and writes rows; what a merge keeps, whose items may be changed, when a row is
/// written again and what an insert sets off are decided in this protocol's extension, the same way for
/// every backend. ``IndexWriter/index(_:origin:)`` is written there too: a backend's bulk path calls
/// ``upsert(_:)`` or ``write(_:)`` for the rows it cannot insert at once.
package protocol IndexRowWriter: IndexWriter {
    /// How long an item without an expiration date lives.
    var defaultLifetime: TimeInterval { get }
    /// Items this writer refused to write because another owner made them.
    var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] { get set }
    /// The stored row under `identifier`, expired or not; `nil` when there is none.
    func storedRow(_ identifier: ItemIdentifier) throws -> StoredRow?
    /// Inserts `row` with its words when no row holds its identifier, counting its language among those
    /// written (``IndexWriter/writtenLanguages``).
    ///
    /// - Returns: the new row's id, or `nil` when the identifier is taken (nothing was written).
    func insertIfNew(_ row: PreparedRow) throws -> Int64?
    /// Writes `row`'s source version over `stored`, which holds the same item in every other value.
    func writeSourceVersion(of row: PreparedRow, over stored: StoredRow) throws
    /// Writes `row`'s values over `stored`, whose text is the same: its words and vectors stay.
    func writeMetadata(of row: PreparedRow, over stored: StoredRow) throws
    /// Writes `row` over `stored`, whose text differs: its words made again from the new text, its
    /// vectors (made of the old text) dropped.
    func rewrite(_ stored: StoredRow, with row: PreparedRow) throws
    /// Records a content type and its tree for the filters that match types under it; called for every
    /// row written, it writes only what ``ContentTypeMemo`` says is new in the transaction.
    func recordContentType(_ type: ContentType, tree explicit: [String]?) throws
    /// Queues the row `rowID` for the enrichment pass.
    func queueEnrichment(_ rowID: Int64) throws
    /// Whether any search-eligible activity is about an item (asked once per writer, so an index without
    /// activities pays nothing per insert).
    func mayHaveStandIns() throws -> Bool
    /// Deletes the items that activities about `identifier` stood in for while it was not indexed.
    func dropActivityItems(about identifier: String) throws
}

extension IndexRowWriter {
    /// Adds or replaces an item (``upsert(_:)``), or merges it into the stored one (`isUpdate`,
    /// ``merge(_:origin:)``).
    @discardableResult
    package func index(_ item: SearchableItem, origin: ItemOrigin) throws -> UpsertOutcome {
        if item.isUpdate { return try merge(item, origin: origin) }
        return try upsert(PreparedRow(item, origin: origin, now: now, defaultLifetime: defaultLifetime))
    }

    /// Adds a row, or writes it over the stored one under its identifier (``write(_:over:)``): its
    /// language settled (``IndexWriter/settleLanguage(of:)``) and its content type recorded first.
    @discardableResult
    package func upsert(_ row: PreparedRow) throws -> UpsertOutcome {
        CrashPoints.reach("index.item")
        return try write(try settled(row))
    }

    /// `row` with its language settled (``IndexWriter/settleLanguage(of:)``), its content type recorded.
    private func settled(_ row: PreparedRow) throws -> PreparedRow {
        var row = row
        try settleLanguage(of: &row.text)
        if let type = row.contentType { try recordContentType(ContentType(rawValue: type), tree: row.explicitTree) }
        return row
    }

    /// Whether `writer` may not change an item `owner` made; a refusal is noted in
    /// ``IndexWriter/refusedOwnership``.
    private func refuses(_ identifier: ItemIdentifier, by writer: ItemOwner, madeBy owner: ItemOwner) -> Bool {
        guard writer != owner else { return false }
        refusedOwnership.append((identifier: identifier, writer: writer, owner: owner))
        return true
    }

    /// ``upsert(_:)`` of a row whose language is settled and whose content type is recorded.
    @discardableResult
    package func write(_ row: PreparedRow) throws -> UpsertOutcome {
        if let id = try insertIfNew(row) {
            try wasInserted(id, row)
            return .inserted
        }
        guard let stored = try storedRow(ItemIdentifier(row.identifier)) else {
            throw ReplicaError(.storage, "item '\(row.identifier)' neither inserted nor found")
        }
        return try write(row, over: stored)
    }

    /// Writes a row over the stored one under its identifier, if the same owner made it (else the write
    /// is refused and noted in ``IndexWriter/refusedOwnership``): only its source version when nothing else
    /// changed (a record edited outside its searchable fields, a replay), only its values when its text is
    /// the same (its words and vectors stay), else all of it; its enrichment queued when it asks.
    package func write(_ row: PreparedRow, over stored: StoredRow) throws -> UpsertOutcome {
        if refuses(ItemIdentifier(row.identifier), by: row.origin.owner, madeBy: stored.owner) { return .notOwned }
        if stored.matches(row) {
            try writeSourceVersion(of: row, over: stored)
            return .unchanged
        }
        if stored.text.hasSameColumns(as: row.text) {
            try writeMetadata(of: row, over: stored)
        } else {
            try rewrite(stored, with: row)
        }
        if row.asksForEnrichment { try queueEnrichment(stored.id) }
        return .replaced
    }

    /// Merges an update (`isUpdate`) into the stored item, as Core Spotlight does: the attributes it sets
    /// replace the stored ones and the others are kept, and so are the stored domain and expiration date
    /// when it gives none. An update of an item that is missing or expired is ignored; one of an item
    /// another owner made is refused and noted in ``IndexWriter/refusedOwnership``.
    package func merge(_ item: SearchableItem, origin: ItemOrigin) throws -> UpsertOutcome {
        guard let stored = try storedRow(item.uniqueIdentifier), stored.expires > now.timeIntervalSince1970
        else { return .ignoredUpdate }
        if refuses(item.uniqueIdentifier, by: origin.owner, madeBy: stored.owner) { return .notOwned }
        let merged = SearchableItem(
            uniqueIdentifier: item.uniqueIdentifier,
            domainIdentifier: item.domainIdentifier ?? stored.domain.map(DomainIdentifier.init(rawValue:)),
            attributeSet: try stored.attributeSet().merging(item.attributeSet),
            expirationDate: item.expirationDate ?? Date(timeIntervalSince1970: stored.expires))
        let row = try settled(PreparedRow(merged, origin: origin, now: now, defaultLifetime: defaultLifetime))
        try rewrite(stored, with: row)
        if row.asksForEnrichment { try queueEnrichment(stored.id) }
        return .merged
    }

    /// What follows the insert of a new row: its enrichment queued when it asks, and the activities that
    /// stood in for it while it was not indexed dropped.
    package func wasInserted(_ rowID: Int64, _ row: PreparedRow) throws {
        if row.asksForEnrichment { try queueEnrichment(rowID) }
        if row.origin.owner != .activities, try mayHaveStandIns() { try dropActivityItems(about: row.identifier) }
    }
}

/// The content types a writer has recorded in its transaction, with their trees: a type is written once,
/// and again only when an item brings a tree of its own that differs from the one recorded.
package struct ContentTypeMemo {
    private var recorded: [String: String] = [:]

    package init() {}

    /// The tree to record for `type` (the item's own, `explicit`, or the type's known one), or `nil` when
    /// the transaction has recorded it already.
    package func treeToRecord(for type: ContentType, explicit: [String]?) -> String? {
        if explicit == nil, recorded[type.rawValue] != nil { return nil }
        let tree = ContentType.storedTree(explicit ?? type.tree)
        return recorded[type.rawValue] == tree ? nil : tree
    }

    /// Notes that `type` was recorded with `tree`.
    package mutating func noteRecorded(_ type: ContentType, tree: String) {
        recorded[type.rawValue] = tree
    }
}
