import Foundation
import ReplicaCore

/// Which index a reindex request is about (Core Spotlight's `CSSearchableIndexDescription`).
public struct IndexDescription: Hashable, Sendable {
    /// The account whose index it is.
    public var account: AccountID
    /// The index's name within its account.
    public var indexName: String

    /// Creates a description of the index `indexName` of `account`.
    public init(account: AccountID, indexName: String) {
        self.account = account
        self.indexName = indexName
    }
}

/// The app's source of one entity type, asked to index its entities again (App Intents'
/// `IndexedEntityQuery`): all of them when the index is new or was rebuilt, or some when their stored
/// copies could not be read back. Asked by the same machinery as ``IndexDelegate``, and as it, held
/// weakly: keep a strong reference for as long as it should be asked.
///
/// For example:
/// ```swift
/// final class LandmarkQuery: IndexedEntityQuery {
///     func reindexEntities(withIdentifiers identifiers: [String], indexDescription: IndexDescription) async throws {
///         // fetch these landmarks and call index.indexEntities(_:priority:) with them
///     }
///     func reindexAllEntities(indexDescription: IndexDescription) async throws {
///         // fetch every landmark and call index.indexEntities(_:priority:)
///     }
/// }
/// let landmarks = LandmarkQuery()
/// try await index.setEntityQuery(landmarks, forType: "LandmarkEntity")
/// ```
public protocol IndexedEntityQuery: AnyObject, Sendable {
    /// Index these entities of the type again (or delete the items of those that are gone).
    func reindexEntities(withIdentifiers identifiers: [String], indexDescription: IndexDescription) async throws
    /// Index every entity of the type again.
    func reindexAllEntities(indexDescription: IndexDescription) async throws
}

extension SearchableIndex {
    /// Indexes entities directly (App Intents' `indexAppEntities(_:priority:)`): each becomes the item
    /// ``SearchableItem/init(entity:priority:domainIdentifier:)`` describes; an entity indexed again
    /// replaces its item.
    ///
    /// - Parameter priority: 0 to 100 (clamped). Among matches that are otherwise about equal, a higher
    ///   priority ranks first: it adds up to 0.02 to a result's score of 0 to 1 (0.0002 a point), too
    ///   little to lift an entity over a clearly better match.
    /// - Throws: ``ReplicaError`` with code `invalidItem` for a bad type name or empty id, and what
    ///   ``indexItems(_:)`` throws.
    public func indexEntities<Entity: IndexedEntity>(_ entities: [Entity], priority: Int = 0) async throws {
        for entity in entities { try EntityReference(typeName: Entity.typeName, id: entity.id).validate() }
        try await indexItems(entities.map { SearchableItem(entity: $0, priority: priority) })
    }

    /// Deletes entities' items by type and identifier.
    @discardableResult
    public func deleteEntities(ofType typeName: String, withIdentifiers identifiers: [String]) async throws -> Int {
        try await deleteItems(
            withIdentifiers: identifiers.map { EntityReference(typeName: typeName, id: $0).itemIdentifier })
    }

    /// What a score gains from an entity's priority (0 to 100): up to 0.02.
    package static func entityBonus(_ attributes: AttributeSet) -> Double {
        guard let priority = attributes[.entityPriority]?.numberValue else { return 0 }
        return 0.02 * min(max(priority, 0), 100) / 100
    }
}
