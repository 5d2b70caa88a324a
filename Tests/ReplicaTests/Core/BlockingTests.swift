import Foundation
import Synchronization
import Testing
import ReplicaCore
import ReplicaTestSupport

/// Blocking work awaited off the cooperative pool, and given up when its task is cancelled.
struct BlockingTests {
    @Test func workFinishedBeforeCancellationIsReturned() async throws {
        #expect(try await Blocking.runAbandoningOnCancellation { 6 * 7 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await Blocking.runAbandoningOnCancellation { () throws -> Int in throw Failure() } }
    }

    /// A task cancelled before the call never starts the work.
    @Test func workOfAnAlreadyCancelledTaskIsNotStarted() async throws {
        let started = Mutex(false)
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await Blocking.runAbandoningOnCancellation { started.withLock { $0 = true } }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!started.withLock { $0 })
    }

    /// Work still running when its task is cancelled is left to finish on its own; the caller goes on.
    @Test func workRunningAtCancellationIsAbandoned() async throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = Mutex(false)
        let task = Task {
            try await Blocking.runAbandoningOnCancellation {
                entered.signal()
                release.wait()
                finished.withLock { $0 = true }
            }
        }
        try await Blocking.run { entered.wait() }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!finished.withLock { $0 }, "the caller went on while the work was still blocked")
        release.signal()
        #expect(await eventually { finished.withLock { $0 } }, "the abandoned work finishes on its own thread")
    }

    /// Work that blocks for long never makes other work wait: 64 pieces that each wait for all the others
    /// to have started all start. (On Dispatch's shared pool they took turns behind the few threads it
    /// had, and so did every SQLite connection's queue: tests of the full suite timed out.)
    @Test func blockedWorkNeverKeepsOtherWorkWaiting() async throws {
        final class Counter: Sendable { let value = Mutex(0) }
        let count = 64
        let counter = Counter()
        let release = DispatchSemaphore(value: 0)
        let all = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask { try await Blocking.run { counter.value.withLock { $0 += 1 }; release.wait() } }
                }
                try await group.waitForAll()
            }
        }
        let allStarted = await eventually(timeout: 120) { counter.value.withLock { $0 } == count }
        for _ in 0..<count { release.signal() }
        try await all.value
        #expect(allStarted, "\(counter.value.withLock { $0 }) of \(count) started")
    }
}
