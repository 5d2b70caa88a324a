import Foundation
import Synchronization

struct TimeoutError: Error {}

/// Runs `operation`, giving up after `timeout`: the operation is then cancelled and its result ignored,
/// and this returns at once even when the operation does not notice the cancellation (blocking I/O).
func withTimeout<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> T) async
    -> Result<T, any Error>
{
    let pending = Pending<Result<T, any Error>>()
    var tasks: [Task<Void, Never>] = []
    let outcome = await withCheckedContinuation { continuation in
        pending.set(continuation)
        tasks = [
            Task { pending.resume(await Result(catching: operation)) },
            Task {
                try? await Task.sleep(for: timeout)
                pending.resume(.failure(TimeoutError()))
            },
        ]
    }
    for task in tasks { task.cancel() }
    return outcome
}

/// A continuation resumed by whichever of several racers gets there first.
private final class Pending<Value: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<Value, Never>?>(nil)

    func set(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
