import CPostgres
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One connection to a PostgreSQL server: the owner of a libpq `PGconn`, closed when released (also when
/// opening failed halfway).
///
/// A connection is used by one thread at a time: a call from a second thread while another is inside
/// libpq on it stops the process. A connection ``PostgresPool`` opened belongs to a serial queue of its
/// own, and a call from anywhere but that queue stops the process too, in release builds as well. Its
/// calls block their thread, so they are refused in async code (`noasync`): run them in the pool's
/// async `withConnection`, or on a thread of your own. Statements run with their
/// parameters bound, never spliced into the SQL text, and each distinct SQL text is prepared once per
/// connection and reused (`PQsendPrepare`, then `PQsendQueryPrepared`). The reply is waited for on the
/// connection's socket, and checked on when it is long in coming (``awaitReply()``).
///
/// For example:
/// ```swift
/// let postgres = try PostgresConnection(url: "postgresql://replica_app:secret@/replica?host=/tmp/pg&port=5432")
/// try postgres.execute("CREATE TABLE IF NOT EXISTS notes(id bigint PRIMARY KEY, body text)")
/// try postgres.execute("INSERT INTO notes VALUES ($1, $2)", [1, "hello"])
/// let body = try postgres.execute("SELECT body FROM notes WHERE id = $1", [1]).string(0, 0)
/// ```
public final class PostgresConnection: @unchecked Sendable {
    /// Asks OpenSSL (which libpq signs in with: SCRAM's digests, TLS) not to tear itself down in an exit
    /// handler, before the first connection initialises it. Otherwise a process that exits while another
    /// of its threads is opening a connection (the vectors' listener, a pool's next connection) crashes
    /// in OpenSSL's freed locks: `replica search` on PostgreSQL did, about one run in four. Run once;
    /// nothing happens where libpq has no OpenSSL.
    static let keepOpenSSLUntilTheEnd: Void = {
        // OPENSSL_INIT_NO_ATEXIT (OpenSSL 1.1.1b and later), looked up rather than linked: libpq brings
        // libcrypto into the process, and replica links no OpenSSL of its own.
        typealias Initialise = @convention(c) (UInt64, OpaquePointer?) -> Int32
        guard let symbol = dlsym(nil, "OPENSSL_init_crypto") else { return }
        _ = unsafeBitCast(symbol, to: Initialise.self)(0x0008_0000, nil)
    }()

    let handle: OpaquePointer
    let options: Options
    /// The URL the connection was opened with, for the second connection that checks on a reply long in
    /// coming (``awaitReply()``).
    let url: String
    /// Why replica gave the connection up while waiting for a reply, when it did.
    var abandonment: String?
    /// Which server this is, for messages: its host and port or its socket folder (never a password).
    public let serverDescription: String
    /// The role the connection signed in as.
    public let userName: String
    /// The database the connection is to.
    public let databaseName: String
    /// The names of the statements prepared on this connection, by SQL text.
    private var preparedNames: [String: String] = [:]
    private var preparedCount = 0
    /// Of the varying statements (``executeVarying(_:_:)``): those prepared, by SQL text, and in the order
    /// they were; and the texts run once, not prepared yet.
    private var varyingNames: [String: String] = [:]
    private var varyingOrder: [String] = []
    private var varyingSeen: Set<String> = []
    var savepointDepth = 0
    /// The thread inside libpq on this connection right now (0: none), to catch use from two threads at
    /// once while the connection belongs to no queue.
    private let user = Atomic<UInt>(0)
    /// Set on the one queue the connection belongs to, once ``confine(to:)`` gave it one (see
    /// ``PostgresPool``).
    private let queueKey = DispatchSpecificKey<Bool>()
    /// The queue the connection belongs to, set once.
    private let confinement = Mutex<DispatchQueue?>(nil)
    private let isConfined = Atomic<Bool>(false)
    /// Set by libpq's notice receiver when the server says, unasked, that it is ending the session (a
    /// FATAL message while the connection is idle, as `pg_terminate_backend` or a shutdown sends).
    private let sessionEnded: UnsafeMutablePointer<Bool>

    /// How a connection opens and behaves.
    public struct Options: Sendable {
        /// The `application_name` the server shows for the session (`pg_stat_activity`); `nil` keeps
        /// the URL's, else "replica".
        public var applicationName: String?
        /// The longest a statement may run before the server stops it (`statement_timeout`); `nil` keeps
        /// the server's setting for the role and database.
        public var statementTimeout: Duration?
        /// How long opening may take, from the first packet to the signed-in session. A `connect_timeout`
        /// in the URL (in seconds, as libpq reads it) takes its place.
        public var connectTimeout: Duration = .seconds(10)
        /// How ``PostgresConnection/transaction(_:readOnly:_:)`` retries serialization failures and deadlocks.
        public var transactionRetry = TransactionRetry()
        /// How many prepared statements a connection keeps before it deallocates them all and starts
        /// again (SQL built with a varying shape would otherwise grow the server's memory without end).
        public var preparedStatementLimit = 256
        /// How many varying statements (``PostgresConnection/executeVarying(_:_:)``) a connection keeps
        /// prepared; past it, the oldest go.
        public var varyingStatementLimit = 64
        /// Called after each transaction the connection commits (but one begun read-only), with the
        /// server's write-ahead log position just past the commit (`pg_current_wal_insert_lsn()`, asked in
        /// the same round trip as `COMMIT`): what a standby must have replayed to show the transaction.
        /// `nil` asks nothing.
        public var committed: (@Sendable (WALPosition) -> Void)?

        /// Whether a reply long in coming is checked on from a second connection (``awaitReply()``); off
        /// for that second connection itself, which waits a fixed time instead.
        var checksLateReplies = true

        /// Makes the default options: no statement timeout, a 10-second connect timeout, 5 attempts per
        /// transaction.
        public init() {}
    }

    /// Connects to the server `url` names and signs in.
    ///
    /// The URL is read by libpq (`PQconnectdbParams` with `expand_dbname`): a
    /// [connection URI](https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-CONNSTRING) such as
    /// `postgresql://USER:PASSWORD@HOST:PORT/DATABASE` or `postgresql:///DATABASE?host=/socket/folder`,
    /// or a `key=value` connection string. libpq's environment variables (`PGHOST`, `PGPASSWORD`, …) and
    /// `~/.pgpass` fill what the URL leaves out.
    ///
    /// - Parameters:
    ///   - url: The server, role, password and database.
    ///   - options: The session's settings.
    /// - Throws: ``PostgresError`` with ``PostgresError/Code/connectionRefused``,
    ///   ``PostgresError/Code/serverUnreachable``, ``PostgresError/Code/authenticationFailed``,
    ///   ``PostgresError/Code/databaseMissing``, ``PostgresError/Code/invalidURL``, … in words.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    public init(url: String, options: Options = Options()) throws {
        Self.keepOpenSSLUntilTheEnd
        let parameters = try Self.parameters(in: url)
        let password = parameters["password"]
        var connectTimeout = options.connectTimeout
        if let text = parameters["connect_timeout"], let seconds = Int(text), seconds > 0 {
            // libpq takes less than 2 seconds as 2.
            connectTimeout = .seconds(max(2, seconds))
        }
        var keywords = ["dbname"]
        var values = [url]
        if let name = options.applicationName {
            keywords.append("application_name")
            values.append(name)
        } else {
            keywords.append("fallback_application_name")
            values.append("replica")
        }
        let started = Self.withCStringArray(keywords) { keywords in
            Self.withCStringArray(values) { values in PQconnectStartParams(keywords, values, 1) }
        }
        guard let handle = started else {
            throw PostgresError(.other, "libpq could not start a connection: out of memory")
        }
        // Verbose errors put the SQLSTATE in the message of a refused sign-in, the only place it is.
        PQsetErrorVerbosity(handle, PQERRORS_VERBOSE)
        // libpq prints notices (such as "relation already exists, skipping") on standard error unless
        // told otherwise; this receiver drops them, and notes the server's word that the session ends.
        let sessionEnded = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
        sessionEnded.initialize(to: false)
        PQsetNoticeReceiver(
            handle,
            { flag, notice in
                guard let flag, let notice, let severity = PQresultErrorField(notice, Int32(UInt8(ascii: "V"))) else {
                    return
                }
                let word = String(cString: severity)
                if word == "FATAL" || word == "PANIC" { flag.assumingMemoryBound(to: Bool.self).pointee = true }
            }, sessionEnded)
        let timedOut = Self.finishConnecting(handle, within: connectTimeout)
        guard PQstatus(handle) == CONNECTION_OK else {
            let error = PostgresError.connectionFailure(
                message: String(cString: PQerrorMessage(handle)), server: Self.describeServer(handle),
                user: PQuser(handle).map { String(cString: $0) } ?? "?",
                database: PQdb(handle).map { String(cString: $0) } ?? "?",
                password: password, timedOut: timedOut)
            PQfinish(handle)
            sessionEnded.deallocate()
            throw error
        }
        PQsetErrorVerbosity(handle, PQERRORS_DEFAULT)
        self.handle = handle
        self.sessionEnded = sessionEnded
        self.options = options
        self.url = url
        serverDescription = Self.describeServer(handle)
        userName = String(cString: PQuser(handle))
        databaseName = String(cString: PQdb(handle))
        if let timeout = options.statementTimeout {
            try executeScript("SET statement_timeout = \(max(1, timeout.milliseconds))")
        }
    }

    deinit {
        PQfinish(handle)
        sessionEnded.deallocate()
    }

    // MARK: Running statements

    /// Runs one statement with its parameters (`$1`, `$2`, …) bound, never spliced into the text.
    ///
    /// The statement is prepared the first time its SQL text runs on this connection and reused after.
    ///
    /// - Parameters:
    ///   - sql: One SQL statement.
    ///   - parameters: The values of `$1`, `$2`, … in order.
    /// - Returns: The rows it returned, if any, and how many rows it touched.
    /// - Throws: ``PostgresError`` in words, without the parameters.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    @discardableResult
    public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try exclusively {
            do {
                return try executePrepared(sql, parameters)
            } catch let error as PostgresError where error.sqlState == "0A000" && preparedNames[sql] != nil {
                // "cached plan must not change result type": a schema change (a column added to a table
                // the statement reads with *) since it was prepared. It is prepared anew: at once outside
                // a transaction, else at its next run (the failed transaction cannot go on). The old one
                // stays on the server until the cache is next cleared.
                preparedNames[sql] = nil
                if isInTransaction { throw error }
                return try executePrepared(sql, parameters)
            }
        }
    }

    /// Runs one statement with its parameters bound, where the SQL text is one of many variants, such as
    /// a statement that names one account's partition: prepared, a connection serving many accounts would
    /// keep one statement per account, and prepare each before its first and only run.
    ///
    /// A text run for the first time (among the connection's recent ones) is not prepared: it is parsed,
    /// planned for these values and run in one round trip (libpq's unnamed statement). From its second
    /// run it is prepared and reused, as ``execute(_:_:)`` does, among the last
    /// ``Options/varyingStatementLimit`` texts prepared so; the oldest are deallocated when more come.
    ///
    /// - Throws: ``PostgresError`` in words, without the parameters.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    @discardableResult
    public func executeVarying(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        try exclusively {
            if let name = varyingNames[sql] {
                do {
                    return try executePrepared(name: name, sql, parameters)
                } catch let error as PostgresError where error.sqlState == "0A000" {
                    // Prepared before a schema change (see execute(_:_:)): run unprepared, prepared anew later.
                    varyingNames[sql] = nil
                    varyingOrder.removeAll { $0 == sql }
                    if isInTransaction { throw error }
                    return try executeUnprepared(sql, parameters)
                }
            }
            guard varyingSeen.contains(sql) else {
                if varyingSeen.count >= 4 * options.varyingStatementLimit { varyingSeen.removeAll() }
                varyingSeen.insert(sql)
                return try executeUnprepared(sql, parameters)
            }
            varyingSeen.remove(sql)
            try makeRoomForVarying()
            let name = try prepare(sql)
            varyingNames[sql] = name
            varyingOrder.append(sql)
            return try executePrepared(name: name, sql, parameters)
        }
    }

    /// Deallocates the oldest quarter of the varying statements, in one round trip, when there is no room
    /// for another; not in a failed transaction, which refuses every statement.
    private func makeRoomForVarying() throws {
        guard varyingNames.count >= max(1, options.varyingStatementLimit),
            PQtransactionStatus(handle) != PQTRANS_INERROR
        else { return }
        let oldest = varyingOrder.prefix(max(1, options.varyingStatementLimit / 4))
        let script = oldest.compactMap { varyingNames[$0].map { "DEALLOCATE \($0);" } }.joined(separator: " ")
        _ = try checked(run { PQsendQuery(handle, script) }, sql: "DEALLOCATE")
        for sql in oldest { varyingNames[sql] = nil }
        varyingOrder.removeFirst(oldest.count)
    }

    private func executeUnprepared(_ sql: String, _ parameters: [PostgresValue]) throws -> PostgresResult {
        let result = try Self.withParameters(parameters, sql: sql) { count, values, lengths, formats in
            run { PQsendQueryParams(handle, sql, count, nil, values, lengths, formats, 0) }
        }
        return try checked(result, sql: sql)
    }

    private func executePrepared(_ sql: String, _ parameters: [PostgresValue]) throws -> PostgresResult {
        try executePrepared(name: try preparedName(for: sql), sql, parameters)
    }

    private func executePrepared(name: String, _ sql: String, _ parameters: [PostgresValue]) throws -> PostgresResult {
        let result = try Self.withParameters(parameters, sql: sql) { count, values, lengths, formats in
            run { PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0) }
        }
        return try checked(result, sql: sql)
    }

    /// Runs SQL text that takes no parameters and may hold several statements (a migration, `SET`,
    /// `BEGIN`), through the simple query protocol: nothing is prepared.
    ///
    /// - Throws: ``PostgresError`` in words.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    public func executeScript(_ sql: String) throws {
        try exclusively { _ = try checked(run { PQsendQuery(handle, sql) }, sql: sql) }
    }

    /// The statement name prepared for `sql`, preparing it first when this connection has not yet.
    private func preparedName(for sql: String) throws -> String {
        if let name = preparedNames[sql] { return name }
        if preparedNames.count >= options.preparedStatementLimit, PQtransactionStatus(handle) != PQTRANS_INERROR,
            (try? checked(run { PQsendQuery(handle, "DEALLOCATE ALL") }, sql: "DEALLOCATE ALL")) != nil
        {
            preparedNames.removeAll()
            varyingNames.removeAll()
            varyingOrder.removeAll()
        }
        let name = try prepare(sql)
        preparedNames[sql] = name
        return name
    }

    /// Prepares `sql` on the server under a name of its own, returned.
    private func prepare(_ sql: String) throws -> String {
        preparedCount += 1
        let name = "replica_\(preparedCount)"
        _ = try checked(run { PQsendPrepare(handle, name, sql, 0, nil) }, sql: sql)
        return name
    }

    /// The result when the statement succeeded; else the failure in words (the result is cleared).
    func checked(_ result: OpaquePointer?, sql: String?) throws -> PostgresResult {
        guard let result else { throw PostgresError.statementFailure(nil, on: self, sql: sql) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return PostgresResult(handle: result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            PQclear(result)
            abandonCopy()
            throw PostgresError(.invalidValue, "COPY runs through copy(into:columns:rows:), not execute", sql: sql)
        default:
            let error = PostgresError.statementFailure(result, on: self, sql: sql)
            PQclear(result)
            throw error
        }
    }

    /// Ends a `COPY` that was not asked for, so that the connection can go on.
    func abandonCopy() {
        _ = PQputCopyEnd(handle, "replica: COPY runs through copy(into:columns:rows:)")
        var buffer: UnsafeMutablePointer<CChar>?
        while PQgetCopyData(handle, &buffer, 0) > 0 { PQfreemem(buffer) }
        while let result = nextResult() { PQclear(result) }
    }

    /// Lays `parameters` out for libpq in one buffer: text values NUL-terminated in the text format,
    /// bytes in the binary format, NULL as a null pointer. The pointers exist only inside `body`.
    static func withParameters<T>(
        _ parameters: [PostgresValue], sql: String,
        _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) throws -> T {
        guard parameters.count <= Int(UInt16.max) else {
            throw PostgresError(
                .invalidValue, "a statement takes at most 65,535 parameters; \(parameters.count) were given", sql: sql)
        }
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for (index, parameter) in parameters.enumerated() {
            switch parameter {
            case .null:
                offsets.append(nil)
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                guard bytes.count < Int32.max else {
                    throw PostgresError(
                        .invalidValue, "parameter $\(index + 1) is larger than PostgreSQL takes (1 GB)", sql: sql)
                }
                offsets.append(buffer.count)
                buffer.append(contentsOf: bytes)
                lengths.append(Int32(bytes.count))
                formats.append(1)
            default:
                var text = parameter.textFormat!
                let start = buffer.count
                offsets.append(start)
                // The bytes copied at once where nothing needs escaping (the usual case).
                let needsEscapes = text.withUTF8 { utf8 in
                    guard !PostgresValue.holdsEscapedCharacters(utf8) else { return true }
                    buffer.append(contentsOf: utf8)
                    return false
                }
                if needsEscapes, let escaped = PostgresValue.escapedUTF8(text) { buffer += escaped }
                lengths.append(Int32(clamping: buffer.count - start))
                buffer.append(0)
                formats.append(0)
            }
        }
        // Never empty, so that an empty bytea, too, gets a pointer (a null one would mean NULL).
        buffer.append(0)
        return buffer.withUnsafeBytes { bytes in
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { (bytes.baseAddress! + $0).assumingMemoryBound(to: CChar.self) }
            }
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(parameters.count), values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    // MARK: State

    /// The process ID of the server process serving this connection (`pg_backend_pid()`).
    public var backendProcessID: Int32 { PQbackendPID(handle) }

    /// Whether the connection is still good: libpq has not seen it break, and what the server sent
    /// meanwhile unasked has been read without finding the connection closed or the server's word that
    /// it ends the session (`pg_terminate_backend`, a shutdown). It never waits.
    public var isUsable: Bool {
        exclusively {
            // A first read takes the server's last message, a second one meets the end of the stream.
            for _ in 0..<8 where PQstatus(handle) == CONNECTION_OK {
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 0) > 0, PQconsumeInput(handle) == 1 else { break }
            }
            // Parses what was read: a message the server sent while the connection was idle goes to the
            // notice receiver, which notes a FATAL one.
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
        }
        return PQstatus(handle) == CONNECTION_OK && !sessionEnded.pointee
    }

    /// Whether a transaction is open on the connection (healthy or failed).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// libpq's last message on this connection, its first line only.
    var libpqMessage: String? {
        let text = String(cString: PQerrorMessage(handle)).split(separator: "\n").first.map(String.init)
        return text?.isEmpty == false ? text : nil
    }

    // MARK: Confinement

    /// Gives the connection to `queue` for the rest of its life: from then on, a call into libpq on it
    /// from anywhere else stops the process, in release builds too. ``PostgresPool`` confines each of its
    /// connections to a serial queue of its own and lends it only there.
    func confine(to queue: DispatchQueue) {
        confinement.withLock { current in
            precondition(current == nil, "a PostgresConnection belongs to one queue for its life")
            queue.setSpecific(key: queueKey, value: true)
            current = queue
        }
        isConfined.store(true, ordering: .releasing)
    }

    /// Runs `body` on the connection's queue (at once when already there), or on the calling thread when
    /// the connection belongs to no queue.
    func onItsQueue<T>(_ body: () throws -> T) rethrows -> T {
        guard let queue = confinement.withLock({ $0 }), DispatchQueue.getSpecific(key: queueKey) != true else {
            return try body()
        }
        return try queue.sync(execute: body)
    }

    /// Runs `body`, a call into libpq on this connection, after checking that it is allowed here: on the
    /// connection's queue once it has one (a queue-specific lookup, as for SQLite's connections), else
    /// not while another thread is inside libpq on it. A failed check stops the process in every build,
    /// since two threads in one connection mix their statements' replies silently. The same thread may
    /// nest calls.
    @inline(__always)
    func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        if isConfined.load(ordering: .acquiring) {
            if DispatchQueue.getSpecific(key: queueKey) != true {
                fatalError(
                    "a replica PostgresConnection (\(serverDescription)) was used off its queue; use it only inside the body PostgresPool lends it to"
                )
            }
            return try body()
        }
        let me = UInt(pthread_self())
        let (exchanged, current) = user.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        if !exchanged && current != me {
            fatalError(
                "a replica PostgresConnection (\(serverDescription)) was used from two threads at once; use it from one at a time"
            )
        }
        defer { if exchanged { user.store(0, ordering: .releasing) } }
        return try body()
    }
}
