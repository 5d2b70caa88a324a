import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Runs on both backends (``TestBackend``).
@Suite struct RecordStoreTests {
    /// A store with accounts a and b signed in.
    func make(_ backend: TestBackend) async throws -> TestStore {
        try await backend.makeStore(signingIn: "a", "b")
    }

    func note(_ id: String, _ version: Int64, title: String = "t", deleted: Bool = false, account: AccountID = "a")
        -> Record
    {
        Record(
            account: account, kind: "note", id: id, version: version, isDeleted: deleted,
            fields: [("title", .string(title))])
    }

    @Test(arguments: TestBackend.available)
    func keepsTheNewestVersionAndCountsOlderDeliveries(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        var summary = try await fixture.store.records.write([note("1", 3, title: "three")])
        #expect(summary.written == 1)
        summary = try await fixture.store.records.write([
            note("1", 2, title: "two"), note("1", 3, title: "three again"), note("1", 1),
        ])
        #expect(
            summary
                == {
                    var s = RecordWriteSummary()
                    s.ignoredOlder = 2
                    s.unchanged = 1
                    return s
                }())
        #expect(try await fixture.store.records.record(account: "a", kind: "note", id: "1")?["title"] == "three")
        #expect(try await fixture.store.records.ignoredOlderCount(account: "a") == 2)
    }

    @Test(arguments: TestBackend.available)
    func aTombstoneStaysEffectiveAgainstLateOlderWrites(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([note("1", 1, title: "secret text")])
        try await fixture.store.records.write([note("1", 5, deleted: true)])
        try await fixture.store.records.write([note("1", 4, title: "late")])
        let stored = try #require(try await fixture.store.records.record(account: "a", kind: "note", id: "1"))
        #expect(stored.isDeleted)
        #expect(stored.version == 5)
        #expect(stored.fields.isEmpty, "a tombstone keeps no content")
        try await fixture.store.records.write([note("1", 6, title: "back")])
        #expect(try await fixture.store.records.record(account: "a", kind: "note", id: "1")?.isDeleted == false)
    }

    @Test(arguments: TestBackend.available)
    func everyStoredWriteIsInTheChangeLogInOrder(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([note("1", 1), note("2", 1), note("1", 1), note("1", 2)])
        let database = try #require(try await fixture.store.recordStorage(for: "a", creating: false))
        let changes = try await Blocking.run { try database.changes(after: 0, limit: 10) }.map(\.0)
        #expect(changes.map(\.id) == ["1", "2", "1"])
        #expect(changes.map(\.version) == [1, 1, 2])
        #expect(changes.map(\.sequence) == changes.map(\.sequence).sorted())
    }

    @Test(arguments: TestBackend.available)
    func signingOutRemovesTheAccountsRecords(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([note("1", 1, account: "b")])
        #expect(try await fixture.store.records.record(account: "b", kind: "note", id: "1") != nil)
        try await fixture.store.signOut("b")
        #expect(try await fixture.store.records.record(account: "b", kind: "note", id: "1") == nil)
        #expect(!FileManager.default.fileExists(atPath: fixture.directory.path + "/accounts/b/records.sqlite"))
    }

    @Test(arguments: [
        (#"{"kind": "note", "id": "1", "version": 1}"#, "the record has no 'account'"),
        (#"{"account": "a", "id": "1", "version": 1}"#, "the record has no 'kind'"),
        (#"{"account": "a", "kind": "note", "version": 1}"#, "the record has no 'id'"),
        (#"{"account": "a", "kind": "note", "id": "1"}"#, "the record has no 'version'"),
        (#"{"account": "a", "kind": "note", "id": "1", "version": 1.5}"#, "'version' must be a whole number"),
        (#"{"account": "a", "kind": "no te", "id": "1", "version": 1}"#, "kind 'no te' must be"),
        (#"{"account": "a", "kind": "note", "id": "1", "version": 1, "fields": [1]}"#, "'fields' must be an object"),
        (#"{"account": "a", "kind": "note", "id": "1", "version": 1, "readers": "b"}"#, "'readers' must be an array"),
        (
            #"{"account": "a", "kind": "note", "id": "1", "version": 1, "modified": "soon"}"#,
            "'modified' must be an ISO 8601 date"
        ),
    ])
    func aRecordLineSaysWhatIsMissingOrWrong(line: String, message: String) {
        #expect(
            performing: { try Record(json: JSON.parse(line)) },
            throws: { error in
                (error as? ReplicaError)?.message.contains(message) == true
            })
    }

    @Test func readersDecideWhoMayRead() {
        let own = Record(account: "a", kind: "note", id: "1", version: 1)
        #expect(own.isReadable(by: "a"))
        #expect(!own.isReadable(by: "b"))
        let shared = Record(account: "a", kind: "note", id: "1", version: 1, readers: ["b"])
        #expect(shared.isReadable(by: "b"))
        #expect(!shared.isReadable(by: "a"))
    }
}
