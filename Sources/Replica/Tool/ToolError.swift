import Foundation

/// A mistake in the model's arguments: said back to it in a sentence that says what to fix.
struct ToolError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Dates as models write them: ISO 8601, or `now`, `today`, `yesterday`, `-7d` (days ago), `-12h`.
enum ToolDates {
    static func parse(_ text: String) -> Date? { parse(text, now: Date()) }

    static func parse(_ text: String, now: Date) -> Date? {
        if let date = ISO8601.date(from: text) { return date }
        let day: TimeInterval = 86_400
        let startOfToday = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / day).rounded(.down) * day)
        switch text.lowercased() {
        case "now": return now
        case "today": return startOfToday
        case "yesterday": return startOfToday.addingTimeInterval(-day)
        case "tomorrow": return startOfToday.addingTimeInterval(day)
        default: break
        }
        guard text.hasPrefix("-"), let unit = text.last, let amount = Double(text.dropFirst().dropLast()) else {
            return nil
        }
        switch unit {
        case "d": return now.addingTimeInterval(-amount * day)
        case "h": return now.addingTimeInterval(-amount * 3600)
        case "w": return now.addingTimeInterval(-amount * 7 * day)
        default: return nil
        }
    }
}
