/// Long-running work a host keeps going until it is told to stop: following sources, applying record
/// stores' changes, sweeping, embedding, enriching.
///
/// A service works until its task is cancelled, then finishes what it has in flight (commits a batch,
/// applies a last catch-up) and returns. It reports its own passing failures and retries them; throwing
/// from `run()` means it cannot go on, and a ``ServiceGroup`` then stops the others.
///
/// For example, a service that sweeps expired items once a minute:
/// ```swift
/// struct Sweeper: Service {
///     let store: Store
///     var name: String { "sweep" }
///
///     func run() async throws {
///         while !Task.isCancelled {
///             try? await Task.sleep(for: .seconds(60))
///             _ = try? await store.sweep()
///         }
///     }
/// }
/// ```
public protocol Service: Sendable {
    /// What the group's events and errors call the service: a few lowercase words.
    var name: String { get }

    /// Does the service's work until the task is cancelled, then finishes what is in flight and returns.
    ///
    /// - Throws: An error when the service cannot go on; a ``ServiceGroup`` then stops the other services
    ///   and throws it.
    func run() async throws
}
