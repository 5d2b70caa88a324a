import Foundation
import Synchronization

/// Starts child processes one at a time.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3) is not safe to call from several threads at
/// once: about one test run in four crashed inside it (a `memcpy` in `Process.run`) when tests
/// started processes in parallel. Everything in replica, its plugins and its tests that starts a
/// process goes through here.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// Runs `process.run()` while no other process is being started.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
