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
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    public func waitForNotifications(timeout: Duration) throws -> Set<String> {
        Set(try waitForNotices(timeout: timeout).map(\.channel))
    }

    /// A notification: its channel and its payload (empty when it was sent without one).
    public struct Notice: Sendable, Hashable {
        public var channel: String
        public var payload: String
    }

    /// As ``waitForNotifications(timeout:)``, with each notification's payload: those that arrived, in the
    /// order they came (PostgreSQL sends a transaction's identical notifications once).
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Code/connectionLost`` when the connection broke.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    public func waitForNotices(timeout: Duration) throws -> [Notice] {
        try exclusively {
            var notices = takeNotifications()
            guard notices.isEmpty else { return notices }
            let deadline = ContinuousClock.now + timeout
            while notices.isEmpty {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { break }
                let milliseconds = Int32(clamping: left.milliseconds + 1)
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, milliseconds)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { break }
                guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
                    throw PostgresError(
                        .connectionLost,
                        "the connection waiting for notifications broke: \(libpqMessage ?? "the server went away")")
                }
                notices = takeNotifications()
            }
            return notices
        }
    }

    /// The notifications libpq has read and not handed out yet.
    private func takeNotifications() -> [Notice] {
        var notices: [Notice] = []
        while let notification = PQnotifies(handle) {
            notices.append(
                Notice(
                    channel: String(cString: notification.pointee.relname),
                    payload: notification.pointee.extra.map { String(cString: $0) } ?? ""))
            PQfreemem(notification)
        }
        return notices
    }
}
