import Foundation
import Testing
@testable import Replica
import ReplicaTestSupport

@Suite struct StoreTests {
    let directory: TemporaryDirectory
    let store: Store

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.url)
    }

    @Test func writingToAnAccountSignsItIn() async throws {
        #expect(try store.signedInAccounts().isEmpty)
        _ = try store.index(account: "alice")
        #expect(try store.signedInAccounts().map(\.id) == ["alice"])
    }

    @Test func searchSpansSignedInAccountsAndMergesByScore() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("a1", title: "orchid", text: "orchid"), Fixtures.item("a2", text: "x orchid")])
        try await store.index(account: "bob").indexItems([Fixtures.item("b1", text: "orchid"), Fixtures.item("b2", text: "none")])
        try await store.index(named: "Mail", account: "bob").indexItems([Fixtures.item("m1", title: "orchid mail", text: "orchid orchid")])
        let results = try await store.search(SearchQuery("orchid"))
        #expect(Set(results.map(\.item.uniqueIdentifier)) == ["a1", "a2", "b1", "m1"])
        #expect(results.map(\.score) == results.map(\.score).sorted(by: >))
        #expect(results.first { $0.item.uniqueIdentifier == "m1" }?.indexName == "Mail")
        var onlyBob = SearchQuery("orchid")
        onlyBob.accounts = ["bob"]
        #expect(Set(try await store.search(onlyBob).map(\.account)) == ["bob"])
        #expect(try await store.search(SearchQuery("orchid", limit: 2)).count == 2)
    }

    @Test func signingOutLeavesNoByteOfTheAccountsTextInAnyFile() async throws {
        let canary = "zqxcanary\(UInt32.random(in: 0..<UInt32.max))"
        let alice = try store.index(account: "alice")
        try await alice.indexItems((0..<200).map { Fixtures.item("n\($0)", title: "\(canary) title", text: "\($0) \(canary) body text") })
        let batch = alice.beginBatch()
        try batch.deleteItems(withIdentifiers: ["n1"])
        try await batch.end(clientState: Data(canary.utf8))
        try await store.index(account: "bob").indexItems([Fixtures.item("b", text: "bob's own words")])
        #expect(!directory.filesContaining(canary).isEmpty, "the canary should be on disk before the sign-out")

        #expect(try store.signOut("alice"))
        #expect(directory.filesContaining(canary).isEmpty, "found in \(directory.filesContaining(canary))")
        #expect(try store.signedInAccounts().map(\.id) == ["bob"])
        #expect(try await store.search(SearchQuery(canary)).isEmpty)
        #expect(try await store.search(SearchQuery("bob's")).count == 1)
        await #expect(performing: { try await alice.itemCount() }, throws: { ($0 as? ReplicaError)?.code == .accountNotSignedIn })
        #expect(try store.signOut("alice") == false)
    }

    @Test func switchingAccountsSignsOutEveryOther() async throws {
        for account: AccountID in ["a", "b", "c"] {
            try await store.index(account: account).indexItems([Fixtures.item("x", text: "shared word")])
        }
        try store.switchAccount(to: "b")
        #expect(try store.signedInAccounts().map(\.id) == ["b"])
        #expect(try await store.search(SearchQuery("shared")).map(\.account) == ["b"])
        try store.switchAccount(to: "d")
        #expect(try store.signedInAccounts().map(\.id) == ["d"])
        #expect(try await store.search(SearchQuery("shared")).isEmpty)
    }

    @Test func anotherStoreOnTheSameDirectorySeesASignOut() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("x", text: "visible")])
        let other = try Store(directory: directory.url)
        #expect(try await other.search(SearchQuery("visible")).count == 1)
        try store.signOut("alice")
        #expect(try await other.search(SearchQuery("visible")).isEmpty)
        // Writing again signs the account in afresh, with nothing of before.
        let again = try other.index(account: "alice")
        #expect(try await again.itemCount() == 0)
    }

    @Test func accountIdentifiersMapToSafeFolders() async throws {
        let weird: AccountID = "../../etc/ä b"
        try await store.index(account: weird).indexItems([Fixtures.item("x", text: "contained")])
        let files = directory.allFiles().map(\.path)
        #expect(files.allSatisfy { $0.hasPrefix(directory.path + "/") })
        #expect(files.contains { $0.contains("/accounts/%2E%2E%2F%2E%2E%2Fetc%2F%C3%A4%20b/indexes/default.sqlite") })
        #expect(throws: ReplicaError.self) { try store.index(account: "") }
        #expect(throws: ReplicaError.self) { try store.index(named: "../x", account: "a") }
    }

    @Test func storeFilesAreReadableByTheirOwnerOnly() async throws {
        try await store.index(account: "alice").indexItems([Fixtures.item("x", text: "private")])
        for file in directory.allFiles() {
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file.path)")
        }
        for folder in [directory.path, directory.path + "/accounts", directory.path + "/accounts/alice", directory.path + "/accounts/alice/indexes"] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder)")
        }
    }
}
