public import Foundation

/// When to try a failed piece of work again: doubling delays from `initial` up to `maximum`.
///
/// A plain value, tested without time: the caller keeps the attempt count and asks for the next date.
///
/// For example:
/// ```swift
/// let backoff = Backoff(initial: 1, maximum: 3600)
/// backoff.delay(afterFailures: 1)   // 1 s
/// backoff.delay(afterFailures: 4)   // 8 s
/// ```
public struct Backoff: Sendable, Equatable {
    /// The wait after the first failure, in seconds.
    public var initial: TimeInterval
    /// The longest wait, in seconds.
    public var maximum: TimeInterval

    /// Creates a back-off that doubles from `initial` up to `maximum`.
    ///
    /// - Precondition: `initial` is positive and `maximum` is at least `initial`.
    public init(initial: TimeInterval = 1, maximum: TimeInterval = 3600) {
        precondition(initial > 0 && maximum >= initial)
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (1 for the first).
    public func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        let exponent = min(failures - 1, 62)
        return min(maximum, initial * pow(2, Double(exponent)))
    }

    /// The date of the next attempt after `failures` failures, the last one at `now`.
    public func nextAttempt(afterFailures failures: Int, now: Date) -> Date {
        now.addingTimeInterval(delay(afterFailures: failures))
    }
}
