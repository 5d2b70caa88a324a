import Foundation

extension Store {
    /// The items each signed-in account's person (or those of `accounts`) is likely to want next, from
    /// their prediction-eligible user activities, most engaged first across every index.
    ///
    /// For example:
    /// ```swift
    /// for recent in try await store.recentActivities(accounts: ["alice"], limit: 5) {
    ///     print(recent.activity.identifier, recent.activity.title ?? "", recent.activity.engagement)
    /// }
    /// ```
    ///
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when an account of `accounts` is not signed in.
    public func recentActivities(accounts: [AccountID] = [], limit: Int = 10) async throws
        -> [(account: AccountID, indexName: String, activity: RecentActivity)] {
        var found: [(account: AccountID, indexName: String, activity: RecentActivity)] = []
        var signedIn = try await signedInAccounts().map(\.id)
        if let absent = accounts.first(where: { !signedIn.contains($0) }) {
            throw ReplicaError(.accountNotSignedIn, "account '\(absent)' is not signed in; sign it in first (replica accounts sign-in \(absent))")
        }
        if !accounts.isEmpty { signedIn = signedIn.filter(accounts.contains) }
        for account in signedIn {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                found += try await index.recentActivities(limit: limit).map { (account, name, $0) }
            }
        }
        return Array(found.sorted { ($0.activity.engagement, $0.activity.lastViewed) > ($1.activity.engagement, $1.activity.lastViewed) }
            .prefix(limit))
    }
}
