import Foundation
import ReplicaPostgres
import ReplicaTestSupport
import Synchronization
import Testing

@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled,
        "PostgreSQL is not installed here or could not start (the reason is on standard error); CI=true runs these tests regardless"
    ))
struct PostgresPoolTests {
    let database: PostgresTestDatabase
    let admin: PostgresConnection

    init() throws {
        database = try PostgresTestServer.makeDatabase()
        admin = try PostgresConnection(url: database.adminURL)
    }

    /// Ends the server process behind `pid` and waits until it is gone.
    func terminate(_ pid: Int32) async throws {
        #expect(try await admin.run("SELECT pg_terminate_backend($1)", [.int(Int64(pid))]).bool(0, 0) == true)
        let gone = try await eventually {
            try await admin.run("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.int(Int64(pid))]).int(0, 0)
                == 0
        }
        #expect(gone)
    }

    @Test func aConnectionEndedWhileIdleIsDroppedNotLent() async throws {
        let pool = PostgresPool(url: database.url, maximumConnections: 1)
        let first = try await pool.withConnection { $0.backendProcessID }
        try await terminate(first)
        let second = try await pool.withConnection { try $0.execute("SELECT pg_backend_pid()").int(0, 0) }
        #expect(second != nil && second != Int64(first))
        #expect(pool.openConnections == 1)
    }

    @Test func aConnectionThatBrokeInUseIsDropped() async throws {
        let pool = PostgresPool(url: database.url, maximumConnections: 1)
        let admin = admin
        let error = await #expect(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                // The session ends while the caller holds the connection; its next statement finds out.
                let pid = Int64(connection.backendProcessID)
                try admin.execute("SELECT pg_terminate_backend($1)", [.int(pid)])
                let deadline = Date().addingTimeInterval(60)
                while try admin.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.int(pid)]).int(0, 0)
                    != 0, Date() < deadline
                {
                    usleep(5_000)
                }
                try connection.execute("SELECT 1")
            }
        }
        #expect(error?.code == .connectionLost)
        #expect(error?.message.contains("was lost") == true)
        #expect(pool.openConnections == 0, "the broken connection was dropped")
        #expect(try await pool.withConnection { try $0.execute("SELECT 1").int(0, 0) } == 1)
    }

    @Test func callersBeyondTheMaximumWaitTheirTurn() async throws {
        let pool = PostgresPool(url: database.url, maximumConnections: 2)
        let pids = try await withThrowingTaskGroup(of: Int32.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await pool.withConnection {
                        try $0.execute("SELECT pg_sleep(0.01)")
                        return $0.backendProcessID
                    }
                }
            }
            return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
        }
        #expect(pids.count <= 2)
        #expect(pool.openConnections <= 2)
    }

    @Test func aConnectionGivenBackInATransactionIsRolledBack() async throws {
        let pool = PostgresPool(url: database.url, maximumConnections: 1)
        try await pool.withConnection { connection in
            try connection.execute("CREATE TABLE t(x int)")
            try connection.executeScript("BEGIN")
            try connection.execute("INSERT INTO t VALUES (1)")
        }
        let count = try await pool.withConnection { connection in
            (connection.isInTransaction, try connection.execute("SELECT count(*) FROM t").int(0, 0))
        }
        #expect(count.0 == false && count.1 == 0)
    }

    @Test func theSynchronousFormLendsToo() throws {
        let pool = PostgresPool(url: database.url, maximumConnections: 2)
        let values = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { number in
            let value = try? pool.withConnection {
                try $0.execute("SELECT $1::int + 1", [.int(Int64(number))]).int(0, 0)
            }
            values.withLock { $0.append(value ?? -1) }
        }
        #expect(values.withLock { $0.sorted() } == [1, 2, 3, 4, 5, 6])
        #expect(pool.openConnections <= 2)
    }

    /// A connection the pool lent, kept past its body and used on another thread, is caught even when
    /// nothing else is using it at that moment: in release builds too, as SQLite's connections are.
    @Test func aLentConnectionUsedOffItsQueueIsCaught() async throws {
        let url = database.url
        let exit = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            [url = url as String] in
            let pool = PostgresPool(url: url, maximumConnections: 1)
            let escaped = try await pool.withConnection { $0 }
            try selectOne(on: escaped)
        }
        #expect(String(decoding: exit.standardErrorContent, as: UTF8.self).contains("was used off its queue"))
    }
}

/// A blocking call outside any async context, where the compiler allows it.
private func selectOne(on connection: PostgresConnection) throws {
    try connection.execute("SELECT 1")
}
