import Foundation

/// Waits for a condition that something else (a watcher, a child process) makes true.
///
/// The condition is checked every few milliseconds until it holds or `timeout` seconds pass; the call
/// returns whether it held. This waits on an outcome with a deadline, not for a fixed time.
public func eventually(timeout: TimeInterval = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
