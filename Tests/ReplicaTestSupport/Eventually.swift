public import Foundation

/// Waits for a condition that something else (a watcher, a child process) makes true.
///
/// The condition is checked every few milliseconds until it holds or `timeout` seconds pass; the call
/// returns whether it held. This waits on an outcome with a deadline, not for a fixed time: a condition
/// that holds returns at once whatever the deadline.
///
/// The default deadline, 600 s, outlasts the whole suite's run (about 300 s here) on purpose. Swift
/// Testing runs a synchronous test on a thread of the cooperative pool, which has one thread per core
/// (two here), and every test's first step is queued at the start: until the synchronous tests queued
/// before it (the command-line suites wait for processes) have run to their end, the work a condition
/// waits for in this process (a watcher's first pass, a plugin's restart) may not run at all. A deadline
/// shorter than that wait failed watcher tests whenever the machine was busy (a 10-run repeat saw a
/// watcher's first pass take 60 s, then 120 s), though nothing was wrong with the watcher.
public func eventually(timeout: TimeInterval = 600, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        // A cancelled test (its time limit passed) stops here: its sleeps would no longer wait, and the
        // loop would hold a thread of the pool every other test needs until the deadline.
        if Date() >= deadline || Task.isCancelled { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
