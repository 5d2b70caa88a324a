import Foundation
import ReplicaTestSupport
import Testing

@testable import ReplicaSQLite

@Suite struct ConnectionTests {
    let path: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/replica-sqlite-XXXXXX").utf8CString)
        path = String(cString: template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!)! }) + "/db.sqlite"
    }

    /// An in-memory database is a database, and no file named `:memory:` is made in the working folder
    /// (the owner-only file made ahead of SQLite is for files only).
    @Test func anInMemoryDatabaseMakesNoFile() throws {
        let stray = FileManager.default.currentDirectoryPath + "/:memory:"
        let connection = try Connection(path: ":memory:")
        try connection.execute("CREATE TABLE t(x)")
        try connection.execute("INSERT INTO t(x) VALUES (?)", [.text("one")])
        #expect(try connection.cached("SELECT x FROM t").rows { $0.text(0) } == ["one"])
        #expect(!FileManager.default.fileExists(atPath: stray), "a file was made at \(stray)")
    }

    @Test func bindsAndReadsEveryValueKind() throws {
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(a, b, c, d, e)")
        try connection.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.integer(7), .real(2.5), .text("é\u{0}x"), .blob([1, 2]), .null])
        try connection.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)", [.integer(0), .real(0), .text(""), .blob([]), .null])
        let rows = try connection.prepare("SELECT a, b, c, d, e FROM t ORDER BY rowid").rows { row in
            (0..<5).map { row.value(Int32($0)) }
        }
        #expect(rows[0] == [.integer(7), .real(2.5), .text("é\u{0}x"), .blob([1, 2]), .null])
        #expect(rows[1] == [.integer(0), .real(0), .text(""), .blob([]), .null])
    }

    @Test func aFailedTransactionRollsBack() throws {
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(x UNIQUE)")
        #expect(throws: SQLiteError.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                try connection.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(!connection.isInTransaction)
    }

    @Test func anInnerTransactionIsASavepointThatRollsBackAlone() throws {
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(x UNIQUE)")
        try connection.transaction {
            try connection.execute("INSERT INTO t VALUES (1)")
            do {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (2)")
                    try connection.execute("INSERT INTO t VALUES (1)")
                }
                Issue.record("the inner transaction should have failed")
            } catch {
                // The outer code goes on: the inner writes must not come with it.
            }
            try connection.transaction { try connection.execute("INSERT INTO t VALUES (3)") }
        }
        #expect(try connection.prepare("SELECT x FROM t ORDER BY x").rows { $0.int(0) } == [1, 3])
        #expect(!connection.isInTransaction)
    }

    @Test func bindingFewerOrMoreArgumentsThanTheStatementTakesIsAnError() throws {
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(a, b)")
        for arguments: [SQLValue] in [[1], [1, 2, 3], []] {
            #expect(
                performing: { try connection.execute("INSERT INTO t VALUES (?, ?)", arguments) },
                throws: { error in
                    (error as? SQLiteError)?.message
                        == "the statement takes 2 arguments; \(arguments.count) \(arguments.count == 1 ? "was" : "were") given"
                })
        }
        try connection.execute("INSERT INTO t VALUES (?1, ?1)", [7])
        #expect(
            try connection.scalarInt("SELECT count(*) FROM t") == 1,
            "a repeated ?1 is one argument; nothing else was written")
    }

    @Test func aConnectionUsedFromTwoThreadsAtOnceIsCaught() async throws {
        let exit = try await #require(processExitsWith: .signal(SIGILL), observing: [\.standardErrorContent]) {
            let connection = try Connection(path: NSTemporaryDirectory() + "/replica-two-threads-\(getpid()).sqlite")
            // One thread stays inside SQLite for good; the other's next call overlaps it and must be stopped.
            Thread.detachNewThread {
                _ = try? connection.scalar(
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
            }
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline { _ = try connection.scalar("SELECT 1") }
        }
        #expect(
            String(decoding: exit.standardErrorContent, as: UTF8.self).contains("was used from two threads at once"))
    }

    /// A connection a ``Database`` runs on its queue, kept past its closure and used from another thread, is
    /// caught even when no other thread is inside SQLite at that moment: in release builds too.
    @Test func aDatabaseConnectionUsedOffItsQueueIsCaught() async throws {
        let exit = try await #require(processExitsWith: .signal(SIGILL), observing: [\.standardErrorContent]) {
            let migrator = Migrator(
                kind: "test", applicationID: 0x5445_5354,
                migrations: [Migration(version: 1, name: "t", sql: "CREATE TABLE t(x)")])
            let database = try Database(
                path: NSTemporaryDirectory() + "/replica-off-queue-\(getpid()).sqlite", migrator: migrator)
            let escaped = try database.readNow { $0 }
            _ = try escaped.scalar("SELECT count(*) FROM t")
        }
        #expect(String(decoding: exit.standardErrorContent, as: UTF8.self).contains("was used off its queue"))
    }

    @Test func errorsMatchTheirResultCodeAndNeverCarryArguments() throws {
        let connection = try Connection(path: path)
        try connection.execute("CREATE TABLE t(x UNIQUE)")
        try connection.execute("INSERT INTO t VALUES (?)", [.text("secret-value")])
        do {
            try connection.execute("INSERT INTO t VALUES (?)", [.text("secret-value")])
            Issue.record("a duplicate insert succeeded")
        } catch let error as SQLiteError {
            #expect(ResultCode.constraint ~= error.code)
            #expect(!error.description.contains("secret-value"))
        }
    }

    /// Opening a second connection must not drop the first one's locks. POSIX locks belong to the
    /// process, and closing any descriptor of the file releases all of them, so a second connection that
    /// opened and closed the file (to create it with owner-only permissions) left the first one unlocked
    /// while SQLite believed it held its lock: another process could then check the write-ahead log into
    /// the file and delete it under a reader. Another process tests the lock here, as it would.
    @Test func openingASecondConnectionKeepsTheFirstOnesLock() throws {
        let first = try Connection(path: path)
        try first.execute("CREATE TABLE t(x)")
        #expect(try isLockedFromAnotherProcess(), "a connection in write-ahead-log mode holds a shared lock while open")
        let second = try Connection(path: path)
        #expect(try second.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(try isLockedFromAnotherProcess(), "the first connection's lock survived the second's opening")
    }

    /// Whether another process is refused an exclusive lock on the bytes SQLite's shared locks cover
    /// (`SHARED_FIRST`, 510 bytes from 2^30 + 2, in `os_unix.c`).
    ///
    /// The probe is started by posix_spawn (``ReplicaProcess``), not Foundation's `Process`, whose `run()`
    /// crashed in CI copying the environment while other tests started processes.
    private func isLockedFromAnotherProcess() throws -> Bool {
        let probe = try ReplicaProcess.run(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                """
                import fcntl, os, sys
                fd = os.open(sys.argv[1], os.O_RDWR)
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002, 0)
                except OSError:
                    sys.exit(1)
                sys.exit(0)
                """, path,
            ], timeout: 60)
        #expect(!probe.wasSignaled && [0, 1].contains(probe.status), "\(probe.standardError)")
        return probe.status == 1
    }

    @Test func aSecondWriterWaitsForTheFirstInsteadOfFailing() throws {
        let first = try Connection(path: path)
        try first.execute("CREATE TABLE t(x)")
        let second = try Connection(path: path)
        try first.execute("BEGIN IMMEDIATE")
        try first.execute("INSERT INTO t VALUES (1)")
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        DispatchQueue.global().async {
            outcome.set(Result { try second.transaction { try second.execute("INSERT INTO t VALUES (2)") } })
            done.signal()
        }
        try first.execute("COMMIT")
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(throws: Never.self) { try outcome.get()?.get() }
        #expect(try first.scalarInt("SELECT count(*) FROM t") == 2)
    }

    final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<Void, any Error>?
        func set(_ result: Result<Void, any Error>) { lock.withLock { self.result = result } }
        func get() -> Result<Void, any Error>? { lock.withLock { result } }
    }
}
