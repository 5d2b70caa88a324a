import Foundation
import Replica
import ReplicaPostgres

#if canImport(Glibc)
import Glibc
#endif

/// Two PostgreSQL servers of a test's own: a primary and its streaming-replication standby, each run by
/// `scripts/postgres.sh` in the foreground as a ``ChildProcess`` (`run DIR`, then `standby PRIMARY DIR
/// --run`), so that they end with the test process however it ends. ``stopStandby()`` stops the
/// standby alone; both are stopped and their folders removed when the value is released.
///
/// The primary runs with fsync on (not `--fast`): with `synchronous_commit` off, a commit would reach
/// the standby only when the WAL writer next flushes.
public final class PostgresStandbyPair: @unchecked Sendable {
    /// replica_app on the primary's `replica` database.
    public let primaryURL: String
    /// The schema's owner on the primary, which applies the migrations.
    public let ownerURL: String
    /// replica_app on the standby.
    public let standbyURL: String
    /// The superuser on the standby's `replica` database, for what a test does behind replica's back.
    public let standbyAdminURL: String
    /// The superuser on the primary's `replica` database.
    public let primaryAdminURL: String
    private let folder: String
    private var primary: ChildProcess?
    private var standby: ChildProcess?

    /// Starts both servers in a new folder under /tmp and waits until both accept connections.
    public init() throws {
        var template = Array("/tmp/replica-pg-\(getpid())-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PostgresTestServerError(
                description: "cannot make a folder under /tmp: \(String(cString: strerror(errno)))")
        }
        folder = String(cString: created)
        // The server's OS user (as root, `postgres`) must reach the two folders inside.
        chmod(folder, 0o755)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/postgres.sh").path
        var started: [ChildProcess] = []
        do {
            let (primary, primaryURL) = try Self.run([script, "run", folder + "/p"], log: folder + "/p.log")
            started.append(primary)
            let (standby, standbyURL) = try Self.run(
                [script, "standby", folder + "/p", folder + "/s", "--run"], log: folder + "/s.log")
            started.append(standby)
            let application = try PostgresConnection.parameters(in: primaryURL)
            var owner = application
            owner["user"] = "replica_owner"
            owner["password"] = try String(contentsOfFile: folder + "/p/replica_owner.password", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            func admin(_ url: String) throws -> String {
                var parameters = try PostgresConnection.parameters(in: url).filter {
                    ["host", "port"].contains($0.key)
                }
                parameters["user"] = "postgres"
                parameters["dbname"] = "replica"
                return PostgresConnection.connectionString(parameters)
            }
            let primaryAdminURL = try admin(primaryURL)
            let standbyAdminURL = try admin(standbyURL)
            try Self.waitForConnections(primaryAdminURL, process: primary)
            try Self.waitForConnections(standbyAdminURL, process: standby)
            self.primary = primary
            self.standby = standby
            self.primaryURL = primaryURL
            self.standbyURL = standbyURL
            self.ownerURL = PostgresConnection.connectionString(owner)
            self.primaryAdminURL = primaryAdminURL
            self.standbyAdminURL = standbyAdminURL
        } catch {
            for process in started.reversed() { Self.stop(process) }
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    deinit { stopAll() }

    /// Stops the standby (fast shutdown), so that reads must go to the primary.
    public func stopStandby() {
        if let standby { Self.stop(standby) }
        standby = nil
    }

    private func stopAll() {
        stopStandby()
        if let primary { Self.stop(primary) }
        primary = nil
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func stop(_ process: ChildProcess) {
        process.signal(SIGINT)
        if process.wait(timeout: 20) == nil { _ = process.terminate(grace: 1) }
    }

    /// Runs the script, which prints the server's URL as its only line, then becomes the server.
    private static func run(_ command: [String], log: String) throws -> (ChildProcess, String) {
        guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log)
        else {
            throw PostgresTestServerError(description: "cannot write \(log)")
        }
        defer { try? handle.close() }
        let child = try ChildProcess(
            command, standardOutput: .pipe, standardError: .descriptor(handle.fileDescriptor), gracePeriod: 5)
        guard let url = PostgresTestServerInstance.readLine(child.standardOutput!.fileDescriptor), !url.isEmpty else {
            _ = child.terminate(grace: 5)
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw PostgresTestServerError(
                description: "\(command.dropFirst().joined(separator: " ")) failed: "
                    + output.split(separator: "\n").suffix(4).joined(separator: " / "))
        }
        return (child, url)
    }

    private static func waitForConnections(_ url: String, process: ChildProcess) throws {
        let deadline = Date().addingTimeInterval(120)
        while true {
            do {
                _ = try PostgresConnection(url: url)
                return
            } catch {
                guard process.isRunning, Date() < deadline else {
                    throw PostgresTestServerError(
                        description: "a server of the pair did not accept connections: \(error)")
                }
                usleep(10_000)
            }
        }
    }
}
