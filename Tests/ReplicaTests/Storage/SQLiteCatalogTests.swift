import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore

/// The catalog behind its seam: SQLite's failures leave it as `ReplicaError`s with code `storage`, in the
/// words `SQLiteError.explanation` gives, with the SQLite error as the cause; a full disk is told apart.
@Suite struct SQLiteCatalogTests {
    let directory: TemporaryDirectory
    let store: Store

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.url)
        try store.signIn("alice")
    }

    /// Checks that `body` fails as the storage's failure, with SQLite's own error underneath.
    func expectStorageFailure(
        _ what: String, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            try body()
            Issue.record("\(what) did not fail", sourceLocation: sourceLocation)
        } catch let error as ReplicaError {
            #expect(error.code == .storage, "\(what): \(error.code)", sourceLocation: sourceLocation)
            let cause = error.cause as? SQLiteError
            #expect(
                cause != nil, "\(what): the cause is \(String(describing: error.cause))", sourceLocation: sourceLocation
            )
            #expect(error.message == cause?.explanation, "\(what): \(error.message)", sourceLocation: sourceLocation)
            #expect(!error.isOutOfSpace, sourceLocation: sourceLocation)
        } catch {
            Issue.record(
                "\(what) failed with \(type(of: error)), not ReplicaError: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aFailingStatementLeavesTheCatalogAsAStorageError() throws {
        // Another hand renames the tables under the open catalog: every statement on them fails in SQLite.
        let other = try Connection(path: directory.path + "/catalog.sqlite")
        try other.execute("ALTER TABLE source_status RENAME TO source_status_gone")
        try other.execute("ALTER TABLE sources RENAME TO sources_gone")
        expectStorageFailure("listing sources") { _ = try store.sources() }
        expectStorageFailure("adding a source") {
            try store.addSource(SourceDefinition(kind: .files, account: "alice", settings: .object([("root", "/tmp")])))
        }
        try other.execute("ALTER TABLE accounts RENAME TO accounts_gone")
        expectStorageFailure("listing accounts") { _ = try store.signedInAccounts() }
        expectStorageFailure("signing in") { try store.signIn("bob") }
        expectStorageFailure("signing out") { try store.signOut("alice") }
    }

    @Test func aFullDiskIsToldApartFromOtherStorageFailures() {
        let full = SQLiteError(code: .full, message: "database or disk is full", path: "/store/catalog.sqlite")
            .storageError
        #expect(full.code == .storage)
        #expect(full.isOutOfSpace)
        #expect(full.message.hasPrefix("the disk holding /store/catalog.sqlite is full"))
        let busy = SQLiteError(code: .busy, message: "database is locked", path: "/store/catalog.sqlite").storageError
        #expect(!busy.isOutOfSpace)
        #expect(!ReplicaError(.storage, "the summarizer is down").isOutOfSpace)
        #expect(!ReplicaError(.fileSystem, "full", cause: SQLiteError(code: .full, message: "full")).isOutOfSpace)
    }
}
