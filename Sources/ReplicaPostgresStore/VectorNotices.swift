import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import Synchronization

/// What a store on PostgreSQL hears of other processes' vector writes: one connection of its own that
/// listens on `replica_vectors` (migration 0007 notifies it, at commit, whenever an index's
/// `vectors_version` moves), and refreshes the vectors an index of this process holds in memory before
/// its next search asks for them.
///
/// The version in `replica.meta` stays the truth: every search still checks it in its own snapshot and
/// reads the vectors itself when they are not current (a notification not yet heard, a standby not yet
/// replayed, the listener's connection down). The listener only moves that read out of the search's way.
/// It starts when an index first holds vectors, and stops when the store goes.
package final class VectorNotices: Sendable {
    /// The channel migration 0007's trigger notifies.
    static let channel = "replica_vectors"

    private let shared: Shared

    /// - Parameter url: the database to listen on (the primary: notifications are not replayed on a standby).
    package init(url: String) {
        shared = Shared(url: url)
    }

    deinit { shared.state.withLock { $0.stopped = true } }

    /// Asks for `storage`'s vectors to be refreshed whenever another process changes them; starts the
    /// listener on the first call. Calling it again for the same storage does nothing.
    func watch(_ storage: PostgresIndexStorage) {
        let start = shared.state.withLock { state -> Bool in
            let key = Self.key(account: storage.account, indexName: storage.indexName)
            var watching = state.watched[key, default: []].filter { $0.storage != nil }
            guard !watching.contains(where: { $0.storage === storage }) else { return false }
            watching.append(Watched(storage: storage))
            state.watched[key] = watching
            let wasStarted = state.started
            state.started = true
            return !wasStarted
        }
        guard start else { return }
        let shared = shared
        let thread = Thread { shared.listen() }
        thread.name = "replica vector notices"
        thread.start()
    }

    /// The payload the trigger sends for an index.
    static func key(account: AccountID, indexName: String) -> String { "\(account.rawValue)/\(indexName)" }

    private struct Watched: Sendable {
        weak var storage: PostgresIndexStorage?
    }

    private struct State: Sendable {
        var watched: [String: [Watched]] = [:]
        var started = false
        var stopped = false
    }

    /// What the listener's thread shares with the store, so that the store can go while it runs.
    private final class Shared: Sendable {
        let url: String
        let state = Mutex(State())

        init(url: String) { self.url = url }

        /// Listens until the store goes. A lost connection is made anew (a second later when the server
        /// cannot be reached), and then every watched index is refreshed: what changed meanwhile was not heard.
        func listen() {
            var connection: PostgresConnection?
            while !state.withLock({ $0.stopped }) {
                do {
                    if connection == nil {
                        let fresh = try PostgresConnection(url: url)
                        try fresh.executeScript("LISTEN \(VectorNotices.channel)")
                        connection = fresh
                        refresh(state.withLock { Array($0.watched.keys) })
                    }
                    let notices = try connection!.waitForNotices(timeout: .milliseconds(500))
                    refresh(Array(Set(notices.filter { $0.channel == VectorNotices.channel }.map(\.payload))))
                } catch {
                    connection = nil
                    Thread.sleep(forTimeInterval: 1)
                }
            }
        }

        private func refresh(_ keys: [String]) {
            for key in keys {
                let storages = state.withLock { $0.watched[key]?.compactMap(\.storage) ?? [] }
                for storage in storages { storage.refreshHeldVectors() }
            }
        }
    }
}
