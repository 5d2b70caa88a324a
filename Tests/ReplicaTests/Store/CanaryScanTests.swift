import Foundation
import ReplicaTestSupport
import Testing

/// The scan the sign-out tests trust: a file it cannot read must not count as clean.
@Suite struct CanaryScanTests {
    @Test func aFileTheScanCannotReadIsReportedNotPassedOver() throws {
        let directory = try TemporaryDirectory()
        try "nothing here".write(to: directory.appending("clean.txt"), atomically: true, encoding: .utf8)
        try "the canary".write(to: directory.appending("dirty.txt"), atomically: true, encoding: .utf8)
        try "unknown".write(to: directory.appending("locked.txt"), atomically: true, encoding: .utf8)
        struct Unreadable: Error {}
        let found = TemporaryDirectory.filesContaining("canary", under: directory.url) { file in
            if file.lastPathComponent == "locked.txt" { throw Unreadable() }
            return try Data(contentsOf: file)
        }
        #expect(Set(found.map(\.lastPathComponent)) == ["dirty.txt", "locked.txt"])
    }

    @Test func aFileGoneBeforeItIsReadHoldsNothing() throws {
        let directory = try TemporaryDirectory()
        try "the canary".write(to: directory.appending("dirty.txt"), atomically: true, encoding: .utf8)
        try "the canary too".write(to: directory.appending("vanishing.txt"), atomically: true, encoding: .utf8)
        let found = TemporaryDirectory.filesContaining("canary", under: directory.url) { file in
            if file.lastPathComponent == "vanishing.txt" { try FileManager.default.removeItem(at: file) }
            return try Data(contentsOf: file)
        }
        #expect(found.map(\.lastPathComponent) == ["dirty.txt"])
    }
}
