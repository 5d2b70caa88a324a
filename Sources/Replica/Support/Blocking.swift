import Dispatch

/// Runs blocking work (SQLite, file I/O) on a Dispatch queue and awaits it, so that it never holds one of
/// the few threads of Swift's cooperative pool.
enum Blocking {
    private static let queue = DispatchQueue(label: "replica.blocking", qos: .utility, attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
