/// How a transaction that PostgreSQL rolled back for a serialization failure or a deadlock is tried
/// again: how many attempts in all, and how long to wait before each new one (doubling from
/// ``firstDelay`` up to ``maximumDelay``, scaled by a random jitter so that two conflicting clients do
/// not collide again in step).
///
/// A plain value with no clock: ``delay(afterFailedAttempt:jitter:)`` says what to do, the connection waits.
///
/// For example:
/// ```swift
/// let retry = TransactionRetry(attempts: 3)
/// let first = retry.delay(afterFailedAttempt: 1, jitter: 1)   // 5 ms
/// let last = retry.delay(afterFailedAttempt: 3, jitter: 1)    // nil: give up and report the failure
/// ```
public struct TransactionRetry: Sendable, Equatable {
    /// How many times the transaction runs at most, the first time included; 1 means no retry.
    public var attempts: Int
    /// The wait before the second attempt, at full jitter.
    public var firstDelay: Duration
    /// The longest wait before any attempt, at full jitter.
    public var maximumDelay: Duration

    /// Makes a retry policy.
    ///
    /// - Parameters:
    ///   - attempts: The most times the transaction runs, the first included.
    ///   - firstDelay: The wait before the second attempt, at full jitter.
    ///   - maximumDelay: The longest wait, at full jitter.
    public init(attempts: Int = 5, firstDelay: Duration = .milliseconds(5), maximumDelay: Duration = .milliseconds(200))
    {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    /// How long to wait before the next attempt once attempt number `attempt` (1 for the first) failed,
    /// or `nil` when that was the last attempt allowed.
    ///
    /// - Parameters:
    ///   - attempt: The number of the attempt that failed, from 1.
    ///   - jitter: A random number in 0...1; the wait is between half and all of the doubled delay.
    /// - Returns: The wait, or `nil` to give up.
    public func delay(afterFailedAttempt attempt: Int, jitter: Double) -> Duration? {
        guard attempt >= 1, attempt < attempts else { return nil }
        var delay = firstDelay
        for _ in 1..<attempt where delay < maximumDelay { delay *= 2 }
        return min(delay, maximumDelay) * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}
