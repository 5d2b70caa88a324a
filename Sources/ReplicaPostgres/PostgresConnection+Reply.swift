import CPostgres
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// Sends a statement with `send` (one of libpq's `PQsend…` functions) and returns its result as
    /// `PQexec` would: the last one of a script, or the first that failed, or the start of a `COPY`;
    /// `nil` when libpq could not send it (its message is on the connection).
    func run(_ send: () -> Int32) -> OpaquePointer? {
        guard send() == 1 else { return nil }
        var kept: OpaquePointer?
        while let result = nextResult() {
            if let previous = kept {
                if PQresultStatus(previous) == PGRES_FATAL_ERROR {
                    PQclear(result)
                    continue
                }
                PQclear(previous)
            }
            kept = result
            let status = PQresultStatus(result)
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH { break }
        }
        return kept
    }

    /// The next result of the statement sent, once it has arrived (``awaitReply()``); `nil` after the last.
    func nextResult() -> OpaquePointer? {
        awaitReply()
        return PQgetResult(handle)
    }

    /// Waits until libpq has the next result of the statement sent, or knows that it never will.
    ///
    /// libpq alone would wait without end for a reply the server was never asked for: when a send fails
    /// on a socket that stays open (`ENOBUFS`, `ENOMEM`, an interrupted write), libpq drops what it
    /// could not send, says nothing until it reads, and then waits for the server, which waits for the
    /// statement. So a reply that is long in coming is checked on, half a second into the wait and then
    /// at doubling intervals up to 30 seconds, from a second connection: `pg_stat_activity` tells
    /// whether the server's session is working or waiting for this client (idle, or reading). When two
    /// checks in a row find it waiting since the same moment, the statement never arrived whole: the
    /// connection is shut, so that libpq reports it lost and the server ends the session and rolls back
    /// its transaction. A check that cannot be made (no second connection, the session not shown to the
    /// role, a pooler's process numbers) proves nothing, and the wait goes on.
    func awaitReply() {
        var interval = Duration.milliseconds(500)
        var waitingSince: String?
        var checker: PostgresConnection?
        var failedReads = 0
        let deadline = options.checksLateReplies ? nil : ContinuousClock.now + Self.checkerReplyTimeout
        while PQisBusy(handle) == 1 {
            var wait = interval
            if let deadline {
                wait = deadline - ContinuousClock.now
                guard wait > .zero else {
                    abandon("the server did not answer within \(Self.checkerReplyTimeout.components.seconds) seconds")
                    return
                }
            }
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: max(1, wait.milliseconds)))
            if ready < 0 && errno == EINTR { continue }
            if ready != 0 {
                // Readable, or the poll failed: reading tells which. A read that fails on a connection
                // still open is tried again (libpq keeps what it read); the third failure in a row ends it.
                if PQconsumeInput(handle) == 1 {
                    failedReads = 0
                } else if PQstatus(handle) != CONNECTION_OK {
                    return
                } else {
                    failedReads += 1
                    if failedReads == 3 {
                        abandon(
                            "reading its reply failed three times in a row (\(libpqMessage ?? "no reason given")); replica closed "
                                + "the connection, so whether the statement took effect is not known")
                        return
                    }
                }
                waitingSince = nil
                continue
            }
            guard deadline == nil else { continue }
            let seen = sessionWaitingForThisClient(checker: &checker)
            if let seen, seen == waitingSince {
                abandon(
                    "the server never received the whole statement (a send to it failed) and went on waiting "
                        + "for it; replica closed the connection, so the statement did not run and its transaction was rolled back"
                )
                return
            }
            waitingSince = seen
            interval = min(interval * 2, .seconds(30))
        }
    }

    /// How long a checking connection waits for its own replies.
    static let checkerReplyTimeout = Duration.seconds(10)

    /// When the server's session of this connection is waiting for this client (idle, or reading from
    /// it): its state and since when, which stay the same while it waits. `nil` when it is working, or
    /// when it cannot be told.
    private func sessionWaitingForThisClient(checker: inout PostgresConnection?) -> String? {
        do {
            if checker == nil {
                var options = Options()
                options.connectTimeout = .seconds(5)
                options.applicationName = "replica (checking on a reply)"
                options.checksLateReplies = false
                checker = try PostgresConnection(url: url, options: options)
            }
            let session = try checker!.execute(
                "SELECT state, wait_event, state_change::text FROM pg_stat_activity WHERE pid = $1",
                [.int(Int64(PQbackendPID(handle)))])
            guard session.rowCount == 1, let state = session.string(0, 0), let since = session.string(0, 2),
                state.hasPrefix("idle") || session.string(0, 1) == "ClientRead"
            else { return nil }
            return state + " " + since
        } catch {
            checker = nil
            return nil
        }
    }

    /// Gives the connection up: shuts its socket, so that libpq finds it closed and the server ends the
    /// session.
    private func abandon(_ reason: String) {
        abandonment = reason
        shutdown(PQsocket(handle), Int32(SHUT_RDWR))
        _ = PQconsumeInput(handle)
    }
}
