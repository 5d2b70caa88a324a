public import Foundation
import ReplicaCore

/// A date in a query string, as Spotlight's `$time` family writes it, worked out when the query runs.
///
/// - `$time.now`, `$time.now(N)`: now, or N seconds from now (N may be negative).
/// - `$time.today`, `$time.today(N)`: the start of today, or of the day N days away;
///   `$time.yesterday` and `$time.tomorrow` are `$time.today(-1)` and `$time.today(1)`.
/// - `$time.this_week(N)`, `$time.this_month(N)`, `$time.this_year(N)`: the start of this week, month or
///   year, or of the one N away; `$time.next_week`, `$time.next_month` and `$time.next_year` are N = 1.
/// - `$time.iso(2026-11-20T10:00:00Z)`: that instant (in quotes or not; a time without a zone is UTC).
///
/// Days, weeks, months and years begin at midnight in the query's time zone (`SearchQuery.timeZone`),
/// and weeks on that calendar's first weekday.
public struct TimeExpression: Hashable, Sendable, CustomStringConvertible {
    /// What the expression counts from.
    public enum Anchor: String, Hashable, Sendable, CaseIterable {
        /// `$time.now`: the moment the query runs; offsets count seconds.
        case now
        /// `$time.today`: the start of today; offsets count days.
        case today
        /// `$time.this_week`: the start of this week; offsets count weeks.
        case thisWeek = "this_week"
        /// `$time.this_month`: the start of this month; offsets count months.
        case thisMonth = "this_month"
        /// `$time.this_year`: the start of this year; offsets count years.
        case thisYear = "this_year"
    }

    /// What the expression stands for: a moment relative to now, or a fixed instant.
    public enum Value: Hashable, Sendable {
        /// A moment relative to now: the anchor moved by `offset` of its units (seconds for `now`).
        case relative(Anchor, offset: Int)
        /// A fixed instant.
        case instant(Date)
    }

    /// What the expression stands for.
    public var value: Value

    /// Creates a relative expression: `anchor` moved by `offset` of its units (seconds for `now`).
    public init(_ anchor: Anchor, offset: Int = 0) { value = .relative(anchor, offset: offset) }
    /// Creates an expression for a fixed instant.
    public init(instant: Date) { value = .instant(instant) }

    /// The names a query string may use after `$time.`, each with its anchor and the offset it implies.
    static let names: [String: (Anchor, Int)] = [
        "now": (.now, 0), "today": (.today, 0), "yesterday": (.today, -1), "tomorrow": (.today, 1),
        "this_week": (.thisWeek, 0), "next_week": (.thisWeek, 1), "this_month": (.thisMonth, 0),
        "next_month": (.thisMonth, 1), "this_year": (.thisYear, 0), "next_year": (.thisYear, 1),
    ]

    /// The date the expression stands for at `now`, in `timeZone`.
    public func date(now: Date, timeZone: TimeZone) -> Date {
        switch value {
        case .instant(let date):
            return date
        case .relative(.now, let offset):
            return now.addingTimeInterval(TimeInterval(offset))
        case .relative(let anchor, let offset):
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let unit: Calendar.Component =
                switch anchor {
                case .today, .now: .day
                case .thisWeek: .weekOfYear
                case .thisMonth: .month
                case .thisYear: .year
                }
            let start = calendar.dateInterval(of: unit, for: now)?.start ?? calendar.startOfDay(for: now)
            return calendar.date(byAdding: unit, value: offset, to: start) ?? start
        }
    }

    /// The expression as a query string writes it, such as `$time.today(-7)` or `$time.iso(…)`.
    public var description: String {
        switch value {
        case .instant(let date):
            return "$time.iso(\(ISO8601.string(from: date)))"
        case .relative(let anchor, let offset):
            return "$time.\(anchor.rawValue)" + (offset == 0 ? "" : "(\(offset))")
        }
    }
}
