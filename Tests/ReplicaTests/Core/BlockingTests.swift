import Foundation
import ReplicaTestSupport
import Synchronization
import Testing

@testable import ReplicaCore

/// Blocking work awaited off the cooperative pool, and given up when its task is cancelled.
struct BlockingTests {
    @Test func workFinishedBeforeCancellationIsReturned() async throws {
        #expect(try await Blocking.runAbandoningOnCancellation { 6 * 7 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await Blocking.runAbandoningOnCancellation { () throws -> Int in throw Failure() }
        }
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

    /// Work that gives way runs at a lower priority than the thread that asked for it (a nice value 10
    /// higher); a pipeline with chunks prepared several at once hands every chunk to its body once, in
    /// order, its first made ready on the calling thread when asked.
    @Test func backgroundWorkGivesWayAndAPipelineKeepsItsOrder() throws {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let own = getpriority(which, 0)
        #expect(try Prefetch(givingWay: true) { getpriority(which, 0) }.get() == min(own + 10, 19))
        for givingWay in [false, true] {
            for ahead in [1, 3] {
                var seen: [Int] = []
                try Prefetch.pipelined(
                    Array(0..<1_000), chunkSize: 64, ahead: ahead, givingWay: givingWay,
                    prepare: { chunk in chunk.map { $0 * 2 } }
                ) { chunk, doubled in
                    #expect(doubled == chunk.map { $0 * 2 })
                    seen += chunk
                }
                #expect(seen == Array(0..<1_000), "ahead \(ahead), giving way: \(givingWay)")
            }
        }
        // The first chunk made ready on the calling thread, the others elsewhere, each once, in order: with
        // many chunks, none, one, and fewer than are asked for ahead.
        let caller = pthread_self()
        for (count, ahead) in [(1_000, 1), (1_000, 3), (0, 2), (50, 2), (150, 5)] {
            var madeHere: [Int] = []
            let madeElsewhere = Mutex<[Int]>([])
            var seen: [Int] = []
            try Prefetch.pipelined(
                Array(0..<count), chunkSize: 64, ahead: ahead,
                prepareFirstHere: { chunk in
                    #expect(pthread_equal(pthread_self(), caller) != 0)
                    madeHere.append(chunk.startIndex)
                    return chunk.map { $0 * 2 }
                },
                prepare: { chunk in
                    madeElsewhere.withLock { $0.append(chunk.startIndex) }
                    return chunk.map { $0 * 2 }
                }
            ) { chunk, doubled in
                #expect(doubled == chunk.map { $0 * 2 })
                seen += chunk
            }
            #expect(madeHere == (count > 0 ? [0] : []), "\(count) items, ahead \(ahead)")
            #expect(madeElsewhere.withLock { $0.sorted() } == Array(stride(from: 64, to: count, by: 64)))
            #expect(seen == Array(0..<count), "\(count) items, ahead \(ahead)")
        }
    }
}
