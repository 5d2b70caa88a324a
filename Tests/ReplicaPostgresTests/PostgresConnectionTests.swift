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
struct PostgresConnectionTests {
    let database: PostgresTestDatabase
    let connection: PostgresConnection

    init() throws {
        database = try PostgresTestServer.makeDatabase()
        connection = try PostgresConnection(url: database.url)
    }

    static let texts = [
        "", "plain", "été à Zürich — 日本語 🙂", "'quotes' and \"double\"", "back\\slash \\N \\.", "tab\tnew\nline\rcr",
        String(repeating: "long ", count: 20_000),
    ]
    static let doubles: [Double] = [
        0, -0.0, 0.1, 1.0 / 3, -1.5e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, .infinity, -.infinity,
    ]

    @Test func everyKindOfValueRoundTrips() throws {
        try connection.execute("CREATE TABLE t(n serial, s text, b bytea, i bigint, d double precision, f boolean)")
        let allBytes = (0...255).map { UInt8($0) }
        var rows: [[PostgresValue]] = Self.texts.map { [.text($0), .bytes([]), .int(0), .double(0), .bool(false)] }
        rows.append([.null, .null, .null, .null, .null])
        rows.append([.text("x"), .bytes(allBytes), .int(.max), .double(.nan), .bool(true)])
        rows.append([.text("y"), .bytes(allBytes.reversed()), .int(.min), .double(.infinity), .bool(false)])
        rows += Self.doubles.map { [.text("d"), .bytes([0]), .int(-1), .double($0), .null] }
        for row in rows {
            try connection.execute("INSERT INTO t(s, b, i, d, f) VALUES ($1, $2, $3, $4, $5)", row)
        }
        let result = try connection.execute("SELECT s, b, i, d, f FROM t ORDER BY n")
        #expect(result.rowCount == rows.count)
        for (index, row) in rows.enumerated() {
            let read = (0..<5).map { result.value(index, $0) }
            if case .double(let sent) = row[3], sent.isNaN {
                #expect(result.double(index, 3)?.isNaN == true)
                #expect(Array(read[0...2]) + [read[4]] == Array(row[0...2]) + [row[4]])
            } else {
                #expect(read == row, "row \(index)")
            }
        }
        // -0.0 == 0.0 for Equatable: its sign must survive too.
        let negativeZero = try connection.execute("SELECT $1::float8", [.double(-0.0)]).double(0, 0)
        #expect(negativeZero?.sign == .minus)
    }

    @Test func typedAccessorsReadTheirKindsAndNil() throws {
        let result = try connection.execute(
            "SELECT $1::bigint, $2::float8, $3::bool, $4::bytea, $5::text, NULL::text, 'abc', 12.5::numeric",
            [42, 2.5, true, .bytes([1, 2]), "é"])
        #expect(result.columnCount == 8)
        #expect(result.int(0, 0) == 42)
        #expect(result.double(0, 1) == 2.5)
        #expect(result.bool(0, 2) == true)
        #expect(result.bytes(0, 3) == [1, 2])
        #expect(result.string(0, 4) == "é")
        #expect(result.isNull(0, 5) && result.string(0, 5) == nil && result.int(0, 5) == nil)
        #expect(result.int(0, 6) == nil, "text that is not a number reads as nil, not 0")
        #expect(result.value(0, 7) == .text("12.5"), "numeric keeps its exact digits as text")
        #expect(result.double(0, 7) == 12.5)
        #expect(
            try connection.execute("SELECT $1::bytea", [.bytes([])]).bytes(0, 0) == [], "an empty bytea is not NULL")
    }

    @Test func parametersAreBoundNeverSpliced() throws {
        try connection.execute("CREATE TABLE t(s text)")
        let hostile = ["'); DROP TABLE t; --", "$1", "\\'; SELECT 1; --", "\"t\""]
        for text in hostile { try connection.execute("INSERT INTO t VALUES ($1)", [.text(text)]) }
        let stored = try connection.execute("SELECT s FROM t ORDER BY s").rows.map { $0[0] }
        #expect(stored == hostile.sorted().map(PostgresValue.text))
        #expect(try connection.execute("SELECT count(*) FROM t WHERE s = $1", [.text(hostile[0])]).int(0, 0) == 1)
    }

    /// PostgreSQL's text cannot hold U+0000; it travels escaped, and every string comes back as it went.
    @Test func textWithNULAndTheEscapeRoundTrips() throws {
        try connection.execute("CREATE TABLE t(n int, s text)")
        let texts = [
            "a\u{0}b", "\u{0}", "\u{FFFF}", "\u{FFFF}0", "x\u{FFFF}\u{FFFF}1\u{0}\u{0}", "é\u{EFBF}\u{0}", "plain", "",
        ]
        for (number, text) in texts.enumerated() {
            try connection.execute("INSERT INTO t VALUES ($1, $2)", [.int(Int64(number)), .text(text)])
        }
        try connection.copy(
            into: "t", columns: ["n", "s"], rows: texts.enumerated().map { [.int(Int64($0 + 100)), .text($1)] })
        let read = try connection.execute("SELECT n, s FROM t ORDER BY n")
        #expect((0..<read.rowCount).map { read.string($0, 1) } == texts + texts)
        // Equality holds on the server: the same string is escaped the same way.
        #expect(try connection.execute("SELECT count(*) FROM t WHERE s = $1", ["a\u{0}b"]).int(0, 0) == 2)
        // What a server-side substr leaves of an escape cut in two is dropped, not shown.
        #expect(try connection.execute("SELECT substr($1, 1, 2)", ["a\u{0}"]).string(0, 0) == "a")
    }

    @Test func aStatementIsPreparedOnceAndReused() throws {
        let sql = "SELECT $1::int + 1"
        for number in 1...3 {
            #expect(try connection.execute(sql, [.int(Int64(number))]).int(0, 0) == Int64(number) + 1)
        }
        let prepared = try connection.execute(
            "SELECT name FROM pg_prepared_statements WHERE statement = $1", [.text(sql)])
        #expect(prepared.rowCount == 1)
        #expect(prepared.string(0, 0)?.hasPrefix("replica_") == true)
        #expect(
            try connection.execute("SELECT count(*) FROM pg_prepared_statements").int(0, 0) == 3,
            "the statement, the query above and this one, each prepared once")
    }

    /// A varying statement (one account's text among many) runs unprepared the first time, is prepared
    /// from its second run and reused, and the connection keeps only the last few prepared so.
    @Test func aVaryingStatementIsPreparedFromItsSecondRunAndTheOldestGo() throws {
        var options = PostgresConnection.Options()
        options.varyingStatementLimit = 8
        let connection = try PostgresConnection(url: database.url, options: options)
        func prepared(_ sql: String) throws -> Int64? {
            try connection.execute("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", [.text(sql)])
                .int(0, 0)
        }
        func text(_ number: Int) -> String { "SELECT $1::int + \(number)" }
        #expect(try connection.executeVarying(text(0), [.int(1)]).int(0, 0) == 1)
        #expect(try prepared(text(0)) == 0, "not prepared at its first run")
        for _ in 1...3 { #expect(try connection.executeVarying(text(0), [.int(2)]).int(0, 0) == 2) }
        #expect(try prepared(text(0)) == 1, "prepared once from its second run, then reused")
        for number in 1...8 {
            for _ in 1...2 {
                #expect(try connection.executeVarying(text(number), [.int(1)]).int(0, 0) == Int64(1 + number))
            }
        }
        #expect(try prepared(text(0)) == 0, "the oldest went to make room")
        #expect(try prepared(text(8)) == 1)
        let kept =
            try connection.execute(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT $1::int + %'"
            ).int(0, 0) ?? 0
        #expect(kept <= 8 && kept >= 6)
        #expect(try connection.executeVarying(text(0), [.int(5)]).int(0, 0) == 5, "a text gone runs again")
    }

    @Test func aStatementPreparedBeforeASchemaChangeIsPreparedAgain() throws {
        try connection.execute("CREATE TABLE t(a int)")
        try connection.execute("INSERT INTO t VALUES (1)")
        #expect(try connection.execute("SELECT * FROM t").columnCount == 1)
        try connection.execute("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
        let result = try connection.execute("SELECT * FROM t")
        #expect(result.columnCount == 2 && result.string(0, 1) == "x")
        // Inside a transaction the failure cannot be mended; the next run prepares it anew.
        try connection.execute("ALTER TABLE t ADD COLUMN c int DEFAULT 3")
        #expect(
            postgresError { try connection.transaction(.readCommitted) { try connection.execute("SELECT * FROM t") } }?
                .sqlState == "0A000")
        #expect(try connection.transaction(.readCommitted) { try connection.execute("SELECT * FROM t").int(0, 2) } == 3)
    }

    @Test func aFullStatementCacheStartsAgain() throws {
        var options = PostgresConnection.Options()
        options.preparedStatementLimit = 3
        let small = try PostgresConnection(url: database.url, options: options)
        for number in 1...7 { try small.execute("SELECT \(number)") }
        #expect(try small.execute("SELECT count(*) FROM pg_prepared_statements").int(0, 0)! <= 3)
    }

    @Test func copyWritesEveryValueAsGiven() throws {
        try connection.execute("CREATE TABLE t(n int, s text, b bytea, d float8, f bool)")
        var rows: [[PostgresValue]] = Self.texts.enumerated().map {
            [.int(Int64($0.offset)), .text($0.element), .bytes([9, 10, 13, 92]), 1.5, true]
        }
        rows.append([.int(100), .null, .null, .null, .null])
        rows.append([.int(101), "\\N", .bytes((0...255).map { UInt8($0) }), .double(-.infinity), false])
        for number in 0..<3000 {
            let row: [PostgresValue] = [
                .int(Int64(1000 + number)), .text("row\t\(number)\n"), .bytes([UInt8(number % 256)]),
                .double(Double(number) / 7), .bool(number % 2 == 0),
            ]
            rows.append(row)
        }
        let written = try connection.copy(into: "t", columns: ["n", "s", "b", "d", "f"], rows: rows)
        #expect(written == rows.count)
        let read = try connection.execute("SELECT n, s, b, d, f FROM t ORDER BY n").rows
        #expect(read == rows)
    }

    @Test func aBadCopyRowWritesNothingAndTheConnectionGoesOn() throws {
        try connection.execute("CREATE TABLE t(n int, s text)")
        let rows: [[PostgresValue]] =
            (0..<20_000).map { [.int(Int64($0)), "filler text to pass the first buffer"] } + [[1]]
        #expect(
            postgresError { try connection.copy(into: "t", columns: ["n", "s"], rows: rows) }?.code == .invalidValue)
        #expect(try connection.execute("SELECT count(*) FROM t").int(0, 0) == 0)
        // A value the server refuses (not an integer) fails the whole COPY, in words without the value.
        let error = try #require(throws: PostgresError.self) {
            try connection.copy(into: "t", columns: ["n", "s"], rows: [[1, "a"], ["secret-42", "b"]])
        }
        #expect(!error.description.contains("secret-42"))
        #expect(try connection.execute("SELECT count(*) FROM t").int(0, 0) == 0)
    }

    @Test func aFailedTransactionRollsBackAndASavepointRollsBackAlone() throws {
        try connection.execute("CREATE TABLE t(x int UNIQUE)")
        #expect(
            postgresError {
                try connection.transaction {
                    try connection.execute("INSERT INTO t VALUES (1)")
                    try connection.execute("INSERT INTO t VALUES (1)")
                }
            }?.code == .uniqueViolation)
        #expect(!connection.isInTransaction)
        try connection.transaction {
            try connection.execute("INSERT INTO t VALUES (1)")
            _ = try? connection.transaction {
                try connection.execute("INSERT INTO t VALUES (2)")
                try connection.execute("INSERT INTO t VALUES (1)")
            }
            try connection.execute("INSERT INTO t VALUES (3)")
        }
        #expect(try connection.execute("SELECT x FROM t ORDER BY x").rows == [[1], [3]])
    }

    /// A transaction begun read-only refuses writes (in its `BEGIN`: no statement of its own), reads as any
    /// other, and leaves no write-ahead log position for a standby to reach; a writing one does.
    @Test func aReadOnlyTransactionRefusesWritesAndLeavesNoPosition() throws {
        let positions = Mutex<[WALPosition]>([])
        var options = PostgresConnection.Options()
        options.committed = { position in positions.withLock { $0.append(position) } }
        let noted = try PostgresConnection(url: database.url, options: options)
        try noted.execute("CREATE TABLE t(x int)")
        try noted.transaction { try noted.execute("INSERT INTO t VALUES (1)") }
        #expect(positions.withLock { $0.count } == 1)
        #expect(
            postgresError {
                try noted.transaction(readOnly: true) { try noted.execute("INSERT INTO t VALUES (2)") }
            }?.code == .readOnly)
        #expect(
            try noted.transaction(.repeatableRead, readOnly: true) {
                try noted.execute("SELECT count(*) FROM t").int(0, 0)
            } == 1)
        #expect(positions.withLock { $0.count } == 1, "a read-only transaction noted a position")
    }

    @Test func aTransactionWhoseErrorWasSwallowedIsReportedNotCommitted() throws {
        try connection.execute("CREATE TABLE t(x int)")
        #expect(throws: PostgresError.self) {
            try connection.transaction {
                try connection.execute("INSERT INTO t VALUES (1)")
                _ = try? connection.execute("SELECT * FROM missing")
            }
        }
        #expect(try connection.execute("SELECT count(*) FROM t").int(0, 0) == 0)
    }

    /// A real serialization failure: the first attempt reads a row, another connection changes it and
    /// commits, then the attempt writes it. The retry sees the new row and succeeds.
    @Test func aSerializationFailureIsRetried() throws {
        let other = try PostgresConnection(url: database.url)
        try connection.execute("CREATE TABLE t(id int PRIMARY KEY, n int)")
        try connection.execute("INSERT INTO t VALUES (1, 0)")
        var attempts = 0
        try connection.transaction(.serializable) {
            attempts += 1
            _ = try connection.execute("SELECT n FROM t WHERE id = 1")
            if attempts == 1 { try other.execute("UPDATE t SET n = n + 10 WHERE id = 1") }
            try connection.execute("UPDATE t SET n = n + 1 WHERE id = 1")
        }
        #expect(attempts == 2)
        #expect(try connection.execute("SELECT n FROM t").int(0, 0) == 11)
    }

    /// A real deadlock: each transaction holds the row the other one wants next. PostgreSQL rolls one
    /// of them back (after deadlock_timeout, 20 ms here); it runs again and both commit.
    @Test func aDeadlockIsRetried() throws {
        try connection.execute("CREATE TABLE t(id int PRIMARY KEY, n int)")
        try connection.execute("INSERT INTO t VALUES (1, 0), (2, 0)")
        try PostgresConnection(url: database.adminURL).executeScript(
            "ALTER DATABASE \(database.name) SET deadlock_timeout = '20ms'")
        let first = try PostgresConnection(url: database.url)
        let second = try PostgresConnection(url: database.url)
        let firstHolds = DispatchSemaphore(value: 0)
        let secondHolds = DispatchSemaphore(value: 0)
        let secondDone = DispatchSemaphore(value: 0)
        let secondAttempts = Mutex(0)
        let secondFailure = Mutex<(any Error)?>(nil)
        Thread {
            do {
                try second.transaction {
                    let attempt = secondAttempts.withLock {
                        $0 += 1
                        return $0
                    }
                    try second.execute("UPDATE t SET n = n + 1 WHERE id = 2")
                    if attempt == 1 {
                        secondHolds.signal()
                        _ = firstHolds.wait(timeout: .now() + 60)
                    }
                    try second.execute("UPDATE t SET n = n + 1 WHERE id = 1")
                }
            } catch {
                secondFailure.withLock { $0 = error }
            }
            secondDone.signal()
        }.start()
        var firstAttempts = 0
        try first.transaction {
            firstAttempts += 1
            try first.execute("UPDATE t SET n = n + 1 WHERE id = 1")
            if firstAttempts == 1 {
                firstHolds.signal()
                _ = secondHolds.wait(timeout: .now() + 60)
            }
            try first.execute("UPDATE t SET n = n + 1 WHERE id = 2")
        }
        #expect(secondDone.wait(timeout: .now() + 60) == .success)
        #expect(secondFailure.withLock { $0 } == nil)
        #expect(firstAttempts + secondAttempts.withLock { $0 } == 3, "one of the two ran again")
        #expect(try connection.execute("SELECT n FROM t ORDER BY id").rows == [[2], [2]])
    }

    @Test func aTransactionThatAlwaysConflictsGivesUpAfterItsAttempts() throws {
        var options = PostgresConnection.Options()
        options.transactionRetry = TransactionRetry(attempts: 3, firstDelay: .milliseconds(1))
        let retrying = try PostgresConnection(url: database.url, options: options)
        try connection.execute("CREATE TABLE t(id int PRIMARY KEY, n int)")
        try connection.execute("INSERT INTO t VALUES (1, 0)")
        var attempts = 0
        let error = try #require(throws: PostgresError.self) {
            try retrying.transaction(.repeatableRead) {
                attempts += 1
                _ = try retrying.execute("SELECT n FROM t WHERE id = 1")
                try connection.execute("UPDATE t SET n = n + 10 WHERE id = 1")
                try retrying.execute("UPDATE t SET n = n + 1 WHERE id = 1")
            }
        }
        #expect(error.code == .serializationFailure && error.sqlState == "40001")
        #expect(attempts == 3)
        #expect(error.message.contains("ran 3 times"))
        #expect(try connection.execute("SELECT n FROM t").int(0, 0) == 30)
    }

    @Test func applicationNameAndStatementTimeoutAreSet() throws {
        var options = PostgresConnection.Options()
        options.applicationName = "replica-test"
        options.statementTimeout = .milliseconds(1500)
        let configured = try PostgresConnection(url: database.url, options: options)
        #expect(try configured.execute("SHOW application_name").string(0, 0) == "replica-test")
        #expect(try configured.execute("SHOW statement_timeout").string(0, 0) == "1500ms")
        #expect(try connection.execute("SHOW application_name").string(0, 0) == "replica")
    }
}

/// `LISTEN` and waiting for notifications.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
struct PostgresNotificationTests {
    @Test func aNotificationEndsTheWaitAndNamesItsChannel() throws {
        let database = try PostgresTestServer.makeDatabase()
        let listener = try PostgresConnection(url: database.url)
        try listener.executeScript("LISTEN replica_changes; LISTEN other")
        #expect(try listener.waitForNotifications(timeout: .zero).isEmpty)
        let sender = try PostgresConnection(url: database.url)
        try sender.executeScript("NOTIFY replica_changes, 'notes'")
        #expect(try listener.waitForNotifications(timeout: .seconds(600)) == ["replica_changes"])
        // Sent inside a transaction, it arrives at the commit, not before.
        try sender.executeScript("BEGIN; NOTIFY other")
        #expect(try listener.waitForNotifications(timeout: .zero).isEmpty)
        try sender.executeScript("COMMIT")
        #expect(try listener.waitForNotifications(timeout: .seconds(600)) == ["other"])
    }
}
