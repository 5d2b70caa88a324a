import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica

/// `RecordStore.waitUntilSearchable`: an app server writes records, an engine elsewhere (another store
/// on the same folder or database, as `replica watch` in another process would be) projects them, and
/// the wait ends once this store's searches find them.
@Suite struct WaitUntilSearchableTests {
    static func note(_ id: String, _ title: String) -> Record {
        Record(account: "alice", kind: "note", id: id, version: 1, fields: ["title": .string(title)])
    }

    @Test(arguments: TestBackend.available)
    func theWaitEndsOnceAnEngineElsewhereHasProjectedTheWrites(_ backend: TestBackend) async throws {
        let made = try await backend.makeStore(signingIn: "alice")
        let app = made.store
        // Nothing written yet: nothing to wait for.
        #expect(try await app.records.waitUntilSearchable(account: "alice", timeout: .zero))

        try await app.records.write([Self.note("1", "quarterly zebra plan")])
        // No engine runs: the write stays unprojected, and the wait says so when its time is up.
        #expect(try await app.records.waitUntilSearchable(account: "alice", timeout: .milliseconds(100)) == false)

        let watcher = try made.open()
        let engine = ProjectionEngine(store: watcher, projections: ProjectionSet(indexName: Store.defaultIndexName))
        // The engine looks every 30 s: only a prompt wake-up of the waiter (or its own look) ends the wait
        // in time, and the engine's first pass runs at once.
        let running = Task { await engine.run(every: .seconds(30)) }
        defer { running.cancel() }
        #expect(try await app.records.waitUntilSearchable(account: "alice", timeout: .seconds(60)))
        #expect(try await app.search(SearchQuery("zebra")).map(\.item.uniqueIdentifier.rawValue) == ["note:alice:1"])

        // A second write, while the engine sleeps between its looks: it is caught up by a catch-up of
        // another engine, and the waiter hears of it.
        try await app.records.write([Self.note("2", "quarterly yak plan")])
        let waiting = Task { try await app.records.waitUntilSearchable(account: "alice", timeout: .seconds(60)) }
        _ = try await ProjectionEngine(store: watcher, projections: ProjectionSet(indexName: Store.defaultIndexName))
            .catchUp(account: "alice")
        #expect(try await waiting.value)
        #expect(try await app.search(SearchQuery("yak")).map(\.item.uniqueIdentifier.rawValue) == ["note:alice:2"])
    }

    @Test(arguments: TestBackend.available)
    func anAccountThatIsNotSignedInIsRefused(_ backend: TestBackend) async throws {
        let made = try await backend.makeStore(signingIn: "alice")
        await #expect(throws: ReplicaError.self) {
            try await made.store.records.waitUntilSearchable(account: "bob", timeout: .milliseconds(10))
        }
    }
}
