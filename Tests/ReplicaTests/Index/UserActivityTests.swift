import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// User activities: engagement in ranking, activities searched on their own, predictions, deletion.
/// Runs on both backends (``TestBackend``).
@Suite struct UserActivityTests {
    let clock = Fixtures.ManualClock(ISO8601.date(from: "2026-11-23T12:00:00Z")!)

    /// What a test works on: a store with alice signed in, and her default index.
    struct Fixture {
        let storage: TestStore
        var store: Store { storage.store }
        var directory: TemporaryDirectory { storage.directory }
        let index: SearchableIndex
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore(configuration: Fixtures.configuration(clock: clock))
        try await storage.store.signIn("alice")
        return Fixture(storage: storage, index: try await storage.store.index(account: "alice"))
    }

    func view(_ item: String, at date: Date? = nil, prediction: Bool = true) -> UserActivity {
        UserActivity(
            activityType: "com.example.view", persistentIdentifier: "view:\(item)", title: "Viewed \(item)",
            relatedUniqueIdentifier: ItemIdentifier(item), date: date, isEligibleForPrediction: prediction)
    }

    @Test(arguments: TestBackend.available)
    func engagementRaisesAnOftenAndRecentlyViewedItemButNotOverAClearlyBetterMatch(_ backend: TestBackend) async throws
    {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("a", title: "Packing list", text: "boots and a rope for the glacier"),
            Fixtures.item("b", title: "Packing notes", text: "boots and a rope for the glacier"),
            Fixtures.item("best", title: "Glacier rope", text: "The glacier rope: which rope for the glacier"),
        ])
        let before = try await fixture.index.search(SearchQuery("glacier rope")).map(\.item.uniqueIdentifier)
        #expect(before.first == "best")
        let plain = before.filter { $0 != "best" }
        // The one of the equal pair that ranked second is viewed often, and lately.
        let viewed = plain[1]
        for _ in 0..<15 {
            try await fixture.index.donateUserActivities([
                view(viewed.rawValue, at: clock.now.addingTimeInterval(-3600))
            ])
        }
        let after = try await fixture.index.search(SearchQuery("glacier rope"))
        #expect(after.map(\.item.uniqueIdentifier) == ["best", viewed, plain[0]])
        let engaged = try #require(after.first { $0.item.uniqueIdentifier == viewed })
        #expect(engaged.engagement > 0.99 && engaged.engagement <= 1)
        // Not duplicated: the activity is about an indexed item, so it is no result of its own.
        #expect(after.count == 3)
        // Engagement fades: seven weeks later it is worth 1/128 of what it was.
        clock.advance(by: 7 * Engagement.halfLife)
        let faded = try #require(
            try await fixture.index.search(SearchQuery("glacier rope")).first { $0.item.uniqueIdentifier == viewed })
        #expect(faded.engagement < 0.01)
    }

    @Test func engagementFollowsItsDocumentedFormula() {
        let now = clock.now
        #expect(Engagement.value(lastViewed: now, views: 1, now: now) == 0.25)
        #expect(Engagement.value(lastViewed: now, views: 3, now: now) == 0.5)
        #expect(Engagement.value(lastViewed: now, views: 100, now: now) == 1)
        #expect(
            abs(Engagement.value(lastViewed: now.addingTimeInterval(-Engagement.halfLife), views: 15, now: now) - 0.5)
                < 1e-12)
    }

    @Test(arguments: TestBackend.available)
    func anActivityAboutNothingIndexedIsSearchableItselfAndDeletable(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let opened = UserActivity(
            activityType: "com.example.search", persistentIdentifier: "search:tents", title: "Searched for tents",
            keywords: ["camping"], isEligibleForSearch: true)
        try await fixture.index.donateUserActivities([opened])
        let found = try await fixture.index.search(SearchQuery("camping"))
        #expect(found.map(\.item.uniqueIdentifier) == ["activity:search:tents"])
        #expect(found.first?.origin.owner == .activities)
        // Another owner's item cannot be removed through activities, nor can the app's deletes reach it.
        #expect(try await fixture.index.deleteItems(withIdentifiers: ["activity:search:tents"]) == 0)
        #expect(try await fixture.index.deleteSavedUserActivities(withPersistentIdentifiers: ["search:tents"]) == 1)
        #expect(try await fixture.index.search(SearchQuery("camping")).isEmpty)
    }

    @Test(arguments: TestBackend.available)
    func anActivityDonatedBeforeItsItemStopsStandingInOnceTheItemIsIndexed(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.donateUserActivities([view("trip", at: clock.now)])
        #expect(
            try await fixture.index.search(SearchQuery("viewed trip")).map(\.item.uniqueIdentifier) == [
                "activity:view:trip"
            ])
        try await fixture.index.indexItems([
            Fixtures.item("trip", title: "Viewed trip plan", text: "the trip to the glacier")
        ])
        let found = try await fixture.index.search(SearchQuery("viewed trip"))
        #expect(found.map(\.item.uniqueIdentifier) == ["trip"], "the item, not the item and its stand-in")
        #expect(try #require(found.first).engagement > 0)
        // Donated again, it is still no result of its own.
        try await fixture.index.donateUserActivities([view("trip", at: clock.now)])
        #expect(try await fixture.index.search(SearchQuery("viewed trip")).map(\.item.uniqueIdentifier) == ["trip"])
    }

    @Test(arguments: TestBackend.available)
    func recentListsPredictionEligibleItemsMostEngagedFirst(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("a", title: "Alpha"), Fixtures.item("b", title: "Beta"), Fixtures.item("c", title: "Gamma"),
        ])
        try await fixture.index.donateUserActivities([view("a", at: clock.now.addingTimeInterval(-86_400))])
        for _ in 0..<3 { try await fixture.index.donateUserActivities([view("b")]) }
        try await fixture.index.donateUserActivities([view("c", prediction: false)])
        let recent = try await fixture.store.recentActivities(accounts: ["alice"])
        #expect(recent.map(\.activity.identifier) == ["b", "a"])
        #expect(recent.first?.activity.views == 3 && recent.first?.activity.title == "Beta")
        #expect(try await fixture.index.deleteAllSavedUserActivities() == 3)
        #expect(try await fixture.store.recentActivities().isEmpty)
    }

    /// SQLite only: the SQLite index file goes; on both backends, StoreTests' sign-out canary covers activities.
    @Test func activitiesGoWithTheAccount() async throws {
        let fixture = try await make(.sqlite)
        try await fixture.index.donateUserActivities([view("a")])
        let file = fixture.directory.path + "/accounts/alice/indexes/default.sqlite"
        #expect(FileManager.default.fileExists(atPath: file))
        try await fixture.store.signOut("alice")
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}
