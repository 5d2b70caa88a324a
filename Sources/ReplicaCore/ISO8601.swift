public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes ISO 8601 dates the way replica's inputs and outputs use them.
///
/// Accepted: `2026-11-20`, `2026-11-20T10:00`, `2026-11-20T10:00:00`, with optional fractional
/// seconds, and a zone of `Z`, `+01:00`, `+0100` or `+01`. A time without a zone is taken as UTC, so the
/// same text means the same instant on every machine. Written: `2026-11-20T10:00:00Z` (with
/// milliseconds only when there are some).
public enum ISO8601 {
    /// Parses `text`, or returns `nil` when it is not an ISO 8601 date.
    public static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take("-"), let month = scanner.digits(2), scanner.take("-"),
            let day = scanner.digits(2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var fraction = 0.0
        var offset = 0
        if scanner.take("T") || scanner.take("t") || scanner.take(" ") {
            guard let h = scanner.digits(2), scanner.take(":"), let m = scanner.digits(2), h < 24, m < 60 else {
                return nil
            }
            hour = h
            minute = m
            if scanner.take(":") {
                guard let s = scanner.digits(2), s <= 60 else { return nil }
                second = s
                if scanner.take(".") || scanner.take(",") {
                    var scale = 0.1
                    var any = false
                    while let digit = scanner.digits(1) {
                        fraction += Double(digit) * scale
                        scale /= 10
                        any = true
                    }
                    guard any else { return nil }
                }
            }
            if scanner.take("Z") || scanner.take("z") {
                offset = 0
            } else if let sign = scanner.sign() {
                guard let oh = scanner.digits(2), oh <= 23 else { return nil }
                var om = 0
                if scanner.take(":") {
                    guard let value = scanner.digits(2) else { return nil }
                    om = value
                } else if let value = scanner.digits(2) {
                    om = value
                }
                guard om < 60 else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard scanner.atEnd else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalizes 31 February into March; refuse dates that did not survive the round trip.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }

    /// Formats `date` in UTC, as `2026-11-20T10:00:00Z`.
    public static func string(from date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = Int(((interval - Double(seconds)) * 1000).rounded())
        var carry = milliseconds
        if carry >= 1000 {
            seconds += 1
            carry = 0
        }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
        text += "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))"
        if carry > 0 { text += "." + pad(Int32(carry), 3) }
        return text + "Z"
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard position < bytes.count, bytes[position] == character.asciiValue else { return false }
            position += 1
            return true
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }

        mutating func digits(_ count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            position += count
            return value
        }
    }
}
