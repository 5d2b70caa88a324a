import CSpawn
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for plugins and for tests that run `replica`.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3) lists `/proc/self/fd` to close the parent's
/// descriptors in the child, copying each directory entry's full 256-byte name field; an entry near the
/// end of the listing buffer is shorter than that, and full test runs crashed there now and then (one in
/// four while tests launched in parallel, one in twelve with launches serialized: `memcpy` in
/// `Process.run`, a bad pointer at a page boundary). This starts children without it: the child gets its
/// three standard streams and every other descriptor is closed
/// (`posix_spawn_file_actions_addclosefrom_np`), so a plugin can never hold an index file open; its
/// signals start at their defaults; and a thread per child waits for it to end.
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

    /// The child's process ID.
    public let processIdentifier: pid_t
    /// The parent's ends of the pipes asked for.
    public let standardInput: FileHandle?
    /// The read end of the child's standard output when it was a ``Stream/pipe``; `nil` otherwise.
    public let standardOutput: FileHandle?
    /// The read end of the child's standard error when it was a ``Stream/pipe``; `nil` otherwise.
    public let standardError: FileHandle?

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
    /// - Throws: `ReplicaError` (`fileSystem`) when the child cannot be started, naming the executable.
    public init(_ command: [String], environment: [String: String]? = nil,
                standardInput input: Stream = .null, standardOutput output: Stream = .null,
                standardError error: Stream = .null) throws {
        guard let executable = command.first else { throw ReplicaError(.fileSystem, "there is no command to start") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        var parentEnds: [Int32?] = []
        for (target, stream) in [(STDIN_FILENO, input), (STDOUT_FILENO, output), (STDERR_FILENO, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
                parentEnds.append(nil)
            case .descriptor(let descriptor):
                posix_spawn_file_actions_adddup2(&actions, descriptor, target)
                parentEnds.append(nil)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe2(&ends, O_CLOEXEC) == 0 else {
                    parentEnds.compactMap { $0 }.forEach { close($0) }
                    throw ReplicaError(.fileSystem, "cannot start \(executable): no pipe (\(String(cString: strerror(errno))))")
                }
                let (parent, child) = target == STDIN_FILENO ? (ends[1], ends[0]) : (ends[0], ends[1])
                posix_spawn_file_actions_adddup2(&actions, child, target)
                childEnds.append(child)
                parentEnds.append(parent)
            }
        }
        posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1)
        // Signals start at their defaults and unblocked (a watcher that ignores SIGTERM to handle it itself
        // must not pass that on), in a process group of the child's own, as Foundation's Process does, so
        // a Ctrl-C meant for the parent reaches the child through the parent's shutdown, not at once.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))

        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { variables.forEach { free($0) } }
        var pid: pid_t = 0
        let code = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, arguments, variables)
            : posix_spawnp(&pid, executable, &actions, &attributes, arguments, variables)
        guard code == 0 else {
            parentEnds.compactMap { $0 }.forEach { close($0) }
            throw ReplicaError(.fileSystem, "cannot start \(executable): \(String(cString: strerror(code)))")
        }
        processIdentifier = pid
        standardInput = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardOutput = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        standardError = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        Thread.detachNewThread { [self] in reap() }
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
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

    /// Sends a signal, unless the child has ended (its process id may belong to another process by then).
    public func signal(_ number: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if ending == nil { kill(processIdentifier, number) }
    }
}
