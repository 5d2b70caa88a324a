package import Foundation

// The index's rules written once, above the seam: Core Spotlight's `isUpdate` merge with its owner
// refusal, what follows the insert of a new item (its enrichment queued, the activities that stood in for
// it dropped) and the once-per-transaction record of a content type's tree. Each backend's writer gives
// the row-level operations they are written on (``IndexRowWriter``), so both backends behave alike.

/// An item as the `isUpdate` merge reads it from the index.
package struct StoredItemForUpdate {
    /// Its row.
    package var rowID: Int64
    package var domain: DomainIdentifier?
    /// When it expires, in seconds since 1970, as stored.
    package var expires: TimeInterval
    /// Its attributes, its text content among them.
    package var attributeSet: AttributeSet
    /// Who made it.
    package var owner: ItemOwner

    package init(
        rowID: Int64, domain: DomainIdentifier?, expires: TimeInterval, attributeSet: AttributeSet, owner: ItemOwner
    ) {
        self.rowID = rowID
        self.domain = domain
        self.expires = expires
        self.attributeSet = attributeSet
        self.owner = owner
    }
}

/// The row-level operations of a backend's writer that the rules above the seam are written on.
///
/// A backend reads and writes rows; what a merge keeps, whose items may be changed and what an insert
/// sets off are decided in this protocol's extension, the same way for every backend.
package protocol IndexRowWriter: IndexWriter {
    /// How long an item without an expiration date lives.
    var defaultLifetime: TimeInterval { get }
    /// Items this writer refused to write because another owner made them.
    var refusedOwnership: [(identifier: ItemIdentifier, writer: ItemOwner, owner: ItemOwner)] { get set }
    /// The stored item under `identifier`, expired or not; `nil` when there is none.
    func storedForUpdate(_ identifier: ItemIdentifier) throws -> StoredItemForUpdate?
    /// Writes `row` over the row `rowID`, which holds the same identifier: its words made again from the
    /// new text, its vectors (made of the old text) dropped, its enrichment queued when it asks.
    func rewrite(_ rowID: Int64, with row: PreparedRow) throws
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
    /// Merges an update (`isUpdate`) into the stored item, as Core Spotlight does: the attributes it sets
    /// replace the stored ones and the others are kept, and so are the stored domain and expiration date
    /// when it gives none. An update of an item that is missing or expired is ignored; one of an item
    /// another owner made is refused and noted in ``IndexWriter/refusedOwnership``.
    package func merge(_ item: SearchableItem, origin: ItemOrigin) throws -> UpsertOutcome {
        guard let stored = try storedForUpdate(item.uniqueIdentifier), stored.expires > now.timeIntervalSince1970
        else { return .ignoredUpdate }
        guard stored.owner == origin.owner else {
            refusedOwnership.append((identifier: item.uniqueIdentifier, writer: origin.owner, owner: stored.owner))
            return .notOwned
        }
        let merged = SearchableItem(
            uniqueIdentifier: item.uniqueIdentifier, domainIdentifier: item.domainIdentifier ?? stored.domain,
            attributeSet: stored.attributeSet.merging(item.attributeSet),
            expirationDate: item.expirationDate ?? Date(timeIntervalSince1970: stored.expires))
        var row = PreparedRow(merged, origin: origin, now: now, defaultLifetime: defaultLifetime)
        try settleLanguage(of: &row.text)
        if let type = row.contentType { try recordContentType(ContentType(rawValue: type), tree: row.explicitTree) }
        try rewrite(stored.rowID, with: row)
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
