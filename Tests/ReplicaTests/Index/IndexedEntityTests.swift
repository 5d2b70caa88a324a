import Foundation
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex
@testable import ReplicaSQLiteStore

/// App entities indexed directly: what item they become, how priority ranks them, and reindexing.
/// Runs on both backends (``TestBackend``).
@Suite struct IndexedEntityTests {
    /// What a test works on: a store with alice signed in, and her index "Landmarks".
    struct Fixture {
        let storage: TestStore
        var store: Store { storage.store }
        let index: SearchableIndex
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore()
        try await storage.store.signIn("alice")
        return Fixture(storage: storage, index: try await storage.store.index(named: "Landmarks", account: "alice"))
    }

    struct LandmarkEntity: IndexedEntity {
        static let typeName = "LandmarkEntity"
        var id: String
        var name: String
        var summary: String
        var continent: String
        var extra = AttributeSet()

        var displayRepresentation: EntityDisplayRepresentation {
            EntityDisplayRepresentation(title: name, subtitle: "in \(continent)")
        }
        var indexedProperties: [EntityProperty] {
            [
                EntityProperty(indexingKey: .contentDescription, value: .text(summary)),
                EntityProperty(customIndexingKey: "com_example_continent", value: .text(continent)),
            ]
        }
        var attributeSet: AttributeSet { extra }
    }

    @Test(arguments: TestBackend.available)
    func anEntityBecomesAnItemWhosePropertiesWinOverItsAttributeSet(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        var extra = AttributeSet()
        extra.contentDescription = "loses to the property"
        extra.title = "loses to the display representation"
        extra.latitude = 45.98
        try await fixture.index.indexEntities(
            [
                LandmarkEntity(
                    id: "42", name: "Matterhorn", summary: "A pyramid-shaped peak",
                    continent: "Europe", extra: extra)
            ], priority: 10)
        let stored = try #require(
            try await fixture.index.fetchItems(withIdentifiers: ["entity:LandmarkEntity:42"]).first)
        let attributes = stored.item.attributeSet
        #expect(attributes.title == "Matterhorn")
        #expect(attributes[.headline]?.textValue == "in Europe")
        #expect(attributes.contentDescription == "A pyramid-shaped peak")
        #expect(attributes[AttributeKey("com_example_continent")]?.textValue == "Europe")
        #expect(attributes.latitude == 45.98)
        #expect(stored.item.entity == EntityReference(typeName: "LandmarkEntity", id: "42"))
        // Results say which entity they are; the same identifier updates.
        let result = try #require(try await fixture.index.search(SearchQuery("pyramid")).first)
        #expect(result.item.entity?.id == "42")
        #expect(result.json["entity"] == .object([("type", "LandmarkEntity"), ("id", "42")]))
        try await fixture.index.indexEntities([
            LandmarkEntity(id: "42", name: "Matterhorn", summary: "A rocky peak", continent: "Europe")
        ])
        #expect(try await fixture.index.itemCount() == 1)
        #expect(try await fixture.index.search(SearchQuery("pyramid")).isEmpty)
    }

    @Test(arguments: TestBackend.available)
    func priorityOrdersEqualMatchesButNeverBeatsAClearlyBetterOne(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let summary = "A mountain hut near the glacier"
        try await fixture.index.indexEntities(
            [LandmarkEntity(id: "plain", name: "Hut A", summary: summary, continent: "Europe")], priority: 0)
        try await fixture.index.indexEntities(
            [LandmarkEntity(id: "favourite", name: "Hut B", summary: summary, continent: "Europe")], priority: 100)
        try await fixture.index.indexEntities(
            [
                LandmarkEntity(
                    id: "best", name: "Glacier hut", summary: "The glacier hut, by the glacier",
                    continent: "Europe")
            ], priority: 0)
        let results = try await fixture.index.search(SearchQuery("glacier hut"))
        #expect(results.map { $0.item.entity?.id } == ["best", "favourite", "plain"])
        let scores = Dictionary(uniqueKeysWithValues: results.map { ($0.item.entity?.id ?? "", $0.score) })
        let bonus = try #require(scores["favourite"]) - #require(scores["plain"])
        #expect(abs(bonus - 0.02) < 1e-9)
    }

    final class LandmarkQuery: IndexedEntityQuery, Sendable {
        let asked = Mutex<[String]>([])
        func reindexEntities(withIdentifiers identifiers: [String], indexDescription: IndexDescription) async throws {
            asked.withLock { $0.append("some \(indexDescription.indexName): \(identifiers.sorted())") }
        }
        func reindexAllEntities(indexDescription: IndexDescription) async throws {
            asked.withLock { $0.append("all \(indexDescription.account)/\(indexDescription.indexName)") }
        }
    }

    @Test(arguments: TestBackend.available)
    func aNewIndexAsksTheEntityQueryToReindexEverythingOnce(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let fresh = try await fixture.store.index(named: "Fresh", account: "alice")
        let query = LandmarkQuery()
        try await fresh.setEntityQuery(query, forType: LandmarkEntity.typeName)
        #expect(query.asked.withLock { $0 } == ["all alice/Fresh"])
        try await fresh.setEntityQuery(query, forType: LandmarkEntity.typeName)
        #expect(query.asked.withLock { $0 }.count == 1, "the request was delivered and cleared")
    }

    @Test(arguments: TestBackend.available)
    func eachReceiverIsAskedToReindexEverythingOnceWhicheverIsSetFirst(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let fresh = try await fixture.store.index(named: "Fresh", account: "alice")
        let query = LandmarkQuery()
        try await fresh.setEntityQuery(query, forType: LandmarkEntity.typeName)
        let delegate = RecordingDelegate(items: [])
        try await fresh.setDelegate(delegate)
        #expect(delegate.requests.all == ["all"], "the delegate set second is still owed its request")
        let later = LandmarkQuery()
        try await fresh.setEntityQuery(later, forType: "TrailEntity")
        #expect(later.asked.withLock { $0 } == ["all alice/Fresh"], "a type set later is owed one too")
        // Set again, and through a store opened afresh: nobody is asked twice.
        try await fresh.setDelegate(delegate)
        try await fresh.setEntityQuery(query, forType: LandmarkEntity.typeName)
        let reopened = try await fixture.storage.open().index(named: "Fresh", account: "alice")
        try await reopened.setDelegate(delegate)
        try await reopened.setEntityQuery(later, forType: "TrailEntity")
        #expect(delegate.requests.all == ["all"])
        #expect(query.asked.withLock { $0 } == ["all alice/Fresh"])
        #expect(later.asked.withLock { $0 } == ["all alice/Fresh"])
    }

    /// SQLite only: it damages the stored copy through the SQLite writer's connection.
    @Test func unreadableEntitiesAreAskedForByTheirTypesQuery() async throws {
        let fixture = try await make(.sqlite)
        let query = LandmarkQuery()
        try await fixture.index.setEntityQuery(query, forType: LandmarkEntity.typeName)
        query.asked.withLock { $0 = [] }
        try await fixture.index.indexEntities([
            LandmarkEntity(id: "7", name: "Eiger", summary: "north face", continent: "Europe")
        ])
        // The stored copy is damaged; reading it back drops it and owes a reindex of that identifier.
        try await fixture.index.write { writer in
            try (writer as! SQLiteIndexWriter).connection.execute(
                "UPDATE items SET attributes = 'not json' WHERE identifier = 'entity:LandmarkEntity:7'")
        }
        _ = try await fixture.index.search(SearchQuery("eiger"))
        #expect(query.asked.withLock { $0 } == ["some Landmarks: [\"7\"]"])
    }

    @Test func anEntityLineReadsLikeTheDocumentedFormat() throws {
        let line = try JSON.parse(
            #"""
            {"type": "LandmarkEntity", "id": "42", "title": "Matterhorn", "subtitle": "Zermatt", "priority": 10,
             "properties": {"description": {"key": "contentDescription", "value": "A peak"},
                            "continent": {"customKey": "com_example_continent", "value": "Europe"}},
             "attributes": {"contentDescription": "loses", "latitude": 45.98}}
            """#)
        let item = try SearchableItem(entityJSON: line)
        #expect(item.uniqueIdentifier == "entity:LandmarkEntity:42")
        #expect(item.attributeSet.contentDescription == "A peak")
        #expect(item.attributeSet[AttributeKey("com_example_continent")]?.textValue == "Europe")
        #expect(item.attributeSet[.entityPriority]?.numberValue == 10)
        for (bad, problem) in [
            (#"{"type": "L", "id": "1"}"#, "title"), (#"{"type": "a b", "id": "1", "title": "t"}"#, "ASCII"),
            (#"{"type": "L", "id": "1", "title": "t", "priority": 101}"#, "0 to 100"),
            (
                #"{"type": "L", "id": "1", "title": "t", "properties": {"p": {"key": "madeUp", "value": 1}}}"#,
                "customKey"
            ),
        ] {
            #expect(
                performing: { try SearchableItem(entityJSON: JSON.parse(bad)) },
                throws: { error in
                    (error as? ReplicaError)?.code == .invalidItem
                        && (error as? ReplicaError)?.message.contains(problem) == true
                })
        }
    }
}
