import Foundation
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct ISO8601Tests {
    @Test(arguments: [
        ("2026-11-20T10:00:00Z", 1_795_168_800.0),
        ("2026-11-20T11:00:00+01:00", 1_795_168_800.0),
        ("2026-11-20T05:00:00-0500", 1_795_168_800.0),
        ("2026-11-20T10:00Z", 1_795_168_800.0),
        ("2026-11-20T10:00:00", 1_795_168_800.0),
        ("2026-11-20", 1_795_132_800.0),
        ("2026-11-20T10:00:00.250Z", 1_795_168_800.25),
    ])
    func readsTheAcceptedForms(text: String, seconds: Double) {
        #expect(ISO8601.date(from: text)?.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "2026-02-30", "2026-13-01", "20261120", "2026-11-20T25:00:00Z", "yesterday", "2026-11-20T10:00:00Zjunk", "",
    ])
    func refusesWhatIsNotADate(text: String) {
        #expect(ISO8601.date(from: text) == nil)
    }

    @Test func writesUTCWithMillisecondsOnlyWhenPresent() {
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1_795_168_800)) == "2026-11-20T10:00:00Z")
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1_795_168_800.5)) == "2026-11-20T10:00:00.500Z")
    }
}
