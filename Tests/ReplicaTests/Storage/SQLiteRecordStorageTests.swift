import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore

/// An account's record store behind its seam: SQLite's failures leave it as `ReplicaError`s with code
/// `storage`, with the SQLite error as the cause.
@Suite struct SQLiteRecordStorageTests {
    let directory: TemporaryDirectory
    let store: Store

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.url)
        try store.signIn("a")
        try store.records.write([
            Record(account: "a", kind: "note", id: "1", version: 1, fields: [("title", .string("t"))])
        ])
    }

    static func isStorageFailure(_ error: any Error) -> Bool {
        guard let error = error as? ReplicaError, let cause = error.cause as? SQLiteError else { return false }
        return error.code == .storage && error.message == cause.explanation
    }

    @Test func aFailingStatementLeavesTheRecordStoreAsAStorageError() throws {
        let other = try Connection(path: directory.path + "/accounts/a/records.sqlite")
        try other.execute("ALTER TABLE changes RENAME TO changes_gone")
        let note = Record(account: "a", kind: "note", id: "2", version: 1, fields: [("title", .string("t"))])
        #expect(performing: { try store.records.write([note]) }, throws: Self.isStorageFailure)
        let storage = try #require(try store.recordStorage(for: "a", creating: false))
        #expect(performing: { try storage.changes(after: 0, limit: 10) }, throws: Self.isStorageFailure)
        #expect(performing: { try storage.lastSequence() }, throws: Self.isStorageFailure)
        // What does not touch the renamed table still works.
        #expect(try store.records.record(account: "a", kind: "note", id: "1")?.version == 1)
    }

    @Test func aSignedOutAccountsStorageRefusesEveryOperation() throws {
        let storage = try #require(try store.recordStorage(for: "a", creating: false))
        try store.signOut("a")
        let notSignedIn: (any Error) -> Bool = { ($0 as? ReplicaError)?.code == .accountNotSignedIn }
        #expect(performing: { try storage.kinds() }, throws: notSignedIn)
        #expect(performing: { try storage.dataVersion() }, throws: notSignedIn)
        #expect(performing: { try storage.write([], now: Date()) }, throws: notSignedIn)
    }
}
