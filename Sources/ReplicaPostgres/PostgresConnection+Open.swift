import CPostgres
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension PostgresConnection {
    /// The connection parameters a URL (or `key=value` string) gives, as libpq reads them
    /// (`PQconninfoParse`): `host`, `port`, `user`, `password`, `dbname`, … Only the parameters the URL
    /// sets are present; nothing is looked up in the environment.
    ///
    /// For example:
    /// ```swift
    /// let parameters = try PostgresConnection.parameters(in: "postgresql://replica_app@/replica?host=/tmp/pg")
    /// print(parameters["host"] ?? "", parameters["dbname"] ?? "")   // /tmp/pg replica
    /// ```
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Code/invalidURL`` when libpq cannot read it. The
    ///   error does not quote the URL, which may hold a password.
    public static func parameters(in url: String) throws -> [String: String] {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &message) else {
            if let message { PQfreemem(message) }
            throw PostgresError(
                .invalidURL,
                "the database URL cannot be read (it is not repeated here, as it may hold a "
                    + "password): write it as postgresql://USER:PASSWORD@HOST:PORT/DATABASE, or "
                    + "postgresql://USER:PASSWORD@/DATABASE?host=/socket/folder for a Unix socket, with special characters "
                    + "percent-encoded")
        }
        defer { PQconninfoFree(options) }
        var parameters: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parameters[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return parameters
    }

    /// A `key='value'` connection string libpq reads back as `parameters` (quotes and backslashes
    /// escaped), in a stable order. Useful to change one parameter of a URL, such as the database.
    ///
    /// For example:
    /// ```swift
    /// var parameters = try PostgresConnection.parameters(in: "postgresql://replica_app@/replica?host=/tmp/pg")
    /// parameters["dbname"] = "replica_test_1"
    /// let other = PostgresConnection.connectionString(parameters)
    /// ```
    public static func connectionString(_ parameters: [String: String]) -> String {
        parameters.sorted { $0.key < $1.key }.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
            return "\(key)='\(escaped)'"
        }.joined(separator: " ")
    }

    /// Drives a connection started with `PQconnectStartParams` to its end, waiting on its socket as libpq
    /// asks ([libpq's non-blocking connect](https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-PQCONNECTSTARTPARAMS)).
    /// Returns whether it gave up because `timeout` passed.
    static func finishConnecting(_ handle: OpaquePointer, within timeout: Duration) -> Bool {
        guard PQstatus(handle) != CONNECTION_BAD else { return false }
        let deadline = ContinuousClock.now + timeout
        // Before the first PQconnectPoll, libpq waits as if it had returned PGRES_POLLING_WRITING.
        var state = PGRES_POLLING_WRITING
        while state != PGRES_POLLING_OK && state != PGRES_POLLING_FAILED {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return true }
            var descriptor = pollfd(
                fd: PQsocket(handle), events: Int16(state == PGRES_POLLING_READING ? POLLIN : POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: max(1, remaining.milliseconds)))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { return true }
            state = PQconnectPoll(handle)
        }
        return false
    }

    /// The server a connection is (or was to be) to, for messages: its host and port, or its socket
    /// folder and port.
    static func describeServer(_ handle: OpaquePointer) -> String {
        let host = PQhost(handle).map { String(cString: $0) } ?? ""
        let port = PQport(handle).map { String(cString: $0) } ?? ""
        if host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") {
            return "the PostgreSQL server on the socket in \(host.isEmpty ? "the default folder" : host) (port \(port))"
        }
        return "the PostgreSQL server at \(host):\(port)"
    }

    /// Lends `strings` as a NULL-terminated array of C strings, valid only inside `body`.
    static func withCStringArray<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { UnsafePointer($0) } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
