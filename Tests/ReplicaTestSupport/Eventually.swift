public import Foundation

/// Waits for a condition that something else (a watcher, a child process) makes true.
///
/// The condition is checked every few milliseconds until it holds or `timeout` seconds pass; the call
/// returns whether it held. This waits on an outcome with a deadline, not for a fixed time: a condition
/// that holds returns at once whatever the deadline.
///
/// The default deadline, 1,800 s, outlasts the whole suite's run on purpose (its tests took 1,469 s in
/// a clean clone's CI run of 2026-12-07). Every test starts at once and shares the machine's two cores
/// with the others, their child processes and PostgreSQL; and Swift Testing runs a synchronous test on a
/// thread of the cooperative pool, which has one thread per core, so while two synchronous tests run (the
/// command-line suites wait for processes) the work a condition waits for in this process (a watcher's
/// first pass, a plugin's restart) may not run at all. A deadline shorter than the run failed watcher
/// tests whenever the machine was busy, though nothing was wrong with the watcher: a 10-run repeat saw a
/// watcher's first pass take 60 s, then 120 s; a watched plugin's catch-up of 40 items, 5 s alone, took
/// about 170 s beside the command-line suites, about 500 s in a full CI run, and over 600 s, the
/// deadline then, in the next.
public func eventually(timeout: TimeInterval = 1800, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try await condition() { return true }
        // A cancelled test (its time limit passed) stops here: its sleeps would no longer wait, and the
        // loop would hold a thread of the pool every other test needs until the deadline.
        if Date() >= deadline || Task.isCancelled { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
}
