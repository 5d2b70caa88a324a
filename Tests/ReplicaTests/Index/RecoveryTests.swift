import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// A delegate that records what it was asked and reindexes from a fixed list.
final class RecordingDelegate: IndexDelegate {
    let requests = Recorder<String>()
    let items: [SearchableItem]

    init(items: [SearchableItem]) { self.items = items }

    func reindexAllItems(in index: SearchableIndex) async throws {
        requests.append("all")
        try await index.indexItems(items)
    }

    func reindexItems(withIdentifiers identifiers: [ItemIdentifier], in index: SearchableIndex) async throws {
        requests.append("some:" + identifiers.map(\.rawValue).joined(separator: ","))
        try await index.indexItems(items.filter { identifiers.contains($0.uniqueIdentifier) })
    }
}

@Suite struct RecoveryTests {
    let directory: TemporaryDirectory
    let events = Recorder<StoreEvent.Kind>()

    init() throws {
        directory = try TemporaryDirectory()
    }

    func makeStore() throws -> Store {
        var configuration = Store.Configuration()
        configuration.events = { [events] event in events.append(event.kind) }
        let store = try Store(directory: directory.url, configuration: configuration)
        try store.signIn("alice")
        return store
    }

    var indexPath: String { directory.path + "/accounts/alice/indexes/default.sqlite" }

    @Test func aNewIndexAsksItsOwnerToReindexEverythingOnce() async throws {
        let store = try makeStore()
        let index = try await store.index(account: "alice")
        let delegate = RecordingDelegate(items: [Fixtures.item("n1", text: "restored")])
        try await index.setDelegate(delegate)
        #expect(delegate.requests.all == ["all"])
        #expect(try await index.itemCount() == 1)
        try await index.setDelegate(delegate)
        #expect(delegate.requests.all == ["all"], "an acknowledged request is not asked again")
    }

    @Test func aDamagedFileIsDetectedAtOpenAndRebuiltForItsOwner() async throws {
        do {
            let store = try makeStore()
            let index = try await store.index(account: "alice")
            try await index.setDelegate(RecordingDelegate(items: []))
            try await index.indexItems((0..<100).map { Fixtures.item("n\($0)", text: "original text \($0)") })
        }
        // Overwrite the header and the first pages with garbage.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: indexPath))
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 16_384))
        try handle.close()

        let store = try makeStore()
        let index = try await store.index(account: "alice")
        #expect(events.all.contains(.indexRebuilt))
        #expect(try await index.itemCount() == 0, "a damaged index is never served")
        let delegate = RecordingDelegate(items: [Fixtures.item("n1", text: "reindexed")])
        try await index.setDelegate(delegate)
        #expect(delegate.requests.all == ["all"])
        #expect(try await index.search(SearchQuery("reindexed")).count == 1)
    }

    @Test func anIndexFromANewerReplicaIsRefusedNotGuessedAt() async throws {
        do {
            let store = try makeStore()
            try await store.index(account: "alice").indexItems([Fixtures.item("n", text: "kept")])
        }
        let connection = try ReplicaSQLiteAccess.connection(indexPath)
        try connection("PRAGMA user_version = 999")
        let store = try makeStore()
        #expect(
            performing: { try store.index(account: "alice") },
            throws: { error in
                let error = error as? ReplicaError
                return error?.code == .newerSchema && error?.message.contains("newer version of replica") == true
            })
        #expect(FileManager.default.fileExists(atPath: indexPath), "the newer file is left alone")
    }

    @Test func unreadableStoredItemsAreDroppedAndAskedFor() async throws {
        let store = try makeStore()
        let index = try await store.index(account: "alice")
        let delegate = RecordingDelegate(items: [Fixtures.item("n1", text: "findable again")])
        try await index.setDelegate(delegate)
        try await index.indexItems([Fixtures.item("n1", text: "findable"), Fixtures.item("n2", text: "findable")])
        let connection = try ReplicaSQLiteAccess.connection(indexPath)
        try connection("UPDATE items SET attributes = '{broken' WHERE identifier = 'n1'")
        let results = try await index.search(SearchQuery("findable"))
        #expect(results.map(\.item.uniqueIdentifier) == ["n2"])
        #expect(delegate.requests.all == ["all", "some:n1"])
        #expect(events.all.contains(.itemsUnreadable))
        #expect(Set(try await index.search(SearchQuery("findable")).map(\.item.uniqueIdentifier)) == ["n1", "n2"])
    }
}
