#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses RFC 5322 dates such as `Tue, 3 Nov 2026 10:00:00 +0100`.
///
/// The weekday is optional and not checked; years may have two digits (00–49 → 2000s,
/// 50–99 → 1900s) or three (added to 1900, as RFC 5322 says); seconds are optional; the zone is
/// numeric (`+0100`, also `+01:00`) or one of UT, UTC, GMT, Z, EST, EDT, CST, CDT, MST, MDT,
/// PST, PDT; a missing or unknown zone is UTC. Comments such as `(CET)` are ignored. Anything
/// else gives nil.
enum MailDate {
    /// The date in raw header bytes, or nil.
    static func parse(_ raw: [UInt8]) -> Date? {
        var tokens = self.tokens(raw)
        guard !tokens.isEmpty else { return nil }
        if let first = tokens.first, ExtractionBytes.isLetter(first[0]) {
            guard weekdays.contains(prefix3(first)) else { return nil }
            tokens.removeFirst()
        }
        guard tokens.count >= 4,
            let day = number(tokens[0]), tokens[0].count <= 2, (1...31).contains(day),
            let month = months.firstIndex(of: prefix3(tokens[1])).map({ $0 + 1 }),
            let yearValue = number(tokens[2]), tokens[2].count >= 2, tokens[2].count <= 4
        else { return nil }
        let year =
            switch tokens[2].count {
            case 2: yearValue < 50 ? 2000 + yearValue : 1900 + yearValue
            case 3: 1900 + yearValue
            default: yearValue
            }
        guard day <= daysIn(month: month, year: year) else { return nil }
        let clock = tokens[3].split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard clock.count == 2 || clock.count == 3,
            let hour = number(Array(clock[0])), hour < 24,
            let minute = number(Array(clock[1])), minute < 60
        else { return nil }
        let second = clock.count == 3 ? number(Array(clock[2])) : 0
        guard let second, second <= 60 else { return nil }
        let offset = tokens.count > 4 ? zoneOffset(tokens[4]) : 0
        guard let offset else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds))
    }

    private static let weekdays: [[UInt8]] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map { Array($0.utf8) }
    private static let months: [[UInt8]] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ].map { Array($0.utf8) }

    /// Words of the date, split at white space and commas, with comments removed.
    private static func tokens(_ raw: [UInt8]) -> [[UInt8]] {
        var tokens: [[UInt8]] = []
        var current: [UInt8] = []
        var commentDepth = 0
        for byte in raw {
            if byte == UInt8(ascii: "(") { commentDepth += 1 }
            let separator = commentDepth > 0 || ExtractionBytes.isWhitespace(byte) || byte == UInt8(ascii: ",")
            if byte == UInt8(ascii: ")") { commentDepth = max(0, commentDepth - 1) }
            if separator || byte == UInt8(ascii: ")") {
                if !current.isEmpty { tokens.append(current) }
                current = []
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens
    }

    /// The first three letters of a word, lowercased.
    private static func prefix3(_ word: [UInt8]) -> [UInt8] {
        word.prefix(3).map(ExtractionBytes.lowercased)
    }

    /// The value of a run of one to nine ASCII digits, or nil.
    private static func number(_ digits: [UInt8]) -> Int? {
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        var value = 0
        for byte in digits {
            guard ExtractionBytes.isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// Seconds east of UTC for a zone token, or nil when it is malformed.
    private static func zoneOffset(_ token: [UInt8]) -> Int? {
        if let sign = token.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            let digits = token.dropFirst().filter { $0 != UInt8(ascii: ":") }
            guard digits.count == 4, let value = number(Array(digits)) else { return nil }
            let hours = value / 100
            let minutes = value % 100
            guard minutes < 60 else { return nil }
            let offset = (hours * 60 + minutes) * 60
            return sign == UInt8(ascii: "-") ? -offset : offset
        }
        let name = String(decoding: token.map(ExtractionBytes.lowercased), as: UTF8.self)
        let hours: Int =
            switch name {
            case "edt": -4
            case "est", "cdt": -5
            case "cst", "mdt": -6
            case "mst", "pdt": -7
            case "pst": -8
            default: 0  // UT, UTC, GMT, Z, and unknown zones (RFC 5322: treat as UTC).
            }
        return hours * 3600
    }

    /// The number of days in a month of a (proleptic Gregorian) year.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let shiftedMonth = (month + 9) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
