package import Foundation
import ReplicaCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One running plugin (a source, an enricher): a child process spoken to in line-delimited JSON on its standard input and output.
///
/// A thread reads standard output line by line into a queue; callers take messages with a deadline, so a
/// plugin that stops answering is noticed. Standard error is kept (the last lines) for reports.
package final class PluginProcess: @unchecked Sendable {
    package enum Message: Sendable {
        case line(Int, String)
        /// The plugin closed its output (exited, or crashed).
        case end(String)
        /// Nothing arrived in time.
        case timeout
        /// A line longer than ``PluginProcess/maximumLineLength``; the plugin was ended.
        case tooLong(Int)
    }

    /// The most bytes one protocol line may hold: an item may hold 16 MiB of attributes, and escaping in
    /// JSON can make their text longer.
    package static let maximumLineLength = 64 << 20

    private let process: ChildProcess
    private let condition = NSCondition()
    private var queue: [Message] = []
    private var ended = false
    private var errorTail: [String] = []
    private var lineNumber = 0
    /// When the plugin last wrote anything: a long line still arriving is not silence.
    private var lastOutput = Date()

    /// Starts `command` with `environment` added to this process's.
    ///
    /// - Parameter gracePeriod: how long the plugin has between SIGTERM and SIGKILL when this process
    ///   ends without stopping it (see ``ChildProcess``).
    package init(command: [String], environment: [String: String], gracePeriod: TimeInterval = 2) throws {
        guard let executable = command.first else {
            throw ReplicaError(.invalidConfiguration, "the plugin command is empty")
        }
        do {
            process = try ChildProcess(
                executable.contains("/") ? command : ["/usr/bin/env"] + command,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                standardInput: .pipe, standardOutput: .pipe, standardError: .pipe,
                gracePeriod: gracePeriod)
        } catch let error as ReplicaError {
            throw ReplicaError(.invalidConfiguration, "the plugin \(executable) cannot be started: \(error.message)")
        }
        let outputHandle = process.standardOutput!
        let errorHandle = process.standardError!
        Thread.detachNewThread { [self] in readLines(outputHandle) }
        Thread.detachNewThread { [self] in readErrors(errorHandle) }
    }

    deinit {
        process.signal(SIGKILL)
    }

    private func readLines(_ handle: FileHandle) {
        var lines = LineBuffer(maximumLineLength: Self.maximumLineLength)
        reading: while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            lines.append(chunk)
            condition.lock()
            lastOutput = Date()
            condition.unlock()
            while let next = lines.next() {
                condition.lock()
                lineNumber += 1
                switch next {
                case .line(let bytes): queue.append(.line(lineNumber, String(decoding: bytes, as: UTF8.self)))
                case .tooLong: queue.append(.tooLong(lineNumber))
                }
                condition.signal()
                condition.unlock()
                if case .tooLong = next {
                    // The plugin broke the protocol: it is ended, and the source reports why.
                    process.signal(SIGKILL)
                    break reading
                }
            }
        }
        let ending = process.waitUntilExit()
        let status =
            ending.wasSignaled ? "was killed by signal \(ending.status)" : "exited with status \(ending.status)"
        condition.lock()
        ended = true
        queue.append(.end(status))
        condition.signal()
        condition.unlock()
    }

    private func readErrors(_ handle: FileHandle) {
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            let lines = String(decoding: chunk, as: UTF8.self).split(separator: "\n").map(String.init)
            condition.lock()
            errorTail = Array((errorTail + lines).suffix(5))
            condition.unlock()
        }
    }

    /// The next message, waiting until the plugin has written nothing at all for `timeout` seconds.
    package func next(timeout: Double) -> Message {
        let started = Date()
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            let deadline = max(started, lastOutput).addingTimeInterval(timeout)
            if !condition.wait(until: deadline), queue.isEmpty,
                max(started, lastOutput).addingTimeInterval(timeout) <= Date()
            {
                return .timeout
            }
        }
        return queue.removeFirst()
    }

    /// The last lines the plugin wrote to its standard error.
    package var lastErrors: String {
        condition.lock()
        defer { condition.unlock() }
        return errorTail.joined(separator: " | ")
    }

    /// Whether the plugin's output has ended (it exited, or crashed).
    package var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    /// What became of a message sent with a deadline.
    package enum Sending: Sendable {
        case sent
        /// The plugin no longer reads.
        case closed
        /// The plugin did not take it within the deadline (its input pipe stayed full): it is ended.
        case timedOut
    }

    /// Sends one message, giving up after `timeout` seconds: a plugin that stops reading must not hold the
    /// caller once the message is larger than the pipe's buffer. On a timeout the plugin is killed, which
    /// ends the write.
    package func send(_ message: JSON, within timeout: Double) -> Sending {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(false)
        Thread.detachNewThread { [self] in
            let sent = send(message)
            result.withLock { $0 = sent }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            // The child's end of the pipe closes with it, and the write fails with EPIPE; standard input
            // is closed only after that, never under a write in progress.
            process.signal(SIGKILL)
            done.wait()
            try? process.standardInput?.close()
            return .timedOut
        }
        return result.withLock { $0 } ? .sent : .closed
    }

    /// Sends one message; `false` when the plugin no longer reads.
    @discardableResult
    package func send(_ message: JSON) -> Bool {
        let data = Data((message.serialized() + "\n").utf8)
        // A plugin that exited closes its end; writing must fail with EPIPE, not kill us with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        do {
            try process.standardInput?.write(contentsOf: data)
            return true
        } catch {
            return false
        }
    }

    /// Asks the plugin to stop, then ends it and what it started (its process group): SIGTERM after
    /// `grace` seconds, SIGKILL `killAfter` seconds later. Returns once it has ended and been reaped.
    package func stop(grace: Double = 2, killAfter: Double = 1) {
        send(.object([("type", "stop")]))
        try? process.standardInput?.close()
        if process.wait(timeout: grace) != nil { return }
        process.terminate(grace: killAfter)
    }

    /// Kills the plugin and what it started (its process group) at once.
    ///
    /// - Parameter closingInput: whether to close its standard input too; not while another thread may
    ///   be writing to it (that write fails with EPIPE once the plugin is gone).
    package func kill(closingInput: Bool = true) {
        process.signal(SIGKILL)
        if closingInput { try? process.standardInput?.close() }
    }
}
