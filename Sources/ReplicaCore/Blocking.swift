import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking work (SQLite, file I/O, a `poll`) on a Dispatch queue and awaits it, so that it never
/// holds one of the few threads of Swift's cooperative pool.
///
/// For example:
/// ```swift
/// let hostname = try await Blocking.run { try String(contentsOfFile: "/etc/hostname", encoding: .utf8) }
/// ```
public enum Blocking {
    private static let queue = DispatchQueue(label: "replica.blocking", qos: .utility, attributes: .concurrent)

    /// Runs `body` on a concurrent utility-priority Dispatch queue and returns its result once it finishes.
    ///
    /// - Parameter body: The blocking work.
    /// - Returns: What `body` returns.
    /// - Throws: Whatever `body` throws.
    public static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs `body` as ``run(_:)`` does, but stops waiting for it when the task is cancelled: the call
    /// then throws `CancellationError` at once, and `body` finishes (or not) on its own thread with its
    /// result dropped. For work whose result is worth nothing after cancellation and that may take long
    /// or never end: loading and running the embedding model (a model file on a hung network mount),
    /// which a stopping `replica watch` must not wait for.
    ///
    /// `body` must not hold anything the rest of the process waits on, since it may outlive the caller.
    ///
    /// For example:
    /// ```swift
    /// let vector = try await Blocking.runAbandoningOnCancellation { [3, 4].map { Float($0) / 5 } }
    /// ```
    ///
    /// - Parameter body: The blocking work.
    /// - Returns: What `body` returns, if it finishes before the task is cancelled.
    /// - Throws: `CancellationError` when the task is (or was already) cancelled first; otherwise
    ///   whatever `body` throws.
    public static func runAbandoningOnCancellation<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws
        -> T
    {
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard waiter.wait(with: continuation) else { return }
                queue.async { waiter.finish(with: Result { try body() }) }
            }
        } onCancel: {
            waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// A continuation resumed once, by whichever comes first: the work's result or the cancellation.
    private final class Waiter<T: Sendable>: Sendable {
        private enum State {
            case waiting
            case resumable(CheckedContinuation<T, any Error>)
            case finished
        }
        private let state = Mutex<State>(.waiting)

        /// Keeps the continuation, or resumes it with `CancellationError` (returning false) when the
        /// cancellation came first.
        func wait(with continuation: CheckedContinuation<T, any Error>) -> Bool {
            let cancelledAlready = state.withLock { state in
                if case .finished = state { return true }
                state = .resumable(continuation)
                return false
            }
            if cancelledAlready { continuation.resume(throwing: CancellationError()) }
            return !cancelledAlready
        }

        /// Resumes the continuation with `result` unless it was resumed already.
        func finish(with result: Result<T, any Error>) {
            let continuation = state.withLock { state -> CheckedContinuation<T, any Error>? in
                defer { state = .finished }
                if case .resumable(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(with: result)
        }
    }
}

/// Work started on another thread now, whose result is collected later with `get()`.
package final class Prefetch<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<Value, any Error>?>(nil)

    /// Starts `work`. Background work that must not slow a search (a remake's analysis, which may take
    /// every core) runs `givingWay`: on a thread of its own whose nice value is 10 above its starter's
    /// (on Linux the nice value is the thread's), so it gives way to the process's other threads and to
    /// other processes; not on Dispatch's threads, since an unprivileged thread cannot take its priority
    /// back.
    package init(givingWay: Bool = false, _ work: @escaping @Sendable () throws -> Value) {
        let run: @Sendable () -> Void = { [self] in
            let value = Result { try work() }
            result.withLock { $0 = value }
            done.signal()
        }
        guard givingWay else {
            DispatchQueue.global(qos: .userInitiated).async(execute: run)
            return
        }
        Thread {
            #if canImport(Glibc)
            // Ten below the thread that started it, whose nice value a new thread starts with.
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            _ = setpriority(which, 0, min(19, getpriority(which, 0) + 10))
            #endif
            run()
        }.start()
    }

    /// The result; waits for it. Call once.
    package func get() throws -> Value {
        done.wait()
        return try result.withLock { $0! }.get()
    }
}

/// How many items a pipelined load (``Prefetch/pipelined(_:chunkSize:ahead:givingWay:prepareFirstHere:prepare:_:)``)
/// prepares together.
package enum LoadChunks {
    /// At most `limit`, and at least eight chunks (of 16 items or more), so that the writer does not wait
    /// for a whole first chunk's preparation: a file tree's transaction of a few hundred large files was
    /// one or two chunks of 512, prepared while the writer waited.
    package static func size(for count: Int, atMost limit: Int) -> Int {
        min(limit, max(16, count / 8))
    }
}

extension Prefetch {
    /// Works through `items` a chunk at a time on two cores or more: `prepare` makes the next `ahead`
    /// chunks ready on other threads, each at once, ahead of `body`, which gets each chunk with what was
    /// made of it, in order, on the calling thread (a bulk load's pure work, such as its rows' language
    /// and words, off the writer's path). One chunk ahead suits a `body` that keeps a core busy itself;
    /// two, such a `body` given a few chunks of uneven cost (a chunk dearer than the one before it keeps
    /// it waiting otherwise); more suit one that mostly waits (for a database server, say). Background
    /// work gives way (``init(givingWay:_:)``). With `prepareFirstHere`, the calling thread makes the first
    /// chunk ready itself, while the other threads start on the next ones, instead of waiting for it.
    package static func pipelined<Item: Sendable>(
        _ items: [Item], chunkSize: Int, ahead: Int = 1, givingWay: Bool = false,
        prepareFirstHere: ((ArraySlice<Item>) -> Value)? = nil,
        prepare: @escaping @Sendable (ArraySlice<Item>) -> Value,
        _ body: (ArraySlice<Item>, Value) throws -> Void
    ) throws {
        let chunks = stride(from: 0, to: items.count, by: chunkSize).map {
            items[$0..<min($0 + chunkSize, items.count)]
        }
        let start = { (chunk: ArraySlice<Item>) in Prefetch(givingWay: givingWay) { prepare(chunk) } }
        var started = chunks.dropFirst(prepareFirstHere == nil ? 0 : 1).prefix(max(1, ahead)).map(start)
        for index in chunks.indices {
            let current: Value
            if index == 0, let prepareFirstHere {
                current = prepareFirstHere(chunks[index])
            } else {
                current = try started.removeFirst().get()
                let upcoming = index + started.count + 1
                if upcoming < chunks.count { started.append(start(chunks[upcoming])) }
            }
            try body(chunks[index], current)
        }
    }
}
