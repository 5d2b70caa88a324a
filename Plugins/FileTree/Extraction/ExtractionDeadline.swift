/// The error that abandons an extraction which ran past its time limit.
///
/// Thrown (with typed throws) by every loop that scales with input size; `TextExtractor` turns it
/// into a skipped result.
struct ExtractionTimeout: Error, Equatable {}

/// A point in monotonic time after which extraction is abandoned.
///
/// Loops call `check(at:)` with their current position; the clock is read only once every
/// `stride` bytes so that checking costs next to nothing, and always on the first call so that
/// even a short pass notices an already expired deadline.
struct ExtractionDeadline: Sendable {
    /// How many input bytes a loop may process between two clock readings.
    static let stride = 1 << 15

    private let end: ContinuousClock.Instant?
    private let expired: Bool

    /// A deadline `seconds` from now.
    ///
    /// Zero or negative seconds expire at once; NaN, infinity or absurdly large values mean no
    /// deadline at all.
    init(seconds: Double) {
        if seconds.isNaN || seconds > 1e9 {
            end = nil
            expired = false
        } else if seconds <= 0 {
            end = nil
            expired = true
        } else {
            end = ContinuousClock.now.advanced(by: .nanoseconds(Int64(seconds * 1e9)))
            expired = false
        }
    }

    /// A deadline that never expires, for callers that do not need one (e.g. short header text).
    static var unlimited: ExtractionDeadline { ExtractionDeadline(seconds: .infinity) }

    /// Throws when the deadline has passed.
    func check() throws(ExtractionTimeout) {
        if expired { throw ExtractionTimeout() }
        if let end, ContinuousClock.now >= end { throw ExtractionTimeout() }
    }
}

/// Tracks when a loop should next read the clock.
///
/// Use one per loop: `try ticker.tick(position, deadline)` reads the clock on the first call and
/// then again whenever the position has moved at least `ExtractionDeadline.stride` bytes on.
struct ExtractionTicker {
    private var next = Int.min

    /// Checks the deadline if `position` has advanced far enough since the last check.
    @inline(__always)
    mutating func tick(_ position: Int, _ deadline: ExtractionDeadline) throws(ExtractionTimeout) {
        if position >= next {
            next = position &+ ExtractionDeadline.stride
            try deadline.check()
        }
    }
}
