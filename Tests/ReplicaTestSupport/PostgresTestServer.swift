public import Foundation
import Replica
import ReplicaPostgres
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL server the tests of one process share, and a database of its own for each test.
///
/// With `$REPLICA_TEST_DATABASE` set to the URL `scripts/postgres.sh start DIR` prints (replica_app on a
/// running server), the tests use that server; they reach its superuser through the same socket (the
/// role `postgres`, which the script lets in without a password there) or through
/// `$REPLICA_TEST_ADMIN_DATABASE`. Otherwise the first test that asks starts a throwaway server:
/// `scripts/postgres.sh run DIR --fast` in a folder under /tmp, as a ``ChildProcess``, whose supervisor
/// ends the server with this process however it ends (as root, the script runs PostgreSQL as the OS
/// user `postgres`). It is stopped at exit and its folder removed; folders a killed test process left
/// are removed by the next one.
///
/// Suites that need it carry ``isEnabled`` as a condition: they are skipped when PostgreSQL is not
/// installed or cannot start, except under `CI=true`, where they run and fail.
///
/// For example:
/// ```swift
/// @Suite(.enabled(if: PostgresTestServer.isEnabled, "PostgreSQL is not installed here or could not start (why: standard error)"))
/// struct NotesTests {
///     @Test func writes() throws {
///         let database = try PostgresTestServer.makeDatabase()
///         let connection = try PostgresConnection(url: database.url)
///         try connection.execute("CREATE TABLE notes(body text)")
///     }
/// }
/// ```
public enum PostgresTestServer {
    /// Whether the PostgreSQL tests run: a server is available, or `CI=true`, where a server that cannot
    /// start must fail the tests rather than skip them. When they are skipped, the reason is written
    /// to standard error once.
    public static var isEnabled: Bool {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        switch shared {
        case .success: return true
        case .failure(let error):
            if !reportedSkip.exchange(true, ordering: .relaxed) {
                FileHandle.standardError.write(Data("PostgreSQL tests skipped: \(error)\n".utf8))
            }
            return false
        }
    }

    /// Creates a database of its own for one test, owned by the role replica connects as; it is dropped
    /// (its sessions ended) when the value is released.
    ///
    /// - Throws: Why the server is not available (under `CI=true`, where the tests run regardless), or
    ///   the ``PostgresError`` of creating the database.
    ///
    /// - Parameter tablespace: where the database's files go (``makeTablespace(at:)``); `nil`, the server's own.
    public static func makeDatabase(tablespace: String? = nil) throws -> PostgresTestDatabase {
        let server = try shared.get()
        let name = uniqueName("replica_test")
        let placed = tablespace.map { " TABLESPACE \($0)" } ?? ""
        try server.admin.withConnection {
            try $0.executeScript(
                "CREATE DATABASE \(name) OWNER \(server.role) TEMPLATE template0 ENCODING 'UTF8'\(placed)")
        }
        return PostgresTestDatabase(name: name, server: server)
    }

    /// Makes a tablespace in `folder` (empty, and writable by the server's OS user) and returns its name;
    /// ``dropTablespace(_:)`` drops it once no database is in it.
    public static func makeTablespace(at folder: String) throws -> String {
        let server = try shared.get()
        let name = uniqueName("replica_space")
        try server.admin.withConnection { try $0.executeScript("CREATE TABLESPACE \(name) LOCATION '\(folder)'") }
        return name
    }

    /// Drops the tablespace `name`.
    public static func dropTablespace(_ name: String) throws {
        try shared.get().admin.withConnection { try $0.executeScript("DROP TABLESPACE IF EXISTS \(name)") }
    }

    /// Creates a database of its own for one test as a copy of `template`, rows and all (`CREATE DATABASE
    /// … TEMPLATE`): what a test that starts many trials from one state uses. Sessions still open on
    /// `template` are ended first, since PostgreSQL copies only a database nobody is in.
    public static func makeDatabase(copying template: PostgresTestDatabase) throws -> PostgresTestDatabase {
        let server = try shared.get()
        let name = uniqueName("replica_test")
        try server.admin.withConnection { admin in
            try admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                [.text(template.name)])
            // The server waits a few seconds for the ended sessions to go before it gives up.
            try admin.executeScript("CREATE DATABASE \(name) OWNER \(server.role) TEMPLATE \(template.name)")
        }
        return PostgresTestDatabase(name: name, server: server)
    }

    static let shared: Result<PostgresTestServerInstance, any Error> = Result { try PostgresTestServerInstance.start() }

    /// `prefix`, this process and a number it has not given before: a name no other test takes.
    private static func uniqueName(_ prefix: String) -> String {
        "\(prefix)_\(getpid())_\(databaseCounter.add(1, ordering: .relaxed).newValue)"
    }

    private static let reportedSkip = Atomic<Bool>(false)
    private static let databaseCounter = Atomic<Int>(0)
}

/// Why the tests have no PostgreSQL server.
public struct PostgresTestServerError: Error, CustomStringConvertible, Sendable {
    /// What failed, with the last lines of the server's log where there is one.
    public var description: String
}

/// A database of one test's own, on the shared test server.
public final class PostgresTestDatabase: Sendable {
    /// The database's name.
    public let name: String
    /// The URL replica connects with: its role (replica_app) and password, on this database.
    public let url: String
    /// A superuser's URL on this database, for what a test does behind replica's back.
    public let adminURL: String
    /// The connection parameters of ``url``: `host` (the socket folder), `port`, `user`, `password`, `dbname`.
    public let parameters: [String: String]
    private let server: PostgresTestServerInstance

    init(name: String, server: PostgresTestServerInstance) {
        self.name = name
        self.server = server
        var parameters = server.application
        parameters["dbname"] = name
        self.parameters = parameters
        url = PostgresConnection.connectionString(parameters)
        var admin = server.administrator
        admin["dbname"] = name
        adminURL = PostgresConnection.connectionString(admin)
    }

    deinit {
        let statement = "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"
        _ = try? server.admin.withConnection { try $0.executeScript(statement) }
    }

    /// A URL like ``url`` with some parameters changed (`["password": "wrong"]`, `["dbname": "missing"]`).
    public func url(changing changes: [String: String]) -> String {
        PostgresConnection.connectionString(parameters.merging(changes) { $1 })
    }
}

/// A running server: the script's child process (when this process started it) and how to reach it.
final class PostgresTestServerInstance: Sendable {
    /// replica_app's connection parameters, as the script's URL gives them.
    let application: [String: String]
    /// The superuser's, on the `postgres` database.
    let administrator: [String: String]
    let admin: PostgresPool
    let role: String
    private let child: ChildProcess?
    private let directory: String?

    private init(
        application: [String: String], administrator: [String: String], child: ChildProcess?, directory: String?
    ) {
        self.application = application
        self.administrator = administrator
        self.child = child
        self.directory = directory
        role = application["user"] ?? "replica_app"
        admin = PostgresPool(url: PostgresConnection.connectionString(administrator), maximumConnections: 2)
    }

    /// The server this process stops at exit.
    private static let started = Mutex<PostgresTestServerInstance?>(nil)

    static func start() throws -> PostgresTestServerInstance {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["REPLICA_TEST_DATABASE"], !url.isEmpty {
            let application = try PostgresConnection.parameters(in: url)
            let administrator =
                try environment["REPLICA_TEST_ADMIN_DATABASE"].map { try PostgresConnection.parameters(in: $0) }
                ?? superuser(beside: application)
            let server = PostgresTestServerInstance(
                application: application, administrator: administrator, child: nil, directory: nil)
            _ = try PostgresConnection(url: PostgresConnection.connectionString(administrator))
            return server
        }
        removeFoldersOfEndedProcesses()
        var template = Array("/tmp/replica-pg-\(getpid())-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PostgresTestServerError(
                description: "cannot make a folder under /tmp: \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: created)
        let log = directory + ".log"
        guard FileManager.default.createFile(atPath: log, contents: nil),
            let logHandle = FileHandle(forWritingAtPath: log)
        else {
            throw PostgresTestServerError(description: "cannot write \(log)")
        }
        defer { try? logHandle.close() }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh").path
        let child = try ChildProcess(
            [script, "run", directory, "--fast"], standardOutput: .pipe,
            standardError: .descriptor(logHandle.fileDescriptor), gracePeriod: 5)
        func failure(_ what: String) -> PostgresTestServerError {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let lastLines = output.split(separator: "\n").suffix(4).joined(separator: " / ")
            return PostgresTestServerError(description: "\(what) (scripts/postgres.sh run \(directory): \(lastLines))")
        }
        // The script prints the URL as its only line on standard output, then becomes the server.
        guard let url = readLine(child.standardOutput!.fileDescriptor), !url.isEmpty else {
            child.terminate(grace: 5)
            try? FileManager.default.removeItem(atPath: directory)
            throw failure("PostgreSQL could not be set up")
        }
        let application = try PostgresConnection.parameters(in: url)
        let server = PostgresTestServerInstance(
            application: application, administrator: superuser(beside: application),
            child: child, directory: directory)
        started.withLock { $0 = server }
        atexit { PostgresTestServerInstance.stopAtExit() }
        // The server takes a moment to accept connections after the script hands over to it.
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                _ = try PostgresConnection(url: PostgresConnection.connectionString(server.administrator))
                return server
            } catch {
                guard child.isRunning, Date() < deadline else {
                    throw failure("PostgreSQL did not accept connections: \(error)")
                }
                usleep(10_000)
            }
        }
    }

    /// The superuser `postgres` on the `postgres` database, through the socket or host of `application`.
    private static func superuser(beside application: [String: String]) -> [String: String] {
        var parameters = application.filter { ["host", "hostaddr", "port"].contains($0.key) }
        parameters["user"] = "postgres"
        parameters["dbname"] = "postgres"
        return parameters
    }

    /// Stops the server this process started (fast shutdown: sessions ended) and removes its folder.
    private static func stopAtExit() {
        guard let server = started.withLock({ $0 }), let child = server.child else { return }
        child.signal(SIGINT)
        if child.wait(timeout: 10) == nil { child.terminate(grace: 1) }
        if let directory = server.directory {
            try? FileManager.default.removeItem(atPath: directory)
            try? FileManager.default.removeItem(atPath: directory + ".log")
        }
    }

    /// Removes the folders (and logs) of test servers whose test process is gone: its supervisor ended
    /// their server with it, but nothing removed the folder.
    private static func removeFoldersOfEndedProcesses() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        where name.hasPrefix("replica-pg-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 4, let pid = pid_t(parts[2]), pid != getpid(), processIsGone(pid) else { continue }
            try? FileManager.default.removeItem(atPath: "/tmp/" + name)
        }
    }

    /// One line read from `descriptor`, without its newline; `nil` at the end of the stream before any byte.
    static func readLine(_ descriptor: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

extension PostgresTestDatabase {
    /// The database as a `postgresql://` URL (``url`` is libpq's `key=value` form), for what takes a
    /// `URL`, such as a followed table's database.
    public var postgresURL: URL {
        var components = URLComponents()
        components.scheme = "postgresql"
        components.user = parameters["user"]
        components.password = parameters["password"]
        components.host = ""
        components.path = "/" + (parameters["dbname"] ?? "")
        components.queryItems = ["host", "port"].compactMap { key in
            parameters[key].map { URLQueryItem(name: key, value: $0) }
        }
        return components.url!
    }
}
