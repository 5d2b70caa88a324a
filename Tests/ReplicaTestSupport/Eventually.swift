import Foundation

/// Waits for a condition that something else (a watcher, a child process) makes true.
///
/// The condition is checked every few milliseconds until it holds or `timeout` seconds pass; the call
/// returns whether it held. This waits on an outcome with a deadline, not for a fixed time. The default
/// deadline is generous: on two cores, the suite's heavier tests (strace kill trials, the embedding
/// model's matrix products) can hold the machine for seconds at a time, and a condition that holds
/// returns at once whatever the deadline.
public func eventually(timeout: TimeInterval = 60, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
