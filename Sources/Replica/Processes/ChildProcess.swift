public import CSpawn
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process, for plugins and for tests that run `replica`, that cannot outlive this process.
///
/// The child runs under a small supervisor forked from this process (`cspawn_supervised` in the CSpawn
/// target), so that it and everything it starts end with this process however it ends, SIGKILL
/// included: the supervisor has a parent-death signal (`PR_SET_PDEATHSIG`) and, when this process is
/// gone, sends SIGTERM to the child's process group, then SIGKILL after ``gracePeriod``. When the child
/// ends, what it left running in its process group is killed and reaped too. The child gets its three
/// standard streams and every other descriptor is closed, so a plugin can never hold an index file open;
/// its signals start at their defaults; it is the leader of a process group of its own, which every
/// ``signal(_:)`` reaches, so a Ctrl-C meant for this process reaches the child through this process's
/// shutdown, not at once. A thread per child waits for it to end.
///
/// (Foundation's `Process.run()` on Linux (Swift 6.3) lists `/proc/self/fd` to close the parent's
/// descriptors in the child, and full test runs crashed there now and then; posix_spawn cannot set a
/// parent-death signal. Hence a fork of our own, in C, where only async-signal-safe calls run.)
///
/// For example:
/// ```swift
/// let child = try ChildProcess(["/usr/bin/env", "python3", "plugin.py"], standardInput: .pipe, standardOutput: .pipe)
/// try child.standardInput?.write(contentsOf: Data("{}\n".utf8))
/// let ending = child.waitUntilExit()
/// ```
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A descriptor of the caller's, which the caller keeps (and closes).
        case descriptor(Int32)
        /// A new pipe; the parent's end is ``ChildProcess/standardInput`` (for writing) or
        /// ``ChildProcess/standardOutput`` / ``ChildProcess/standardError`` (for reading).
        case pipe
    }

    /// How the child ended.
    public struct Ending: Sendable, Equatable {
        /// The exit status, or the signal's number when ``wasSignaled``.
        public var status: Int32
        /// Whether a signal ended the child rather than an exit.
        public var wasSignaled: Bool
    }

    /// The child's process ID, which is also its process group's ID.
    public let processIdentifier: pid_t
    /// How long the child has between SIGTERM and SIGKILL when this process ends before it.
    public let gracePeriod: TimeInterval
    /// The parent's ends of the pipes asked for.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output when it was a ``Stream/pipe``; `nil` otherwise.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error when it was a ``Stream/pipe``; `nil` otherwise.
    public let standardError: FileHandle?

    /// The supervisor's process ID: this process's child, which ends as the child does.
    private let supervisor: pid_t
    private let condition = NSCondition()
    private var ending: Ending?

    /// Starts `command` (its first element is the executable's path; a name without `/` is looked up in
    /// `PATH`).
    ///
    /// - Parameters:
    ///   - command: the executable and its arguments.
    ///   - environment: the child's whole environment; `nil` passes this process's on.
    ///   - input: where the child's standard input comes from.
    ///   - output: where the child's standard output goes.
    ///   - error: where the child's standard error goes.
    ///   - gracePeriod: how long the child has, after SIGTERM, to end when this process ends first;
    ///     then its process group gets SIGKILL.
    /// - Throws: `ReplicaError` (`fileSystem`) when the child cannot be started, naming the executable.
    public init(
        _ command: [String], environment: [String: String]? = nil,
        standardInput input: Stream = .null, standardOutput output: Stream = .null,
        standardError error: Stream = .null, gracePeriod: TimeInterval = 2
    ) throws {
        guard let executable = command.first else { throw ReplicaError(.fileSystem, "there is no command to start") }
        func failure(_ code: Int32) -> ReplicaError {
            ReplicaError(.fileSystem, "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        // Descriptors opened here are close-on-exec: only the supervisor's copies reach the child.
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        var parentEnds: [Int32?] = []
        var streams: [Int32] = []
        do {
            for (index, stream) in [input, output, error].enumerated() {
                switch stream {
                case .null:
                    let null = open("/dev/null", (index == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
                    guard null >= 0 else { throw failure(errno) }
                    childEnds.append(null)
                    streams.append(null)
                    parentEnds.append(nil)
                case .descriptor(let descriptor):
                    streams.append(descriptor)
                    parentEnds.append(nil)
                case .pipe:
                    var ends: [Int32] = [-1, -1]
                    guard pipe2(&ends, O_CLOEXEC) == 0 else {
                        throw ReplicaError(
                            .fileSystem, "cannot start \(executable): no pipe (\(String(cString: strerror(errno))))")
                    }
                    let (parent, child) = index == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                    childEnds.append(child)
                    streams.append(child)
                    parentEnds.append(parent)
                }
            }
        } catch {
            parentEnds.compactMap { $0 }.forEach { close($0) }
            throw error
        }
        func closeParentEnds() { parentEnds.compactMap { $0 }.forEach { close($0) } }

        let variables = environment ?? ProcessInfo.processInfo.environment
        guard let path = Self.executablePath(executable, searching: ProcessInfo.processInfo.environment["PATH"]) else {
            closeParentEnds()
            throw failure(ENOENT)
        }
        var report: [Int32] = [-1, -1]
        guard pipe2(&report, O_CLOEXEC) == 0 else {
            closeParentEnds()
            throw ReplicaError(.fileSystem, "cannot start \(executable): no pipe (\(String(cString: strerror(errno))))")
        }
        defer { close(report[0]) }

        // Everything the fork needs is allocated here: nothing is allocated after it.
        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let environmentStrings = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environmentStrings.forEach { free($0) } }
        let grace = Int32(clamping: Int((max(gracePeriod, 0) * 1000).rounded(.up)))
        let supervisor = cspawn_supervised(path, arguments, environmentStrings, streams, report[1], grace)
        let forkError = errno
        close(report[1])
        guard supervisor > 0 else {
            closeParentEnds()
            throw failure(forkError)
        }
        // The supervisor writes the program's id, or why it could not start, and closes the pipe.
        var program: pid_t = 0
        var problem: Int32 = 0
        var record: (Int32, Int32) = (0, 0)
        while true {
            let count = withUnsafeMutableBytes(of: &record) { read(report[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count == MemoryLayout<(Int32, Int32)>.size else { break }
            if record.0 == CSPAWN_REPORT_PROGRAM { program = record.1 } else { problem = record.1 }
        }
        guard problem == 0, program > 0 else {
            var status: Int32 = 0
            while waitpid(supervisor, &status, 0) == -1 && errno == EINTR {}
            closeParentEnds()
            throw failure(problem == 0 ? ECHILD : problem)
        }
        self.supervisor = supervisor
        self.gracePeriod = gracePeriod
        processIdentifier = program
        standardInput = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        Thread.detachNewThread { [self] in reap() }
    }

    /// `executable` itself when it holds a `/`, else the first executable file of that name in `path`'s
    /// folders (as `execvp` looks, which may not run after a fork in a multithreaded process).
    static func executablePath(_ executable: String, searching path: String?) -> String? {
        if executable.contains("/") { return executable }
        for folder in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (folder.isEmpty ? "." : String(folder)) + "/" + executable
            var information = stat()
            if access(candidate, X_OK) == 0, stat(candidate, &information) == 0,
                (information.st_mode & S_IFMT) == S_IFREG
            {
                return candidate
            }
        }
        return nil
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(supervisor, &status, 0) == -1 && errno == EINTR {}
        let signaled = (status & 0x7F) != 0 && (status & 0x7F) != 0x7F
        condition.lock()
        ending = Ending(status: signaled ? status & 0x7F : (status >> 8) & 0xFF, wasSignaled: signaled)
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ending == nil
    }

    /// Waits for the child to end.
    @discardableResult
    public func waitUntilExit() -> Ending {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let ending { return ending }
            condition.wait()
        }
    }

    /// Waits at most `timeout` seconds for the child to end; `nil` when it is still running.
    public func wait(timeout: TimeInterval) -> Ending? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while ending == nil {
            if !condition.wait(until: deadline) { break }
        }
        return ending
    }

    /// Sends a signal to the child's process group (the child and what it started), unless the child has
    /// ended (its process id may belong to another process by then).
    public func signal(_ number: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if ending == nil { kill(-processIdentifier, number) }
    }

    /// Ends the child and its process group: SIGTERM, then SIGKILL when it has not ended within `grace`
    /// seconds; returns how it ended (once it has, and everything it left was reaped).
    ///
    /// For example:
    /// ```swift
    /// let child = try ChildProcess(["sleep", "30"])
    /// let ending = child.terminate(grace: 2)   // killed by SIGTERM
    /// ```
    @discardableResult
    public func terminate(grace: TimeInterval) -> Ending {
        signal(SIGTERM)
        if let ending = wait(timeout: grace) { return ending }
        signal(SIGKILL)
        return waitUntilExit()
    }
}
