import CPostgres
import Foundation

extension PostgresConnection {
    /// The isolation level a transaction runs at
    /// ([PostgreSQL's transaction isolation](https://www.postgresql.org/docs/15/transaction-iso.html)).
    public enum IsolationLevel: String, Sendable {
        /// Each statement sees what was committed before it began (PostgreSQL's default).
        case readCommitted = "READ COMMITTED"
        /// Every statement sees one snapshot, taken at the transaction's first statement.
        case repeatableRead = "REPEATABLE READ"
        /// As if the transactions ran one after another; a conflict fails one with a serialization failure.
        case serializable = "SERIALIZABLE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// When PostgreSQL rolls the transaction back for a serialization failure (`40001`) or a deadlock
    /// (`40P01`), in `body` or at `COMMIT`, the whole transaction runs again after a back-off, as
    /// ``Options/transactionRetry`` says; once the attempts are used up, the last failure is thrown. So
    /// `body` may run more than once: it must do nothing but its statements (or things it can repeat).
    ///
    /// A call inside a transaction is a savepoint, retried with its outer transaction, not alone: when
    /// its body throws, its own writes are rolled back even if the outer code catches the error and
    /// goes on to commit.
    ///
    /// For example:
    /// ```swift
    /// let postgres = try PostgresConnection(url: "postgresql:///replica?host=/tmp/pg")
    /// let total = try postgres.transaction(.serializable) {
    ///     try postgres.execute("UPDATE counters SET n = n + 1 WHERE name = $1", ["items"])
    ///     return try postgres.execute("SELECT sum(n) FROM counters").int(0, 0) ?? 0
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - isolation: The isolation level of a new transaction (not of a savepoint).
    ///   - readOnly: Begin a new transaction `READ ONLY` (in the `BEGIN` itself, so it costs no
    ///     round trip of its own): PostgreSQL refuses its writes. A savepoint keeps its transaction's mode.
    ///   - body: The transaction's work.
    /// - Returns: What `body` returned in the attempt that committed.
    /// - Throws: What `body` threw, or ``PostgresError`` for `BEGIN`/`COMMIT`; a transaction whose
    ///   statement failed without `body` throwing is rolled back and reported.
    @available(*, noasync, message: "it blocks its thread on the server; call it off the cooperative pool")
    public func transaction<T>(
        _ isolation: IsolationLevel = .readCommitted, readOnly: Bool = false, _ body: () throws -> T
    ) throws -> T {
        if isInTransaction { return try savepoint(body) }
        var attempt = 1
        while true {
            do {
                return try transactionOnce(isolation, readOnly: readOnly, body)
            } catch var error as PostgresError where error.isTransient {
                guard
                    let delay = options.transactionRetry.delay(
                        afterFailedAttempt: attempt, jitter: Double.random(in: 0...1))
                else {
                    if attempt > 1 { error.message += " (the transaction ran \(attempt) times, and failed each time)" }
                    throw error
                }
                Thread.sleep(forTimeInterval: Double(delay.milliseconds) / 1000)
                attempt += 1
            }
        }
    }

    private func transactionOnce<T>(_ isolation: IsolationLevel, readOnly: Bool, _ body: () throws -> T) throws -> T {
        try executeScript("BEGIN ISOLATION LEVEL \(isolation.rawValue)" + (readOnly ? " READ ONLY" : ""))
        do {
            let value = try body()
            // COMMIT of a failed transaction rolls it back without an error: say so instead.
            if PQtransactionStatus(handle) == PQTRANS_INERROR {
                throw PostgresError(
                    .other,
                    "a statement of the transaction failed and the error was not passed on; "
                        + "the transaction was rolled back")
            }
            // A read-only transaction wrote nothing: no position of its own for a standby to reach.
            if let committed = options.committed, !readOnly {
                // One round trip: a failed COMMIT stops the string there, and its error is thrown.
                let position = try exclusively {
                    try checked(
                        run { PQsendQuery(handle, "COMMIT; SELECT pg_current_wal_insert_lsn()::text") }, sql: "COMMIT"
                    ).string(0, 0)
                }
                if let position = position.flatMap(WALPosition.init(text:)) { committed(position) }
            } else {
                try executeScript("COMMIT")
            }
            return value
        } catch {
            if isInTransaction { try? executeScript("ROLLBACK") }
            throw error
        }
    }

    private func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "replica_\(savepointDepth)"
        try executeScript("SAVEPOINT \(name)")
        do {
            let value = try body()
            try executeScript("RELEASE SAVEPOINT \(name)")
            return value
        } catch {
            if isInTransaction {
                try? executeScript("ROLLBACK TO SAVEPOINT \(name)")
                try? executeScript("RELEASE SAVEPOINT \(name)")
            }
            throw error
        }
    }
}
