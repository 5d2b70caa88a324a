import Foundation
import ReplicaCore

extension SearchableIndex {
    /// Donates user activities (`NSUserActivity`): see ``UserActivity`` for what each does to search.
    ///
    /// - Throws: ``ReplicaError`` with code `invalidItem` for an activity missing what it needs (nothing
    ///   is written then).
    public func donateUserActivities(_ activities: [UserActivity]) async throws {
        for activity in activities { try activity.validate() }
        try await write { writer in try writer.donate(activities) }
    }

    /// Deletes the activities with these persistent identifiers (Core Spotlight's
    /// `deleteSavedUserActivities(withPersistentIdentifiers:)`).
    ///
    /// - Returns: how many were deleted.
    @discardableResult
    public func deleteSavedUserActivities(withPersistentIdentifiers identifiers: [String]) async throws -> Int {
        try await write { writer in try writer.deleteActivities(identifiers) }
    }

    /// Deletes every activity of the index (Core Spotlight's `deleteAllSavedUserActivities`).
    @discardableResult
    public func deleteAllSavedUserActivities() async throws -> Int {
        try await write { writer in try writer.deleteAllActivities() }
    }

    /// The items the person is likely to want next: those of prediction-eligible activities, most
    /// engaged first (``Engagement``).
    public func recentActivities(limit: Int = 10) async throws -> [RecentActivity] {
        try await read { reader in try reader.recentActivities(limit: limit) }
    }
}
