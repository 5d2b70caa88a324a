public import Foundation
import Replica

/// A child process left running while a test does other things: `replica watch`, say.
public final class RunningProcess: @unchecked Sendable {
    private let child: ChildProcess
    private let scratch: TemporaryDirectory

    /// Starts `replica` with `arguments`; its output goes to files read when it ends.
    ///
    /// - Parameter input: a file the process reads as its standard input (`/dev/null` by default).
    public init(replica arguments: [String], environment: [String: String] = [:], input: String? = nil) throws {
        scratch = try TemporaryDirectory("replica-running")
        _ = FileManager.default.createFile(atPath: scratch.path + "/out", contents: nil)
        _ = FileManager.default.createFile(atPath: scratch.path + "/err", contents: nil)
        let output = try FileHandle(forWritingTo: scratch.appending("out"))
        let errors = try FileHandle(forWritingTo: scratch.appending("err"))
        let reading = try input.map { try FileHandle(forReadingFrom: URL(fileURLWithPath: $0)) }
        defer {
            try? output.close()
            try? errors.close()
            try? reading?.close()
        }
        child = try ChildProcess(
            [ReplicaProcess.executable.path] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardInput: reading.map { .descriptor($0.fileDescriptor) } ?? .null,
            standardOutput: .descriptor(output.fileDescriptor), standardError: .descriptor(errors.fileDescriptor))
    }

    deinit {
        child.signal(SIGKILL)
    }

    /// What the process wrote to standard error so far.
    public var standardError: String { (try? String(contentsOf: scratch.appending("err"), encoding: .utf8)) ?? "" }

    public var standardOutput: String { (try? String(contentsOf: scratch.appending("out"), encoding: .utf8)) ?? "" }

    /// Sends a signal.
    public func signal(_ number: Int32) {
        child.signal(number)
    }

    /// ``waitForExit(timeout:)``, waited for off the cooperative pool (see ``ReplicaProcess/running(_:input:environment:timeout:)``).
    public func exit(within timeout: TimeInterval) async -> Int32? {
        (try? await Blocking.run { self.waitForExit(timeout: timeout) }) ?? nil
    }

    /// Waits up to `timeout` seconds for the process to end; returns its exit status, or `nil` if it is
    /// still running (it is then killed).
    @available(*, noasync, message: "it waits for a process; in async code await exit(within:)")
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        guard let ending = child.wait(timeout: timeout) else {
            if timeout >= 60 {
                // What each thread of the process was doing, to say why it did not end.
                let pid = child.processIdentifier
                let script =
                    "ps -eo pid,ppid,pgid,stat,wchan:30,args | grep -v grep | grep -E 'replica |PID'; for t in /proc/\(pid)/task/*; do echo \"== $t $(cat $t/comm) $(cat $t/wchan)\"; cat $t/stack 2>/dev/null | head -6; done"
                let shell = try? ReplicaProcess.run(
                    executable: URL(fileURLWithPath: "/bin/sh"), ["-c", script], timeout: 20)
                FileHandle.standardError.write(
                    Data("the process \(pid) did not end in \(timeout) s:\n\(shell?.standardOutput ?? "")".utf8))
            }
            child.signal(SIGKILL)
            child.waitUntilExit()
            return nil
        }
        return ending.status
    }
}
