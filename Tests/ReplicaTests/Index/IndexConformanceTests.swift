import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// What every backend behind the index's seam must do, run on the three there are: SQLite, PostgreSQL and
/// the in-memory one of the test support (``InMemoryIndexStorage``). The rules above the seam (the
/// `isUpdate` merge, owner refusal, batches and their client state, the ranking) are written once; a
/// backend gives rows. What only a database can show (files, row-level security, partitions) stays in
/// the backends' own suites.
@Suite struct IndexConformanceTests {
    /// A backend behind the seam.
    enum Backend: String, CaseIterable, CustomStringConvertible {
        case sqlite, postgres, memory

        static var available: [Backend] {
            [.memory] + TestBackend.available.map { Backend(rawValue: $0.rawValue)! }
        }

        var description: String { rawValue }

        /// A new, empty index on this backend, whose time is `clock`'s.
        func makeIndex(clock: Fixtures.ManualClock) async throws -> Opened {
            switch self {
            case .memory:
                var configuration = SearchableIndex.Configuration()
                configuration.clock = clock.function
                let index = SearchableIndex(
                    storage: InMemoryIndexStorage(), name: "notes", account: "alice",
                    signIn: IndexLease(generation: 1, check: {}), configuration: configuration, events: { _ in })
                return Opened(index: index, store: nil)
            case .sqlite, .postgres:
                let store = try await TestBackend(rawValue: rawValue)!.makeStore(
                    configuration: Fixtures.configuration(clock: clock), signingIn: "alice")
                return Opened(index: try await store.store.index(named: "notes", account: "alice"), store: store)
            }
        }
    }

    /// An index, with the store it belongs to kept alive as long as it is used.
    struct Opened {
        let index: SearchableIndex
        let store: TestStore?
    }

    static func identifiers(_ results: [SearchResult]) -> [String] { results.map(\.item.uniqueIdentifier.rawValue) }

    static func stored(_ index: SearchableIndex, _ identifier: String) async throws -> SearchableItem? {
        try await index.items(withIdentifiers: [ItemIdentifier(identifier)]).first
    }

    /// Core Spotlight's `isUpdate`: the attributes an update sets replace the stored ones, the others stay,
    /// and so do the stored domain and expiration date when the update gives none; an update of an item
    /// that is not there is ignored.
    @Test(arguments: Backend.available)
    func anUpdateMergesIntoTheStoredItem(_ backend: Backend) async throws {
        let clock = Fixtures.ManualClock()
        let opened = try await backend.makeIndex(clock: clock)
        let index = opened.index
        let expires = clock.now.addingTimeInterval(3600)
        try await index.indexItems([
            Fixtures.item("n1", title: "Launch plan", text: "supplier risk", domain: "notes.work", expiration: expires)
        ])
        var change = AttributeSet()
        change.title = "Launch plan, final"
        try await index.indexItems([
            SearchableItem(uniqueIdentifier: "n1", attributeSet: change, isUpdate: true),
            SearchableItem(uniqueIdentifier: "missing", attributeSet: change, isUpdate: true),
        ])
        let merged = try #require(try await Self.stored(index, "n1"))
        #expect(merged.attributeSet.title == "Launch plan, final")
        #expect(merged.attributeSet.textContent == "supplier risk")
        #expect(merged.domainIdentifier == "notes.work")
        #expect(merged.expirationDate == expires)
        #expect(try await Self.stored(index, "missing") == nil)
        #expect(try await index.itemCount() == 1)
        #expect(Self.identifiers(try await index.search(SearchQuery("final"))) == ["n1"])
        #expect(Self.identifiers(try await index.search(SearchQuery("supplier"))) == ["n1"])
    }

    /// Writing an item again writes only what changed: the same item notes its new source version alone,
    /// other values over the same text keep its words and vectors, and another text drops its vectors and
    /// makes its words again.
    @Test(arguments: Backend.available)
    func anItemWrittenAgainChangesOnlyWhatChanged(_ backend: Backend) async throws {
        let clock = Fixtures.ManualClock()
        let opened = try await backend.makeIndex(clock: clock)
        let index = opened.index
        @Sendable func write(_ item: SearchableItem, version: String) async throws -> UpsertOutcome {
            try await index.write { try $0.index(item, origin: ItemOrigin(owner: .records, version: version)) }
        }
        func vectorItems() async throws -> Int {
            try await index.read { try $0.embeddingCounts(model: "m") }.items
        }
        let note = Fixtures.item("note:1", title: "Launch plan", text: "supplier risk")
        #expect(try await write(note, version: "1") == .inserted)
        let pending = try await index.read { try $0.pendingEmbeddings(model: "m", limit: 10) }
        try #require(pending.count == 1)
        #expect(try await index.write { try $0.setVectors([[0.5, 0.5]], for: pending[0], model: "m") })

        #expect(try await write(note, version: "2") == .unchanged)
        let versions = try await index.read { try $0.items(withIdentifiers: ["note:1"]).map(\.1.version) }
        #expect(versions == ["2"])
        #expect(try await vectorItems() == 1)

        let moved = Fixtures.item("note:1", title: "Launch plan", text: "supplier risk", modified: clock.now)
        #expect(try await write(moved, version: "3") == .replaced)
        #expect(try await vectorItems() == 1, "the text is the same, so are its vectors")
        #expect(Self.identifiers(try await index.search(SearchQuery("supplier"))) == ["note:1"])

        let rewritten = Fixtures.item("note:1", title: "Launch plan", text: "vendor delay", modified: clock.now)
        #expect(try await write(rewritten, version: "4") == .replaced)
        #expect(try await vectorItems() == 0, "vectors made of the old text are dropped")
        #expect(Self.identifiers(try await index.search(SearchQuery("vendor"))) == ["note:1"])
        #expect(try await index.search(SearchQuery("supplier")).isEmpty)
        #expect(try await index.itemCount() == 1)
    }

    /// An item another owner made (here the record store's projection) cannot be replaced or merged
    /// through the index's API: the whole write is refused and nothing of it is written.
    @Test(arguments: Backend.available)
    func anItemAnotherOwnerMadeIsRefusedAndNothingIsWritten(_ backend: Backend) async throws {
        let opened = try await backend.makeIndex(clock: Fixtures.ManualClock())
        let index = opened.index
        let projected = Fixtures.item("note:1", title: "Projected note", text: "from the records")
        _ = try await index.write { writer in
            try writer.index(projected, origin: ItemOrigin(owner: .records, version: "1"))
        }
        var change = AttributeSet()
        change.title = "Changed by the app"
        for attempt in [
            Fixtures.item("note:1", title: "Replaced by the app", text: "overwritten"),
            SearchableItem(uniqueIdentifier: "note:1", attributeSet: change, isUpdate: true),
        ] {
            await #expect(throws: ReplicaError.self) {
                try await index.indexItems([Fixtures.item("app:1", title: "Written beside it"), attempt])
            }
        }
        let stored = try #require(try await Self.stored(index, "note:1"))
        #expect(stored.attributeSet.title == "Projected note")
        #expect(try await Self.stored(index, "app:1") == nil)
        #expect(try await index.itemCount() == 1)
        do {
            try await index.indexItems([Fixtures.item("note:1", title: "Replaced by the app")])
            Issue.record("the write was not refused")
        } catch let error as ReplicaError {
            #expect(error.code == .notOwner)
        }
    }

    /// An item whose expiration date has passed is never read, found or counted, whether or not it was
    /// purged; a purge removes it, and the items that have not expired stay.
    @Test(arguments: Backend.available)
    func anExpiredItemIsNeitherFoundNorCountedAndIsPurged(_ backend: Backend) async throws {
        let clock = Fixtures.ManualClock()
        let opened = try await backend.makeIndex(clock: clock)
        let index = opened.index
        try await index.indexItems([
            Fixtures.item("soon", title: "Harbour ferry timetable", expiration: clock.now.addingTimeInterval(60)),
            Fixtures.item("later", title: "Harbour walk", expiration: clock.now.addingTimeInterval(3600)),
            Fixtures.item("default", title: "Harbour cafe", expiration: nil),
        ])
        #expect(Set(Self.identifiers(try await index.search(SearchQuery("harbour")))) == ["soon", "later", "default"])
        clock.advance(by: 120)
        #expect(Set(Self.identifiers(try await index.search(SearchQuery("harbour")))) == ["later", "default"])
        #expect(try await Self.stored(index, "soon") == nil)
        #expect(try await index.itemCount() == 2)
        #expect(try await index.purgeExpiredItems() == 1)
        #expect(try await index.purgeExpiredItems() == 0)
        // Thirty days on, the item given no date has expired as Core Spotlight's default says.
        clock.advance(by: 30 * 24 * 3600)
        #expect(Self.identifiers(try await index.search(SearchQuery("harbour"))).isEmpty)
    }

    /// A domain's delete takes the domain and those under it (`a.b` is under `a`), never a domain that
    /// only begins with the same letters, nor an item without a domain.
    @Test(arguments: Backend.available)
    func aDomainsDeleteTakesItAndTheDomainsUnderIt(_ backend: Backend) async throws {
        let opened = try await backend.makeIndex(clock: Fixtures.ManualClock())
        let index = opened.index
        try await index.indexItems([
            Fixtures.item("1", title: "Quarterly report", domain: "mail"),
            Fixtures.item("2", title: "Quarterly report", domain: "mail.inbox"),
            Fixtures.item("3", title: "Quarterly report", domain: "mailbox"),
            Fixtures.item("4", title: "Quarterly report"),
        ])
        #expect(try await index.deleteItems(withDomainIdentifiers: ["mail"]) == 2)
        #expect(Set(Self.identifiers(try await index.search(SearchQuery("quarterly")))) == ["3", "4"])
        var query = SearchQuery("quarterly")
        query.domains = ["mailbox"]
        #expect(Self.identifiers(try await index.search(query)) == ["3"])
        #expect(try await index.deleteItems(withIdentifiers: ["4", "absent"]) == 1)
        #expect(try await index.allItems().map(\.uniqueIdentifier.rawValue) == ["3"])
    }

    /// A batch is written at its end, in one transaction with its client state; a batch that expected
    /// another state writes nothing, and the state stays the one the last batch stored.
    @Test(arguments: Backend.available)
    func aBatchIsWrittenWithItsClientStateOrNotAtAll(_ backend: Backend) async throws {
        let opened = try await backend.makeIndex(clock: Fixtures.ManualClock())
        let index = opened.index
        #expect(try await index.fetchLastClientState() == nil)
        let first = index.beginBatch()
        try first.indexItems([Fixtures.item("a", title: "Alpha"), Fixtures.item("b", title: "Beta")])
        #expect(try await index.itemCount() == 0, "nothing is written before the batch ends")
        try await first.end(expectedClientState: nil, newClientState: Data("1".utf8))
        #expect(try await index.fetchLastClientState() == Data("1".utf8))

        let stale = index.beginBatch()
        try stale.deleteItems(withIdentifiers: ["a"])
        try stale.indexItems([Fixtures.item("c", title: "Gamma")])
        do {
            try await stale.end(expectedClientState: Data("0".utf8), newClientState: Data("2".utf8))
            Issue.record("a batch that expected another state was written")
        } catch let error as ReplicaError {
            #expect(error.code == .clientStateMismatch)
        }
        #expect(try await index.fetchLastClientState() == Data("1".utf8))
        #expect(try await index.allItems().map(\.uniqueIdentifier.rawValue).sorted() == ["a", "b"])

        let next = index.beginBatch()
        try next.deleteItems(withIdentifiers: ["a"])
        try await next.end(clientState: Data("2".utf8))
        #expect(try await index.fetchLastClientState() == Data("2".utf8))
        #expect(try await index.allItems().map(\.uniqueIdentifier.rawValue) == ["b"])
    }

    /// The ranking is written once above the seam, over each backend's BM25 candidates: a word in the
    /// title ranks above the same word in the body, all of the query's words above some, and words near
    /// each other above the same words apart. The order is the same on every backend.
    @Test(arguments: Backend.available)
    func everyBackendRanksTheSameItemsInTheSameOrder(_ backend: Backend) async throws {
        let opened = try await backend.makeIndex(clock: Fixtures.ManualClock())
        let index = opened.index
        let filler = Array(repeating: "the meeting notes went on about other things", count: 6).joined(separator: " ")
        try await index.indexItems([
            Fixtures.item("title", title: "Battery supplier", text: "notes from the call"),
            Fixtures.item("near", title: "Call notes", text: "the battery supplier was late again"),
            Fixtures.item("apart", title: "Weekly notes", text: "battery \(filler) supplier"),
            Fixtures.item("one", title: "Shopping", text: "a battery for the clock"),
            Fixtures.item("none", title: "Garden", text: "roses and tulips"),
        ])
        let ranked = Self.identifiers(try await index.search(SearchQuery("battery supplier")))
        #expect(ranked == ["title", "near", "apart", "one"])
        let scores = try await index.search(SearchQuery("battery supplier")).map(\.score)
        #expect(scores == scores.sorted(by: >))
        #expect(scores.allSatisfy { $0 > 0 && $0 <= 1 })
    }

    /// A search-eligible activity about an item not indexed stands in as an item of its own, found by its
    /// title, until the item is indexed; then the item alone is found. Activities donated again count
    /// their views, and the latest date stays.
    @Test(arguments: Backend.available)
    func anActivityStandsInForItsItemUntilTheItemIsIndexed(_ backend: Backend) async throws {
        let clock = Fixtures.ManualClock()
        let opened = try await backend.makeIndex(clock: clock)
        let index = opened.index
        let viewed = UserActivity(
            activityType: "org.notes.view", persistentIdentifier: "view-1", title: "Roadmap review",
            relatedUniqueIdentifier: "doc:1", date: clock.now, isEligibleForSearch: true,
            isEligibleForPrediction: true)
        try await index.donateUserActivities([viewed])
        #expect(Self.identifiers(try await index.search(SearchQuery("roadmap"))) == ["activity:view-1"])
        try await index.indexItems([Fixtures.item("doc:1", title: "Roadmap", text: "the plan for next year")])
        #expect(Self.identifiers(try await index.search(SearchQuery("roadmap"))) == ["doc:1"])
        var earlier = viewed
        earlier.date = clock.now.addingTimeInterval(-3600)
        try await index.donateUserActivities([earlier])
        let recent = try await index.recentActivities()
        #expect(recent.map(\.identifier) == ["doc:1"])
        #expect(recent.first?.views == 2)
        #expect(recent.first?.lastViewed == clock.now)
        #expect(try await index.deleteSavedUserActivities(withPersistentIdentifiers: ["view-1", "absent"]) == 1)
        #expect(try await index.recentActivities().isEmpty)
    }

    /// What an index keeps beside its items (a consumer's checkpoint, tombstones, quarantined records, a
    /// source's entries) is written in the same transaction as the items, and rolled back with them.
    @Test(arguments: Backend.available)
    func whatIsKeptBesideTheItemsCommitsAndRollsBackWithThem(_ backend: Backend) async throws {
        let opened = try await backend.makeIndex(clock: Fixtures.ManualClock())
        let index = opened.index
        struct Abandoned: Error {}
        for commits in [false, true] {
            do {
                try await index.write { writer in
                    try writer.index(
                        Fixtures.item("file:a", title: "Alpha"), origin: ItemOrigin(owner: .source("files")))
                    try writer.setCheckpoint("files", "42")
                    try writer.setTombstone("note:gone", version: 7)
                    try writer.setTombstone("note:gone", version: 3)
                    try writer.quarantine("note:bad", kind: "note", recordID: "bad", version: 3, reason: "no title")
                    try writer.setEntry(SourceEntry(key: "a.txt", stamp: "s1"), source: "files")
                    try writer.setEntry(SourceEntry(key: "b.bin", stamp: "s2", skipReason: "binary"), source: "files")
                    if !commits { throw Abandoned() }
                }
                #expect(commits)
            } catch is Abandoned {
                #expect(!commits)
            }
            let (checkpoint, entries, skipped, quarantined, count) = try await index.read { reader in
                (
                    try reader.checkpoint("files"), try reader.sourceEntries("files"),
                    try reader.skippedEntries("files").map { "\($0.0)=\($0.1)" },
                    try reader.quarantined(account: "alice").map(\.id), try reader.count()
                )
            }
            let tombstone = try await index.write { try $0.tombstoneVersion("note:gone") }
            if commits {
                #expect(checkpoint == "42")
                #expect(
                    entries == [
                        "a.txt": SourceEntry(key: "a.txt", stamp: "s1"),
                        "b.bin": SourceEntry(key: "b.bin", stamp: "s2", skipReason: "binary"),
                    ])
                #expect(skipped == ["binary=1"])
                #expect(quarantined == ["bad"])
                #expect(count == 1)
                #expect(tombstone == 7, "a deletion remembers the higher of its versions")
            } else {
                #expect(checkpoint == nil && entries.isEmpty && skipped.isEmpty && quarantined.isEmpty)
                #expect(count == 0 && tombstone == nil)
            }
        }
        try await index.write { writer in
            try writer.forgetSource(named: "files", owner: .source("files"), checkpoint: "files")
            try writer.releaseFromQuarantine("note:bad")
            try writer.clearTombstone("note:gone")
        }
        let after = try await index.read { reader in
            (try reader.checkpoint("files"), try reader.sourceEntries("files").count, try reader.count())
        }
        #expect(after.0 == nil && after.1 == 0 && after.2 == 0)
        #expect(try await index.write { try $0.hasQuarantinedRecords() } == false)
        #expect(try await index.write { try $0.tombstoneVersion("note:gone") } == nil)
    }
}
