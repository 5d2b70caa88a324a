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

    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()
    private let condition = NSCondition()
    private var queue: [Message] = []
    private var ended = false
    private var errorTail: [String] = []
    private var lineNumber = 0

    init(command: [String], environment: [String: String]) throws {
        guard let executable = command.first else { throw ReplicaError(.invalidConfiguration, "the plugin command is empty") }
        if executable.contains("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = Array(command.dropFirst())
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do {
            try ProcessLaunch.run(process)
        } catch {
            throw ReplicaError(.invalidConfiguration, "the plugin \(executable) cannot be started: \(error.localizedDescription)")
        }
        let outputHandle = output.fileHandleForReading
        let errorHandle = errors.fileHandleForReading
        Thread.detachNewThread { [self] in readLines(outputHandle) }
        Thread.detachNewThread { [self] in readErrors(errorHandle) }
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    var processIdentifier: Int32 { process.processIdentifier }

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
        process.waitUntilExit()
        let status = process.terminationReason == .uncaughtSignal
            ? "was killed by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
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
            try input.fileHandleForWriting.write(contentsOf: data)
            return true
        } catch {
            return false
        }
    }

    /// Asks the plugin to stop, then ends it: SIGTERM after `grace` seconds, SIGKILL one second later.
    func stop(grace: Double = 2) {
        send(.object([("type", "stop")]))
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        let last = Date().addingTimeInterval(1)
        while process.isRunning && Date() < last { usleep(10_000) }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Kills the plugin at once.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        try? input.fileHandleForWriting.close()
    }
}
