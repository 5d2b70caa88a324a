import Foundation
import Replica
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A failure that ends a command, with the exit status it means.
struct CLIError: Error {
    /// 1: the work failed; 2: the command line was wrong.
    var status: Int32
    var message: String
    /// Printed after the message, such as where to find help.
    var hint: String?

    static func usage(_ message: String, hint: String? = nil) -> CLIError {
        CLIError(status: 2, message: message, hint: hint)
    }

    static func failure(_ message: String) -> CLIError {
        CLIError(status: 1, message: message)
    }

    /// Ends with `status` and prints nothing more (the command has said what went wrong).
    static func quiet(status: Int32) -> CLIError {
        CLIError(status: status, message: "")
    }
}

/// Where a command writes: results to standard output, everything else to standard error.
enum Output {
    /// Writes text replica made (help, JSON, tool output that escaped what it quotes) as it is.
    static func print(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes one line for a person that holds text from outside (titles, identifiers, file names,
    /// reasons): control characters and line separators in it are shown as escapes, never acted on.
    static func line(_ text: String) {
        print(DisplayText.oneLine(text))
    }

    static func printJSON(_ value: JSON) {
        print(value.serialized())
    }

    static func error(_ text: String) {
        Progress.clear()
        write("replica: error: \(DisplayText.oneLine(text))\n", to: STDERR_FILENO)
    }

    static func note(_ text: String) {
        Progress.clear()
        write("replica: \(DisplayText.oneLine(text))\n", to: STDERR_FILENO)
    }

    static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// A one-line progress report on standard error, redrawn in place; silent when standard error is
/// not a terminal, so logs and pipes stay clean.
enum Progress {
    private struct State {
        var shown = false
        var lastDraw = 0.0
    }

    private static let state = Mutex(State())

    /// Redraws the line, at most ten times a second; with `immediately` (the first line of a new piece
    /// of work, which may then run for seconds without another), at once.
    static func update(_ text: @autoclosure () -> String, immediately: Bool = false) {
        guard Output.standardErrorIsTerminal else { return }
        let now = Date().timeIntervalSince1970
        let due = state.withLock { state -> Bool in
            guard immediately || now - state.lastDraw >= 0.1 else { return false }
            state.lastDraw = now
            state.shown = true
            return true
        }
        if due { Output.write("\r\u{1B}[2K" + text(), to: STDERR_FILENO) }
    }

    /// Erases the line, if one is shown.
    static func clear() {
        let shown = state.withLock { state -> Bool in
            defer { state.shown = false }
            return state.shown
        }
        if shown { Output.write("\r\u{1B}[2K", to: STDERR_FILENO) }
    }
}
