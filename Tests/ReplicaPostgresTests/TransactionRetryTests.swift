import ReplicaPostgres
import Testing

/// The back-off between a transaction's attempts, as values: no server, no clock.
struct TransactionRetryTests {
    @Test func theDelayDoublesUpToItsMaximumThenGivesUp() {
        let retry = TransactionRetry(attempts: 6, firstDelay: .milliseconds(10), maximumDelay: .milliseconds(50))
        let delays = (1...6).map { retry.delay(afterFailedAttempt: $0, jitter: 1) }
        #expect(
            delays == [
                .milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(50), .milliseconds(50), nil,
            ])
    }

    @Test func jitterScalesBetweenHalfAndAll() {
        let retry = TransactionRetry(attempts: 3, firstDelay: .milliseconds(10))
        #expect(retry.delay(afterFailedAttempt: 2, jitter: 0) == .milliseconds(10))
        #expect(retry.delay(afterFailedAttempt: 2, jitter: 0.5) == .milliseconds(15))
        #expect(retry.delay(afterFailedAttempt: 2, jitter: 7) == .milliseconds(20), "out-of-range jitter is clamped")
    }

    @Test func oneAttemptMeansNoRetry() {
        #expect(TransactionRetry(attempts: 1).delay(afterFailedAttempt: 1, jitter: 1) == nil)
        #expect(TransactionRetry().delay(afterFailedAttempt: 0, jitter: 1) == nil)
    }
}
