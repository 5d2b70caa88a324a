import Dispatch

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
}

/// Work started on another thread now, whose result is collected later with `get()`.
package final class Prefetch<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<Value, any Error>?

    package init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            result = Result { try work() }
            done.signal()
        }
    }

    /// The result; waits for it. Call once.
    package func get() throws -> Value {
        done.wait()
        return try result!.get()
    }
}
