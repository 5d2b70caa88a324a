import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaPostgres

extension PostgresIndexWriter {
    // MARK: Activities

    /// Stores donated activities: a persistent identifier already held counts one more view. A
    /// search-eligible activity about no item of this index is indexed as an item of its own, until the
    /// item it is about is indexed (``dropActivityItems(about:)``).
    package func donate(_ activities: [UserActivity]) throws {
        for activity in activities {
            let date = activity.date ?? now
            try execute(
                """
                INSERT INTO replica.activities AS activities (account, index_name, persistent, type, title, related, keywords, date, views,
                    search, prediction, attributes, entity_type, entity_id)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10, $11, $12, $13)
                ON CONFLICT (account, index_name, persistent) DO UPDATE SET type = excluded.type, title = excluded.title,
                    related = excluded.related, keywords = excluded.keywords, date = greatest(activities.date, excluded.date),
                    views = activities.views + 1, search = excluded.search, prediction = excluded.prediction,
                    attributes = excluded.attributes, entity_type = excluded.entity_type, entity_id = excluded.entity_id
                """,
                [
                    .text(activity.persistentIdentifier), .text(activity.activityType), PostgresValue(activity.title),
                    PostgresValue(activity.relatedUniqueIdentifier?.rawValue),
                    .text(JSON.array(activity.keywords.map(JSON.string)).serialized()),
                    .double(date.timeIntervalSince1970),
                    .bool(activity.isEligibleForSearch), .bool(activity.isEligibleForPrediction),
                    PostgresValue(activity.attributeSet.map { $0.json().serialized() }),
                    PostgresValue(activity.entity?.typeName), PostgresValue(activity.entity?.id),
                ])
            try updateStandIn(for: activity, at: date)
        }
    }

    /// Whether a search-eligible activity is about an item: asked once per writer.
    package func mayHaveStandIns() throws -> Bool {
        if let known = activitiesMayStandIn { return known }
        let found =
            try execute(
                """
                SELECT 1 FROM replica.activities WHERE account = $1 AND index_name = $2 AND related IS NOT NULL AND search LIMIT 1
                """
            ).rowCount > 0
        activitiesMayStandIn = found
        return found
    }

    /// Deletes the items that activities about `identifier` stood in for while it was not indexed: once
    /// it is, they raise its ranking instead of appearing beside it.
    package func dropActivityItems(about identifier: String) throws {
        let result = try execute(
            "SELECT persistent FROM replica.activities WHERE account = $1 AND index_name = $2 AND related = $3 AND search",
            [.text(identifier)])
        let standIns = (0..<result.rowCount).compactMap {
            result.string($0, 0).map { ItemIdentifier("activity:" + $0) }
        }
        if !standIns.isEmpty { _ = try delete(identifiers: standIns, owner: .activities) }
    }

    /// Deletes activities by persistent identifier (and the items made of them).
    @discardableResult
    package func deleteActivities(_ persistentIdentifiers: [String]) throws -> Int {
        var deleted = 0
        for identifier in persistentIdentifiers {
            deleted += try execute(
                "DELETE FROM replica.activities WHERE account = $1 AND index_name = $2 AND persistent = $3",
                [.text(identifier)]
            ).affectedRows
            _ = try delete(identifiers: [ItemIdentifier("activity:" + identifier)], owner: .activities)
        }
        return deleted
    }

    /// Deletes every activity, and the items made of them.
    @discardableResult
    package func deleteAllActivities() throws -> Int {
        let result = try execute(
            "SELECT persistent FROM replica.activities WHERE account = $1 AND index_name = $2 ORDER BY id")
        return try deleteActivities((0..<result.rowCount).compactMap { result.string($0, 0) })
    }
}
