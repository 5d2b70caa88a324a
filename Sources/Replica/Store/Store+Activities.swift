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
    /// An activity about an item is shown only when the item's owner lets the account read it now: the
    /// items are hydrated first, as a search's results are, and an activity whose item is gone, unreadable,
    /// changed since it was indexed or unanswered for is left out (its title would be the item's).
    ///
    /// - Parameters:
    ///   - accounts: the accounts to look in (every signed-in account when empty).
    ///   - limit: the most activities returned.
    ///   - hydration: how the items activities are about are checked with their owners; without a source
    ///     resolver, activities about sources' items are left out.
    /// - Throws: `ReplicaError` with code `accountNotSignedIn` when an account of `accounts` is not signed in.
    public func recentActivities(accounts: [AccountID] = [], limit: Int = 10, hydration: Hydration = Hydration())
        async throws
        -> [(account: AccountID, indexName: String, activity: RecentActivity)]
    {
        var found: [(account: AccountID, indexName: String, activity: RecentActivity)] = []
        let signedIn = try await signedInAccounts(among: accounts).map(\.id)
        guard limit > 0 else { return [] }
        for account in signedIn {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                // Every activity is read and sorted in any case; all of them are asked for, so that those
                // left out are replaced by the next.
                found += try await index.recentActivities(limit: .max).map { (account, name, $0) }
            }
        }
        found.sort {
            ($0.activity.engagement, $0.activity.lastViewed) > ($1.activity.engagement, $1.activity.lastViewed)
        }
        let hydrator = try await Hydrator(store: self, accounts: signedIn, hydration: hydration)
        var shown: [(account: AccountID, indexName: String, activity: RecentActivity)] = []
        var next = 0
        while shown.count < limit && next < found.count {
            let slice = found[next..<min(found.count, next + max(limit - shown.count, 8))]
            next += slice.count
            // The items these activities are about, as their indexes hold them.
            var items: [String: StoredItem] = [:]
            for (key, entries) in Dictionary(grouping: slice, by: { $0.account.rawValue + "\u{0}" + $0.indexName }) {
                guard let first = entries.first,
                    let index = try await existingIndex(named: first.indexName, account: first.account)
                else { continue }
                for stored in try await index.fetchItems(withIdentifiers: entries.map(\.activity.identifier)) {
                    items[key + "\u{0}" + stored.item.uniqueIdentifier.rawValue] = stored
                }
            }
            let passed = Set(
                await hydrator.hydrate(
                    items.values.map { stored in
                        SearchResult(
                            account: stored.account, indexName: stored.indexName, item: stored.item, score: 0,
                            snippet: nil,
                            origin: stored.origin, indexedAt: stored.indexedAt)
                    }, includingContent: false
                ).kept.map {
                    $0.account.rawValue + "\u{0}" + $0.indexName + "\u{0}" + $0.item.uniqueIdentifier.rawValue
                })
            for entry in slice {
                let key =
                    entry.account.rawValue + "\u{0}" + entry.indexName + "\u{0}" + entry.activity.identifier.rawValue
                // An activity about no item of the index shows only what was donated with it.
                if passed.contains(key)
                    || items[key] == nil && entry.activity.identifier.rawValue.hasPrefix("activity:")
                {
                    shown.append(entry)
                }
            }
        }
        return Array(shown.prefix(limit))
    }
}
