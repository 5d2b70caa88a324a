import Dispatch
import Synchronization

/// A few connections to one server, each lent to one caller at a time.
///
/// The pool opens connections as callers need them, up to ``maximumConnections``; a caller beyond that
/// waits for one to come back. A connection that broke (the server ended its session, restarted or
/// went away) is dropped, not lent again: the next caller gets a new one. A connection given back inside
/// a transaction is rolled back first.
///
/// Each connection belongs to a serial Dispatch queue of its own, and its body runs there: a connection
/// used anywhere else (kept past the body, handed to another thread) stops the process with a message, in
/// release builds too, rather than mixing two callers' replies. Blocking libpq calls never run on Swift's
/// cooperative pool: the async `withConnection` starts on a Dispatch thread, and the synchronous form is
/// for threads of the caller's own.
///
/// For example:
/// ```swift
/// let pool = PostgresPool(url: "postgresql://replica_app:secret@/replica?host=/tmp/pg", maximumConnections: 4)
/// let count = try await pool.withConnection { postgres in
///     try postgres.execute("SELECT count(*) FROM notes").int(0, 0) ?? 0
/// }
/// ```
public final class PostgresPool: Sendable {
    /// The most connections the pool keeps open at once.
    public let maximumConnections: Int
    private let open: @Sendable () throws -> PostgresConnection
    private let state = Mutex(State())

    /// What a waiting caller is given: a connection to use, or leave to open one (a slot freed by a
    /// connection that was dropped or never opened).
    private enum Grant: Sendable {
        case connection(PostgresConnection)
        case open
    }

    /// A caller waiting for a connection, on a thread of its own or in a task.
    private enum Waiter: Sendable {
        case thread(ThreadWaiter)
        case task(CheckedContinuation<Grant, Never>)

        func resume(with grant: Grant) {
            switch self {
            case .thread(let waiter):
                waiter.grant.withLock { $0 = grant }
                waiter.semaphore.signal()
            case .task(let continuation):
                continuation.resume(returning: grant)
            }
        }
    }

    /// A thread's wait: the grant is written before the semaphore is signalled, and read after.
    private final class ThreadWaiter: Sendable {
        let semaphore = DispatchSemaphore(value: 0)
        let grant = Mutex<Grant?>(nil)
    }

    private struct State {
        var idle: [PostgresConnection] = []
        /// Connections open or being opened, lent or idle.
        var count = 0
        var waiters: [Waiter] = []
    }

    /// Makes a pool for the server `url` names; it opens no connection until one is asked for.
    ///
    /// - Parameters:
    ///   - url: The server, role, password and database (see ``PostgresConnection/init(url:options:)``).
    ///   - options: Each connection's settings.
    ///   - maximumConnections: The most connections open at once (at least 1).
    public convenience init(
        url: String, options: PostgresConnection.Options = PostgresConnection.Options(), maximumConnections: Int = 4
    ) {
        self.init(maximumConnections: maximumConnections) { try PostgresConnection(url: url, options: options) }
    }

    /// Makes a pool that opens its connections with `open`.
    ///
    /// - Parameters:
    ///   - maximumConnections: The most connections open at once (at least 1).
    ///   - open: Opens one connection; it may throw, and the caller that asked then gets the error.
    public init(maximumConnections: Int, open: @escaping @Sendable () throws -> PostgresConnection) {
        precondition(maximumConnections >= 1, "a pool needs room for at least one connection")
        self.maximumConnections = maximumConnections
        self.open = open
    }

    /// How many connections are open now (lent or idle).
    public var openConnections: Int { state.withLock { $0.count } }

    /// Lends a connection to `body` on a Dispatch queue, off Swift's cooperative pool, waiting for one
    /// when all are lent.
    ///
    /// - Parameter body: The work; the connection must not be kept after it returns.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or the ``PostgresError`` of opening a connection.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws
        -> T
    {
        let grant = await withCheckedContinuation { (continuation: CheckedContinuation<Grant, Never>) in
            if let grant = reserve(orWait: .task(continuation)) { continuation.resume(returning: grant) }
        }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.use(grant, body) })
            }
        }
    }

    /// Lends a connection to `body` on the calling thread, waiting for one when all are lent.
    ///
    /// - Parameter body: The work; the connection must not be kept after it returns.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or the ``PostgresError`` of opening a connection.
    @available(*, noasync, message: "it blocks its thread on the server and on the pool; use the async withConnection")
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let waiter = ThreadWaiter()
        let grant =
            reserve(orWait: .thread(waiter))
            ?? {
                waiter.semaphore.wait()
                return waiter.grant.withLock { $0! }
            }()
        return try use(grant, body)
    }

    /// A grant at once when a connection is idle or there is room for one more; else `waiter` joins the
    /// queue and `nil` is returned.
    private func reserve(orWait waiter: Waiter) -> Grant? {
        state.withLock { state -> Grant? in
            if let connection = state.idle.popLast() { return .connection(connection) }
            if state.count < maximumConnections {
                state.count += 1
                return .open
            }
            state.waiters.append(waiter)
            return nil
        }
    }

    private func use<T>(_ grant: Grant, _ body: (PostgresConnection) throws -> T) throws -> T {
        let connection: PostgresConnection
        do {
            // An idle connection may have broken meanwhile (its session ended): its slot opens a new one.
            if case .connection(let idle) = grant, idle.onItsQueue({ idle.isUsable }) {
                connection = idle
            } else {
                connection = try open()
                connection.confine(to: DispatchQueue(label: "replica.postgres.connection"))
            }
        } catch {
            giveBack(nil)
            throw error
        }
        defer { giveBack(connection) }
        return try connection.onItsQueue { try body(connection) }
    }

    /// Returns a connection (or, with `nil`, the slot of one that could not be opened): to the first
    /// waiter, else to the idle ones; a broken connection is dropped and its slot passed on.
    private func giveBack(_ connection: PostgresConnection?) {
        var reusable = connection
        if let connection {
            let usable = connection.onItsQueue {
                if connection.isUsable && connection.isInTransaction { try? connection.executeScript("ROLLBACK") }
                return connection.isUsable && !connection.isInTransaction
            }
            if !usable { reusable = nil }
        }
        let handoff: (Waiter, Grant)? = state.withLock { state in
            if !state.waiters.isEmpty {
                return (state.waiters.removeFirst(), reusable.map(Grant.connection) ?? .open)
            }
            if let reusable {
                state.idle.append(reusable)
            } else {
                state.count -= 1
            }
            return nil
        }
        if let handoff { handoff.0.resume(with: handoff.1) }
    }
}
