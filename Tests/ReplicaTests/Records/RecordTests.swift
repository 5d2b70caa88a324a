import Foundation
import Testing

@testable import Replica
@testable import ReplicaCore

/// The ways an app builds a record: pairs, a dictionary literal, an `Encodable` value.
@Suite struct RecordTests {
    @Test func aDictionaryLiteralKeepsTheFieldsInTheOrderWritten() {
        let record = Record(
            account: "alice", kind: "note", id: "42", version: 7,
            fields: ["title": "Launch plan", "pinned": true, "stars": 3, "tags": ["a", "b"]])
        #expect(record.fields.map(\.0) == ["title", "pinned", "stars", "tags"])
        #expect(
            record
                == Record(
                    account: "alice", kind: "note", id: "42", version: 7,
                    fields: [("title", "Launch plan"), ("pinned", true), ("stars", 3), ("tags", ["a", "b"])]))
    }

    struct Note: Codable {
        var title: String
        var body: String?
        var due: Date
        var stars: Int
    }

    @Test func anEncodableValueBecomesItsFields() throws {
        let due = try #require(ISO8601.date(from: "2026-12-01T09:00:00Z"))
        let record = try Record(
            account: "alice", kind: "note", id: "42", version: 7,
            encoding: Note(title: "Launch plan", body: nil, due: due, stars: 3))
        #expect(record["title"] == "Launch plan")
        #expect(record["body"] == nil)
        #expect(record["due"] == "2026-12-01T09:00:00Z")
        #expect(record["stars"] == 3)
        // The default projection reads the fields as it reads any record's.
        let projected = try Projection.default(for: "note").item(for: record, now: due)
        #expect(projected.attributeSet.title == "Launch plan")
    }

    @Test func aValueThatIsNotAnObjectIsRefused() {
        #expect {
            try Record(account: "alice", kind: "note", id: "42", version: 7, encoding: ["not", "an", "object"])
        } throws: { error in
            (error as? ReplicaError)?.code == .invalidItem
                && (error as? ReplicaError)?.message.contains("JSON object") == true
        }
    }
}
