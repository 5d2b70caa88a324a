import Foundation
import ReplicaCore
package import ReplicaIndex

extension SearchableIndex {
    /// Opens the index kept in the SQLite file at `path` (the embedded default).
    package convenience init(
        path: String, name: String, account: AccountID, signIn: IndexLease, configuration: Configuration,
        events: @escaping @Sendable (StoreEvent) -> Void
    ) throws {
        let storage = try SQLiteIndexStorage(
            path: path, name: name, account: account, busyTimeout: configuration.busyTimeout,
            cacheKiB: configuration.cacheKiB, events: events)
        self.init(
            storage: storage, name: name, account: account, signIn: signIn, configuration: configuration, events: events
        )
        storage.onRebuilt { [weak self] in try? await self?.deliverPendingReindex() }
    }
}
