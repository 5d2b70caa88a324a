import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Named places where a crash test may kill the process, to prove that work is all-or-nothing.
///
/// Off unless the environment variable `REPLICA_TEST_CRASH` is set (tests set it on a child process):
/// `REPLICA_TEST_CRASH=<point>:<n>` kills the process with SIGKILL at the n-th time a point with that
/// name is reached, and `*:<n>` at the n-th point of any name. Nothing is flushed or cleaned up first:
/// it is as abrupt as a power cut for the process (the kernel still writes what SQLite handed it).
/// When the variable is not set, reaching a point costs one load of a constant.
public enum CrashPoints {
    private struct Plan {
        var name: String
        var remaining: Int
        var reached = 0
    }

    private static let plan: Mutex<Plan?> = {
        guard let value = ProcessInfo.processInfo.environment["REPLICA_TEST_CRASH"],
            let colon = value.lastIndex(of: ":"),
            let count = Int(value[value.index(after: colon)...]), count > 0
        else { return Mutex(nil) }
        return Mutex(Plan(name: String(value[..<colon]), remaining: count))
    }()

    /// Whether a crash plan is set; read once.
    public static let isArmed = ProcessInfo.processInfo.environment["REPLICA_TEST_CRASH"] != nil

    /// How many points matching the plan this process has reached (for tests that pick a point at random).
    public static var reachedCount: Int { plan.withLock { $0?.reached ?? 0 } }

    /// Marks a point where a crash must leave consistent state behind.
    package static func reach(_ name: StaticString) {
        guard isArmed else { return }
        let fire = plan.withLock { plan -> Bool in
            guard var current = plan, current.name == "*" || current.name == name.description else { return false }
            current.remaining -= 1
            current.reached += 1
            plan = current
            return current.remaining == 0
        }
        if fire { kill(getpid(), SIGKILL) }
    }
}
