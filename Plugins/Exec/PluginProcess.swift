import Foundation
import Replica
#if canImport(Glibc)
import Glibc
#endif

/// One running plugin: a child process spoken to in line-delimited JSON on its standard input and output.
///
/// A thread reads standard output line by line into a queue; callers take messages with a deadline, so a
/// plugin that stops answering is noticed. Standard error is kept (the last lines) for reports.
final class PluginProcess: @unchecked Sendable {
    enum Message: Sendable {
        case line(Int, String)
        /// The plugin closed its output (exited, or crashed).
        case end(String)
        /// Nothing arrived in time.
        case timeout
    }

    private let process: ChildProcess
    private let condition = NSCondition()
    private var queue: [Message] = []
    private var ended = false
    private var errorTail: [String] = []
    private var lineNumber = 0

    init(command: [String], environment: [String: String]) throws {
        guard let executable = command.first else { throw ReplicaError(.invalidConfiguration, "the plugin command is empty") }
        do {
            process = try ChildProcess(executable.contains("/") ? command : ["/usr/bin/env"] + command,
                                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                       standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
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
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                condition.lock()
                lineNumber += 1
                queue.append(.line(lineNumber, line))
                condition.signal()
                condition.unlock()
            }
        }
        let ending = process.waitUntilExit()
        let status = ending.wasSignaled ? "was killed by signal \(ending.status)" : "exited with status \(ending.status)"
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

    /// The next message, waiting at most `timeout` seconds.
    func next(timeout: Double) -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if !condition.wait(until: deadline) { return queue.isEmpty ? .timeout : queue.removeFirst() }
        }
        return queue.removeFirst()
    }

    /// The last lines the plugin wrote to its standard error.
    var lastErrors: String {
        condition.lock()
        defer { condition.unlock() }
        return errorTail.joined(separator: " | ")
    }

    /// Sends one message; `false` when the plugin no longer reads.
    @discardableResult
    func send(_ message: JSON) -> Bool {
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

    /// Asks the plugin to stop, then ends it: SIGTERM after `grace` seconds, SIGKILL one second later.
    func stop(grace: Double = 2) {
        send(.object([("type", "stop")]))
        try? process.standardInput?.close()
        if process.wait(timeout: grace) != nil { return }
        process.signal(SIGTERM)
        if process.wait(timeout: 1) != nil { return }
        process.signal(SIGKILL)
    }

    /// Kills the plugin at once.
    func kill() {
        process.signal(SIGKILL)
        try? process.standardInput?.close()
    }
}
