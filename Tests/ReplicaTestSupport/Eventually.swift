import Foundation

/// Waits for a condition that something else (a watcher, a child process) makes true.
///
/// The condition is checked every few milliseconds until it holds or `timeout` seconds pass; the call
/// returns whether it held. This waits on an outcome with a deadline, not for a fixed time. The default
/// deadline is generous: on two cores, the suite's heavier tests (strace kill trials, the embedding
/// model's matrix products, a PostgreSQL server starting) can hold the machine for seconds at a time,
/// and a condition that holds returns at once whatever the deadline. 120 s, like the waits for child
/// processes: a 10-run repeat once saw a git watcher's first pass take more than 60 s in the first
/// minute of a run, when every suite starts at once, and then finish.
public func eventually(timeout: TimeInterval = 120, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        if Date() >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
