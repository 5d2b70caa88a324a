import Foundation
import Replica

/// A child process left running while a test does other things: `replica watch`, say.
public final class RunningProcess: @unchecked Sendable {
    private let process = Process()
    private let scratch: TemporaryDirectory
    private let finished = DispatchSemaphore(value: 0)

    /// Starts `replica` with `arguments`; its output goes to files read when it ends.
    public init(replica arguments: [String], environment: [String: String] = [:]) throws {
        scratch = try TemporaryDirectory("replica-running")
        _ = FileManager.default.createFile(atPath: scratch.path + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: scratch.path + "/err", contents: nil)
        process.executableURL = ReplicaProcess.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: scratch.appending("out"))
        process.standardError = try FileHandle(forWritingTo: scratch.appending("err"))
        process.terminationHandler = { [finished] _ in finished.signal() }
        try ProcessLaunch.run(process)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// What the process wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: scratch.appending("err"), encoding: .utf8)) ?? "" }

    public var standardOutput: String { (try? String(contentsOf: scratch.appending("out"), encoding: .utf8)) ?? "" }

    /// Sends a signal.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits up to `timeout` seconds for the process to end; returns its exit status, or `nil` if it is
    /// still running (it is then killed).
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
            return nil
        }
        return process.terminationStatus
    }
}
