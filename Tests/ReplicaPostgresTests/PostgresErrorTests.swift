import Foundation
import ReplicaPostgres
import ReplicaTestSupport
import Testing

/// Whether this process may mount a tmpfs (root, with the capability to mount): tried once.
let canMountTmpfs: Bool = {
    guard getuid() == 0, let folder = try? TemporaryDirectory("replica-pgdisk") else { return false }
    let mounted = try? ReplicaProcess.run(
        executable: URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder.path])
    _ = try? ReplicaProcess.run(executable: URL(fileURLWithPath: "/bin/umount"), [folder.path])
    return mounted?.status == 0
}()

/// The server's failures in words a person can act on, never with row data or a password in them.
@Suite(
    .enabled(
        if: PostgresTestServer.isEnabled,
        "PostgreSQL is not installed here or could not start (the reason is on standard error); CI=true runs these tests regardless"
    ))
struct PostgresErrorTests {
    let database: PostgresTestDatabase

    init() throws {
        database = try PostgresTestServer.makeDatabase()
    }

    @Test func aSocketFolderWithoutAServerIsARefusedConnection() throws {
        let empty = try TemporaryDirectory("replica-nopg")
        let error = try #require(
            postgresError {
                try PostgresConnection(url: "postgresql://replica_app:hunter2@/replica?host=\(empty.path)&port=5432")
            })
        #expect(error.code == .connectionRefused)
        #expect(error.message.contains("refused the connection: is it running?"))
        #expect(error.message.contains(empty.path) && error.message.contains("scripts/postgres.sh start"))
        #expect(!error.description.contains("hunter2"))
    }

    @Test func aWrongPasswordIsAFailedSignIn() throws {
        let error = try #require(
            postgresError { try PostgresConnection(url: database.url(changing: ["password": "not-the-password"])) })
        #expect(error.code == .authenticationFailed)
        #expect(error.sqlState == "28P01")
        #expect(error.message.contains("refused the sign-in of the role replica_app: check the user name and password"))
        #expect(!error.description.contains("not-the-password"))
    }

    @Test func aMissingDatabaseIsNamed() throws {
        let password = try #require(database.parameters["password"])
        let error = try #require(
            postgresError { try PostgresConnection(url: database.url(changing: ["dbname": "no_such_database"])) })
        #expect(error.code == .databaseMissing)
        #expect(error.sqlState == "3D000")
        #expect(
            error.message.hasPrefix(
                "the database no_such_database does not exist on the PostgreSQL server on the socket in "))
        #expect(!error.description.contains(password), "the password never appears")
    }

    /// A session the server ends as it starts, for a reason of its own, says the server's reason: here a
    /// database that accepts no connections (on a full disk, it is the relation cache file the server
    /// could not write).
    @Test func aSessionRefusedAsItStartsSaysTheServersReason() throws {
        // From another database: the server refuses to close the one a session is in.
        let admin = try PostgresConnection(
            url: database.adminURL.replacingOccurrences(of: "dbname='\(database.name)'", with: "dbname='postgres'"))
        try admin.executeScript("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS false")
        defer { try? admin.executeScript("ALTER DATABASE \(database.name) ALLOW_CONNECTIONS true") }
        let password = try #require(database.parameters["password"])
        let error = try #require(postgresError { try PostgresConnection(url: database.url) })
        #expect(error.sqlState == "55000")
        #expect(error.message.contains("could not connect to the PostgreSQL server on the socket in "))
        #expect(
            error.message.contains(
                "as the role replica_app; the server said: FATAL: 55000: database \"\(database.name)\" is not currently accepting connections"
            ),
            "\(error.message)")
        #expect(!error.description.contains(password))
    }

    @Test func anUnreadableURLIsNotRepeated() throws {
        let error = try #require(
            postgresError { try PostgresConnection(url: "postgresql://replica_app:s3cr%zzet@/replica") })
        #expect(error.code == .invalidURL)
        #expect(!error.description.contains("s3cr"))
    }

    @Test func aWriteToAReadOnlyDatabaseSaysWhere() throws {
        let connection = try PostgresConnection(url: database.url)
        try connection.execute("CREATE TABLE t(x text)")
        try connection.executeScript("SET default_transaction_read_only = on")
        let error = try #require(postgresError { try connection.execute("INSERT INTO t VALUES ($1)", ["secret row"]) })
        #expect(error.code == .readOnly)
        #expect(error.sqlState == "25006")
        #expect(
            error.message.contains(
                "accepts no writes: it is a read-only standby, or default_transaction_read_only is on"))
        #expect(!error.description.contains("secret row"))
    }

    @Test func aStatementPastItsTimeoutIsStopped() throws {
        var options = PostgresConnection.Options()
        options.statementTimeout = .milliseconds(10)
        let connection = try PostgresConnection(url: database.url, options: options)
        let error = try #require(postgresError { try connection.execute("SELECT pg_sleep(1)") })
        #expect(error.code == .statementTimeout)
        #expect(error.sqlState == "57014")
        #expect(error.message.contains("statement_timeout"))
        #expect(try connection.execute("SELECT 1").int(0, 0) == 1, "the connection goes on")
    }

    @Test func aUniqueViolationNamesTheConstraintNotTheValue() throws {
        let connection = try PostgresConnection(url: database.url)
        try connection.execute(
            "CREATE TABLE items(account text, title text, CONSTRAINT items_title_key UNIQUE (account, title))")
        try connection.execute("INSERT INTO items VALUES ($1, $2)", ["alice", "my secret diary"])
        let error = try #require(
            postgresError { try connection.execute("INSERT INTO items VALUES ($1, $2)", ["alice", "my secret diary"]) })
        #expect(error.code == .uniqueViolation)
        #expect(error.constraint == "items_title_key")
        #expect(
            error.message
                == "a row would have the same key as an existing one: the unique constraint \"items_title_key\" on table public.items forbids it"
        )
        #expect(!error.description.contains("secret") && !error.description.contains("alice"))
    }

    /// The server's disk full: a tablespace on a 1 MiB tmpfs (mounting one needs root; as root, the
    /// test server runs as the OS user postgres, which is given the mount).
    @Test(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root")) func aFullDiskIsSaid() throws {
        let folder = try TemporaryDirectory("replica-pgdisk")
        let disk = folder.path + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        chmod(folder.path, 0o755)
        let mounted = try ReplicaProcess.run(
            executable: URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk])
        try #require(mounted.status == 0, "mount: \(mounted.standardError)")
        defer { _ = try? ReplicaProcess.run(executable: URL(fileURLWithPath: "/bin/umount"), ["-l", disk]) }
        _ = try ReplicaProcess.run(executable: URL(fileURLWithPath: "/bin/chown"), ["postgres:", disk])
        let admin = try PostgresConnection(url: database.adminURL)
        let tablespace = "disk_\(database.name)"
        try admin.executeScript("CREATE TABLESPACE \(tablespace) LOCATION '\(disk)'")
        defer { try? admin.executeScript("DROP TABLE IF EXISTS filler; DROP TABLESPACE IF EXISTS \(tablespace)") }
        try admin.executeScript("GRANT CREATE ON TABLESPACE \(tablespace) TO replica_app")
        let connection = try PostgresConnection(url: database.url)
        try connection.execute("CREATE TABLE filler(x text) TABLESPACE \(tablespace)")
        let error = try #require(
            postgresError {
                try connection.execute(
                    "INSERT INTO filler SELECT $1 || g FROM generate_series(1, 200000) g", ["secret row "])
            })
        #expect(error.code == .diskFull)
        #expect(error.sqlState == "53100")
        #expect(error.message.contains("has no disk space left: the failed statement was rolled back"))
        #expect(!error.description.contains("secret"))
    }

    @Test func aValueThatDoesNotFitIsNotQuoted() throws {
        let connection = try PostgresConnection(url: database.url)
        let error = try #require(postgresError { try connection.execute("SELECT $1::int", ["secret-number"]) })
        #expect(error.sqlState == "22P02")
        #expect(!error.description.contains("secret-number"))
        #expect(error.message.contains("does not fit its type"))
    }

    @Test func aMissingTableAndAMissingGrantAreSaid() throws {
        let connection = try PostgresConnection(url: database.url)
        let missing = try #require(postgresError { try connection.execute("SELECT * FROM nowhere") })
        #expect(missing.code == .undefinedTable)
        #expect(
            missing.serverMessage == "relation \"nowhere\" does not exist", "a message that cannot quote data is kept")
        let admin = try PostgresConnection(url: database.adminURL)
        try admin.execute("CREATE TABLE private(x int)")
        let denied = try #require(postgresError { try connection.execute("SELECT * FROM private") })
        #expect(denied.code == .insufficientPrivilege)
        #expect(denied.message.contains("the role replica_app may not do this in the database \(database.name)"))
    }

    @Test func codesMatchInCatchClauses() throws {
        let connection = try PostgresConnection(url: database.url)
        do {
            try connection.execute("SELECT * FROM nowhere")
            Issue.record("the statement should have failed")
        } catch PostgresError.Code.undefinedTable {
            // The pattern matched.
        }
    }

    @Test func sqlStatesMapToCodes() {
        #expect(PostgresError.Code(sqlState: "40P01") == .deadlock)
        #expect(PostgresError.Code(sqlState: "08006") == .connectionLost)
        #expect(PostgresError.Code(sqlState: "XX000") == .other)
    }
}
