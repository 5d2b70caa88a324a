import Foundation
import ReplicaCore
package import ReplicaIndex
import ReplicaSQLite

extension SQLiteIndexWriter {
    /// Stores donated activities: a persistent identifier already held counts one more view. A
    /// search-eligible activity about no item of this index is indexed as an item of its own, until the
    /// item it is about is indexed (``dropActivityItems(about:)``).
    package func donate(_ activities: [UserActivity]) throws {
        let upsert = try connection.cached(
            """
            INSERT INTO activities(persistent, type, title, related, keywords, date, views, search, prediction, attributes,
                entity_type, entity_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?10, ?11)
            ON CONFLICT(persistent) DO UPDATE SET type = ?2, title = ?3, related = ?4, keywords = ?5, date = max(date, ?6),
                views = views + 1, search = ?7, prediction = ?8, attributes = ?9, entity_type = ?10, entity_id = ?11
            """)
        for activity in activities {
            let date = activity.date ?? now
            try upsert.run([
                .text(activity.persistentIdentifier), .text(activity.activityType), SQLValue(activity.title),
                SQLValue(activity.relatedUniqueIdentifier?.rawValue),
                .text(JSON.array(activity.keywords.map(JSON.string)).serialized()), .real(date.timeIntervalSince1970),
                .integer(activity.isEligibleForSearch ? 1 : 0), .integer(activity.isEligibleForPrediction ? 1 : 0),
                SQLValue(activity.attributeSet.map { $0.json().serialized() }),
                SQLValue(activity.entity?.typeName), SQLValue(activity.entity?.id),
            ])
            try updateStandIn(for: activity, at: date)
        }
    }

    /// Deletes the items that activities about `identifier` stood in for while it was not indexed: once
    /// it is, they raise its ranking instead of appearing beside it.
    package func dropActivityItems(about identifier: String) throws {
        let standIns = try connection.cached("SELECT persistent FROM activities WHERE related = ? AND search = 1")
            .rows([.text(identifier)]) { ItemIdentifier("activity:" + $0.text(0)) }
        if !standIns.isEmpty { _ = try delete(identifiers: standIns, owner: .activities) }
    }

    /// Deletes activities by persistent identifier (and the items made of them).
    @discardableResult
    package func deleteActivities(_ persistentIdentifiers: [String]) throws -> Int {
        var deleted = 0
        for identifier in persistentIdentifiers {
            try connection.cached("DELETE FROM activities WHERE persistent = ?").run([.text(identifier)])
            deleted += connection.changes
            _ = try delete(identifiers: [ItemIdentifier("activity:" + identifier)], owner: .activities)
        }
        return deleted
    }

    /// Deletes every activity (Core Spotlight's `deleteSavedUserActivities`), and the items made of them.
    @discardableResult
    package func deleteAllActivities() throws -> Int {
        let identifiers = try connection.cached("SELECT persistent FROM activities").rows { $0.text(0) }
        return try deleteActivities(identifiers)
    }
}

extension SQLiteIndexReader {
    /// The engagement of each of these items that search-eligible activities are about.
    package func engagement(of identifiers: [ItemIdentifier]) throws -> [ItemIdentifier: Double] {
        guard !identifiers.isEmpty,
            try connection.cached("SELECT 1 FROM activities WHERE search = 1 AND related IS NOT NULL LIMIT 1").firstRow(
                [], { _ in true }) == true
        else { return [:] }
        var engagement: [ItemIdentifier: Double] = [:]
        let lookup = try connection.cached(
            "SELECT max(date), sum(views) FROM activities WHERE related = ? AND search = 1")
        for identifier in identifiers {
            try lookup.firstRow([.text(identifier.rawValue)]) { row in
                guard !row.isNull(0) else { return }
                engagement[identifier] = Engagement.value(
                    lastViewed: Date(timeIntervalSince1970: row.double(0)), views: row.int(1), now: now)
            }
        }
        return engagement
    }

    /// The prediction-eligible activities' items, most engaged first: the items the person is likely to
    /// want next.
    package func recentActivities(limit: Int) throws -> [RecentActivity] {
        let rows = try connection.cached(
            """
            SELECT coalesce(activities.related, 'activity:' || activities.persistent), max(activities.date), sum(activities.views),
                activities.type, coalesce(nullif(items.title, ''), activities.title), activities.entity_type, activities.entity_id
            FROM activities LEFT JOIN items ON items.identifier = activities.related AND items.expires > ?1
            WHERE activities.prediction = 1 AND (activities.related IS NULL OR items.id IS NOT NULL)
            GROUP BY 1
            """
        ).rows([.real(now.timeIntervalSince1970)]) { row in
            let lastViewed = Date(timeIntervalSince1970: row.double(1))
            let entity = row.optionalText(5).flatMap { type in
                row.optionalText(6).map { EntityReference(typeName: type, id: $0) }
            }
            let title = row.optionalText(4).flatMap { $0.isEmpty ? nil : $0 }
            return RecentActivity(
                identifier: ItemIdentifier(row.text(0)), title: title, activityType: row.text(3),
                lastViewed: lastViewed,
                views: row.int(2), engagement: Engagement.value(lastViewed: lastViewed, views: row.int(2), now: now),
                entity: entity)
        }
        return Array(rows.sorted { ($0.engagement, $0.lastViewed) > ($1.engagement, $1.lastViewed) }.prefix(limit))
    }
}
