import Foundation
import Replica
import ReplicaPostgres
import Synchronization

/// Listens for the notifications the triggers of followed PostgreSQL tables send (`replica_changes`), so
/// that a running engine applies a change at once rather than at its next once-a-second look. One
/// connection per database, opened at the first wait and again after it breaks; used by one loop at a
/// time (``ProjectionEngine/run(every:onReport:onError:)``).
final class TableChangeListener: TableChangeWaiting {
    private let urls: [String]
    /// The listening connections, held for the whole of a wait (one loop waits at a time, so the lock is
    /// never contended; it makes a second caller wait its turn rather than share a connection).
    private let connections = Mutex<[String: PostgresConnection]>([:])

    /// Listens on the databases at these URLs.
    init(urls: [String]) {
        self.urls = urls
    }

    /// Waits up to `timeout` (on the first database; the others are only checked) and returns whether a
    /// table may have changed: a notification came, or a connection was lost or made anew (changes
    /// meanwhile were not heard).
    @available(*, noasync, message: "it waits on the databases; in async code run it in Blocking.run")
    package func wait(upTo timeout: Duration) -> Bool {
        connections.withLock { connections in wait(upTo: timeout, on: &connections) }
    }

    private func wait(upTo timeout: Duration, on connections: inout [String: PostgresConnection]) -> Bool {
        var changed = false
        for (position, url) in urls.enumerated() {
            do {
                let connection: PostgresConnection
                if let open = connections[url] {
                    connection = open
                } else {
                    connection = try PostgresConnection(url: url)
                    try connection.executeScript("LISTEN replica_changes")
                    connections[url] = connection
                    changed = true
                }
                if try !connection.waitForNotifications(timeout: position == 0 && !changed ? timeout : .zero).isEmpty {
                    changed = true
                }
            } catch {
                // Not reachable now: the once-a-second look still follows the table and says why it cannot;
                // this waits out its turn rather than trying again at once.
                let hadConnection = connections.removeValue(forKey: url) != nil
                changed = changed || hadConnection
                if position == 0 { Thread.sleep(forTimeInterval: Double(timeout.milliseconds) / 1000) }
            }
        }
        return changed
    }
}
