import CPostgres
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// Waits up to `timeout` for a notification on a channel the connection listens on (`LISTEN`), and
    /// returns the channels of those that arrived (each once), or an empty list when none did. A
    /// notification that arrived before the call is returned at once.
    ///
    /// For example:
    /// ```swift
    /// let listener = try PostgresConnection(url: "postgresql:///app?host=/run/postgresql")
    /// try listener.executeScript("LISTEN replica_changes")
    /// let channels = try listener.waitForNotifications(timeout: .milliseconds(100))
    /// print(channels.contains("replica_changes"))
    /// ```
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Code/connectionLost`` when the connection broke.
    public func waitForNotifications(timeout: Duration) throws -> Set<String> {
        try exclusively {
            var channels = takeNotifications()
            guard channels.isEmpty else { return channels }
            let deadline = ContinuousClock.now + timeout
            while channels.isEmpty {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { break }
                let milliseconds = Int32(clamping: left.milliseconds + 1)
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, milliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { break }
                guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                    throw PostgresError(.connectionLost, "the connection waiting for notifications broke: \(libpqMessage ?? "the server went away")")
                }
                channels = takeNotifications()
            }
            return channels
        }
    }

    /// The channels of the notifications libpq has read and not handed out yet.
    private func takeNotifications() -> Set<String> {
        var channels = Set<String>()
        while let notification = PQnotifies(handle) {
            channels.insert(String(cString: notification.pointee.relname))
            PQfreemem(notification)
        }
        return channels
    }
}
