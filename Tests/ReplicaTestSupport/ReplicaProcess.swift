public import Foundation
import Replica

/// The result of running the built `replica` binary.
public struct ProcessResult: Sendable {
    public var status: Int32
    /// Whether the process was killed by a signal rather than exiting.
    public var wasSignaled: Bool
    public var standardOutput: String
    public var standardError: String
}

/// Runs the `replica` executable that `swift build` put beside the test bundle.
public enum ReplicaProcess {
    /// The built `replica` binary.
    public static var executable: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("replica")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        // Fall back to the package's debug build folder.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/replica")
    }

    /// Runs `replica` with `arguments`, feeding `input` to its standard input, and waits for it.
    ///
    /// Semantic search is off (`REPLICA_MODEL_DIR=off`) unless `environment` says otherwise: most tests
    /// are about words, and loading the model in every process of a debug build costs seconds. Tests of
    /// semantic search pass ``withModel``.
    ///
    /// - Parameters:
    ///   - environment: added to (and overriding) this process's environment.
    ///   - timeout: the process is killed after this many seconds and the call throws.
    @discardableResult
    @available(*, noasync, message: "it waits for a process; in async code await ReplicaProcess.running")
    public static func run(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) throws -> ProcessResult {
        try run(
            executable: executable, arguments, input: input.map { Data($0.utf8) },
            environment: ["REPLICA_MODEL_DIR": "off"].merging(environment) { $1 }, timeout: timeout)
    }

    /// ``run(_:input:environment:timeout:)``, waited for off the cooperative pool. A test that runs
    /// process after process must use this: on a two-core machine the pool has two threads, and a test
    /// blocking one of them for minutes starves every other test's tasks.
    @discardableResult
    public static func running(
        _ arguments: [String], input: String? = nil, environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) async throws -> ProcessResult {
        try await Blocking.run { try run(arguments, input: input, environment: environment, timeout: timeout) }
    }

    /// ``run(executable:_:input:environment:timeout:)``, waited for off the cooperative pool.
    @discardableResult
    public static func running(
        executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) async throws -> ProcessResult {
        try await Blocking.run {
            try run(executable: executable, arguments, input: input, environment: environment, timeout: timeout)
        }
    }

    /// The environment that lets `replica` find the installed embedding model.
    public static let withModel = ["REPLICA_MODEL_DIR": ""]

    /// Runs `replica` as a process that cannot read what file modes forbid, even as root (which reads
    /// anything otherwise): through setpriv, without the capabilities that override file modes.
    @discardableResult
    @available(*, noasync, message: "it waits for a process; in async code await ReplicaProcess.running")
    public static func runWithoutOverride(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
        guard getuid() == 0 else { return try run(arguments, input: input) }
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        guard FileManager.default.isExecutableFile(atPath: setpriv.path) else {
            throw ProcessTimeout(arguments: ["setpriv"], seconds: 0)
        }
        let dropped = "-dac_override,-dac_read_search"
        return try run(
            executable: setpriv, ["--inh-caps=" + dropped, "--bounding-set=" + dropped, executable.path] + arguments,
            input: input.map { Data($0.utf8) }, environment: ["REPLICA_MODEL_DIR": "off"])
    }

    /// Runs any executable the same way.
    @discardableResult
    @available(*, noasync, message: "it waits for a process; in async code await ReplicaProcess.running")
    public static func run(
        executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) throws -> ProcessResult {
        let scratch = try TemporaryDirectory("replica-process")
        let outputURL = scratch.appending("stdout")
        let errorURL = scratch.appending("stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorURL)
        let inputHandle = try input.map { input in
            let inputURL = scratch.appending("stdin")
            try input.write(to: inputURL)
            return try FileHandle(forReadingFrom: inputURL)
        }
        let child = try ChildProcess(
            [executable.path] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardInput: inputHandle.map { .descriptor($0.fileDescriptor) } ?? .null,
            standardOutput: .descriptor(output.fileDescriptor),
            standardError: .descriptor(errors.fileDescriptor))
        try? output.close()
        try? errors.close()
        try? inputHandle?.close()
        guard let ending = child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            child.waitUntilExit()
            throw ProcessTimeout(arguments: arguments, seconds: timeout)
        }
        return ProcessResult(
            status: ending.status,
            wasSignaled: ending.wasSignaled,
            standardOutput: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            standardError: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "")
    }
}

/// A child process that did not finish in time.
public struct ProcessTimeout: Error, CustomStringConvertible {
    public var arguments: [String]
    public var seconds: TimeInterval
    public var description: String { "replica \(arguments.joined(separator: " ")) did not finish within \(seconds) s" }
}
