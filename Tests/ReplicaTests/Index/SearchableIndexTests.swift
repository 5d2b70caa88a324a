import Foundation
import ReplicaSQLite
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex
@testable import ReplicaSQLiteStore

/// Runs on both backends (``TestBackend``); the checks of the SQLite file's own tables and plans run on SQLite only.
@Suite struct SearchableIndexTests {
    let clock = Fixtures.ManualClock()

    /// What a test works on: a store with alice signed in, and her index "Notes".
    struct Fixture {
        let storage: TestStore
        var store: Store { storage.store }
        let index: SearchableIndex

        func identifiers(
            _ text: String, in index: SearchableIndex? = nil, _ adjust: (inout SearchQuery) -> Void = { _ in }
        ) async throws -> [String] {
            var query = SearchQuery(text)
            adjust(&query)
            return try await (index ?? self.index).search(query).map(\.item.uniqueIdentifier.rawValue)
        }

        /// A connection of the test's own to the index file, to read what the index API does not show (SQLite only).
        func indexFile() throws -> Connection { try Connection(path: indexPath) }

        /// Where the index's file is.
        var indexPath: String { storage.directory.path + "/accounts/alice/indexes/Notes.sqlite" }

        /// The full-text table's settings, read from the index file itself.
        func fullTextSettings() throws -> [String: String] {
            let connection = try indexFile()
            return Dictionary(
                uniqueKeysWithValues: try connection.prepare(
                    "SELECT k, CAST(v AS TEXT) FROM items_text_config WHERE k != 'version'"
                )
                .rows { ($0.text(0), $0.text(1)) })
        }

        /// How many segments FTS5's index of the file is in.
        func fullTextSegments() throws -> Int {
            try ReplicaTestSupport.fullTextSegments(ofIndexFile: indexPath)
        }

        /// The names of the indexes on the items table, read from the index file itself.
        func itemIndexes() throws -> Set<String> {
            let connection = try indexFile()
            return Set(
                try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items'")
                    .rows { $0.text(0) })
        }
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore(configuration: Fixtures.configuration(clock: clock))
        for account: AccountID in ["alice"] { try await storage.store.signIn(account) }
        return Fixture(storage: storage, index: try await storage.store.index(named: "Notes", account: "alice"))
    }

    // MARK: Index, replace, update

    @Test(arguments: TestBackend.available)
    func indexingTheSameIdentifierReplacesTheItem(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([Fixtures.item("n1", title: "Launch plan", text: "supplier risk")])
        try await fixture.index.indexItems([Fixtures.item("n1", title: "Budget", text: "numbers only")])
        #expect(try await fixture.index.itemCount() == 1)
        #expect(try await fixture.identifiers("supplier").isEmpty)
        #expect(try await fixture.identifiers("numbers") == ["n1"])
        let stored = try await fixture.index.items(withIdentifiers: ["n1"])
        #expect(stored.first?.attributeSet.title == "Budget")
        #expect(stored.first?.attributeSet.textContent == "numbers only")
    }

    @Test(arguments: TestBackend.available)
    func anUpdateMergesIntoTheStoredItem(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = "Launch plan"
        attributes.textContent = "supplier risk"
        attributes.keywords = ["q3"]
        try await fixture.index.indexItems([
            SearchableItem(
                uniqueIdentifier: "n1", domainIdentifier: "account.alice.notes", attributeSet: attributes,
                expirationDate: .distantFuture)
        ])

        var change = AttributeSet()
        change.title = "Launch plan v2"
        change.keywords = nil
        try await fixture.index.indexItems([
            SearchableItem(uniqueIdentifier: "n1", attributeSet: change, isUpdate: true)
        ])

        let stored = try #require(try await fixture.index.items(withIdentifiers: ["n1"]).first)
        #expect(stored.attributeSet.title == "Launch plan v2")
        #expect(stored.attributeSet.textContent == "supplier risk")
        #expect(stored.attributeSet.keywords == nil)
        #expect(stored.attributeSet.contentType == .plainText)
        #expect(stored.domainIdentifier == "account.alice.notes")
        #expect(stored.expirationDate == .distantFuture)
        #expect(try await fixture.identifiers("supplier") == ["n1"])
        #expect(try await fixture.identifiers("q3").isEmpty)
    }

    @Test(
        arguments: TestBackend.available,
        [
            ["title"], ["title", "displayName"], ["subject"], ["title", "subject", "contentDescription"],
            ["contentDescription"], ["contentDescription", "path"], ["displayName", "comment"], [],
        ])
    func storedAttributesReadBackExactly(_ backend: TestBackend, keys: [String]) async throws {
        let fixture = try await make(backend)
        var attributes = AttributeSet(contentType: keys.isEmpty ? nil : .markdown)
        for key in keys { attributes[AttributeKey(key)] = .text("\(key) value\nwith a second line") }
        attributes.keywords = ["k1", "k2"]
        attributes.textContent = "body"
        attributes.contentModificationDate = Date(timeIntervalSince1970: 1_795_168_800)
        attributes[AttributeKey("com.example.count")] = .number(3)
        let item = SearchableItem(
            uniqueIdentifier: "n", domainIdentifier: "d", attributeSet: attributes, expirationDate: .distantFuture)
        try await fixture.index.indexItems([item])
        #expect(try await fixture.index.items(withIdentifiers: ["n"]) == [item])
        let found = try #require(try await fixture.index.search(SearchQuery("body")).first)
        var withoutText = attributes
        withoutText.textContent = nil
        #expect(found.item.attributeSet.keys == withoutText.keys)
    }

    @Test(arguments: TestBackend.available)
    func anUpdateOfAMissingItemIsIgnored(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        var change = AttributeSet()
        change.title = "Ghost"
        try await fixture.index.indexItems([
            SearchableItem(uniqueIdentifier: "missing", attributeSet: change, isUpdate: true)
        ])
        #expect(try await fixture.index.itemCount() == 0)
    }

    @Test(arguments: TestBackend.available)
    func aBadItemStopsTheWholeCallBeforeAnythingIsWritten(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let good = Fixtures.item("good", text: "fine")
        let bad = Fixtures.item("", text: "no identifier")
        await #expect(throws: ReplicaError.self) { try await fixture.index.indexItems([good, bad]) }
        #expect(try await fixture.index.itemCount() == 0)
    }

    // MARK: Deletes

    @Test(arguments: TestBackend.available)
    func deletesByIdentifier(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([Fixtures.item("a", text: "alpha"), Fixtures.item("b", text: "alpha")])
        #expect(try await fixture.index.deleteItems(withIdentifiers: ["a", "unknown"]) == 1)
        #expect(try await fixture.identifiers("alpha") == ["b"])
    }

    @Test(arguments: TestBackend.available)
    func aDomainDeleteCoversEveryDomainUnderIt(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("1", text: "word", domain: "account.a"),
            Fixtures.item("2", text: "word", domain: "account.a.notes"),
            Fixtures.item("3", text: "word", domain: "account.a.notes.archive"),
            Fixtures.item("4", text: "word", domain: "account.ab"),
            Fixtures.item("5", text: "word", domain: "account.a-b"),
            Fixtures.item("6", text: "word"),
        ])
        #expect(try await fixture.index.deleteItems(withDomainIdentifiers: ["account.a"]) == 3)
        #expect(try await fixture.identifiers("word").sorted() == ["4", "5", "6"])
    }

    @Test(arguments: TestBackend.available)
    func deleteAllEmptiesTheIndexButKeepsItUsable(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems(
            (0..<50).map { Fixtures.item("i\($0)", title: "Title \($0)", text: "common words") })
        // The SQLite file's full-text settings are read from the file itself.
        let settings = backend == .sqlite ? try fixture.fullTextSettings() : [:]
        if backend == .sqlite { #expect(settings["hashsize"] == "16777216") }
        #expect(try await fixture.index.deleteAllItems() == 50)
        // The full-text table is recreated with every setting it had (the hash size, the field weights).
        if backend == .sqlite { #expect(try fixture.fullTextSettings() == settings) }
        #expect(try await fixture.index.itemCount() == 0)
        #expect(try await fixture.identifiers("common").isEmpty)
        try await fixture.index.indexItems([Fixtures.item("after", title: "Launch", text: "common")])
        // Field weights survive the rebuild of the full-text table: a title match ranks first.
        try await fixture.index.indexItems([Fixtures.item("body", title: "Other", text: "launch launch")])
        #expect(try await fixture.identifiers("launch") == ["after", "body"])
    }

    // MARK: Bulk loads

    @Test(arguments: TestBackend.available)
    func aBulkLoadIntoAnEmptyIndexRebuildsItsIndexesAndIdentifiersStayUnique(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // The SQLite file's indexes are read from the file itself.
        let before = backend == .sqlite ? try fixture.itemIndexes() : []
        if backend == .sqlite { #expect(before.isSuperset(of: ["items_identifier", "items_domain", "items_expires"])) }
        // 20,000 items into an empty index: the secondary indexes, the identifier's too, are built at the end.
        try await fixture.index.indexItems(
            (0..<20_000).map {
                Fixtures.item("n\($0)", title: "note \($0)", text: $0 == 7 ? "needle" : "hay", domain: "d.\($0 % 3)")
            })
        if backend == .sqlite { #expect(try fixture.itemIndexes() == before) }
        #expect(try await fixture.index.itemCount() == 20_000)
        #expect(try await fixture.identifiers("needle") == ["n7"])
        try await fixture.index.indexItems([Fixtures.item("n7", title: "note 7", text: "moved")])
        #expect(try await fixture.index.itemCount() == 20_000)
        #expect(try await fixture.identifiers("needle").isEmpty)
        #expect(try await fixture.identifiers("moved") == ["n7"])
        #expect(try await fixture.index.deleteItems(withDomainIdentifiers: ["d.1"]) == 6_666)  // n7 is in no domain now
    }

    /// A load's transactions write FTS5's segments without merging them (the lists' build after it merges
    /// them once); its settings are set back in each transaction, so the next write outside it merges, and
    /// searches in between find what it wrote (SQLite 3.40 fails the first ranked query of a connection
    /// that finds them changed: the reader asks again).
    @Test func aLoadWritesFullTextSegmentsWithoutMergingThem() async throws {
        let fixture = try await make(.sqlite)
        try await fixture.index.indexItems([Fixtures.item("first", text: "shared")])
        // A reader of the test's own has read FTS5's settings, which each transaction of the load changes.
        let reader = SQLiteIndexReader(connection: try fixture.indexFile(), vectorCache: nil, now: clock.now)
        func found() throws -> Int {
            var query = SearchQuery("shared", limit: 200)
            query.typoTolerance = false
            return try reader.connection.transaction(.deferred) {
                try reader.matches(query, pattern: try reader.pattern(of: query), limit: 200).found.count
            }
        }
        #expect(try found() == 1)
        let settings = try fixture.fullTextSettings()
        let before = try fixture.fullTextSegments()
        try await fixture.store.load(accounts: ["alice"]) {
            for batch in 0..<20 {
                try await fixture.index.indexItems(
                    (0..<5).map { Fixtures.item("b\(batch)-\($0)", text: "shared word\(batch)") })
            }
            // Outside a load FTS5 merges a level of 16 segments at once (`crisismerge`).
            #expect(try fixture.fullTextSegments() == before + 20)
            #expect(try found() == 101)
        }
        #expect(try fixture.fullTextSettings() == settings)
        #expect(try fixture.fullTextSegments() == before + 20)
        // FTS5's own settings are in force again: a level of 16 segments or more is merged at the next write.
        try await fixture.index.indexItems([Fixtures.item("after", text: "shared word7")])
        #expect(try fixture.fullTextSegments() <= 2)
        #expect(try await fixture.identifiers("word7").sorted() == ["after"] + (0..<5).map { "b7-\($0)" })
        #expect(try found() == 102)
    }

    /// A store builds no ranking lists for an account whose load is still running (a watched tree's first
    /// scan, with the watcher's background pass asking every two seconds): they would be built again every
    /// few hundred items it writes. They are built once it ends.
    @Test(arguments: TestBackend.available)
    func rankingListsWaitForALoadToEnd(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.load(accounts: ["alice"]) {
            try await fixture.index.indexItems((0..<20).map { Fixtures.item("i\($0)", text: "shared word\($0)") })
            #expect(try await fixture.store.rebuildStaleRankingLists(minimumItems: 10) == 0)
            #expect(try await fixture.store.rebuildStaleRankingLists(accounts: ["alice"], minimumItems: 10) == 0)
        }
        #expect(try await fixture.store.rebuildStaleRankingLists(minimumItems: 10) == 1)
        #expect(try await fixture.store.rebuildStaleRankingLists(minimumItems: 10) == 0)
    }

    /// The watcher's background pass builds the lists a load held back as soon as the load ends, not at
    /// its next pass (an hour away here: waiting for it would miss the deadline).
    @Test func theBackgroundPassBuildsTheListsWhenALoadEnds() async throws {
        let fixture = try await make(.sqlite)
        let service = EmbeddingService(store: fixture.store, rankingListsMinimumItems: 10, interval: .seconds(3_600))
        let running = Task { try await service.run() }
        defer { running.cancel() }
        try await fixture.store.load(accounts: ["alice"]) {
            try await fixture.index.indexItems((0..<20).map { Fixtures.item("i\($0)", text: "shared word\($0)") })
        }
        #expect(try await eventually { try await !fixture.index.rankingListsAreStale(minimumItems: 10) })
    }

    /// An app's main-actor code runs its import in a load, the closure counting on the main actor; the
    /// vocabulary is added up when it ends (a typo finds the words).
    @MainActor @Test func aMainActorImportRunsInALoad() async throws {
        let fixture = try await make(.sqlite)
        var imported = 0
        try await fixture.store.load(accounts: ["alice"]) {
            for batch in 0..<3 {
                try await fixture.index.indexItems(
                    (0..<5).map { Fixtures.item("m\(batch)-\($0)", text: "harbour inspection") })
                imported += 5
            }
        }
        #expect(imported == 15)
        #expect(try await fixture.identifiers("inspektion").count == 15)
    }

    /// Within a load, each item binds only the values that differ from the item before it, so items that
    /// differ from their neighbours in every field must each be stored, and found, exactly as given.
    @Test(arguments: TestBackend.available)
    func itemsThatDifferFromTheirNeighboursInEveryFieldAreStoredAsGiven(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let now = clock.now
        func item(_ n: Int, text: String = "body") -> SearchableItem {
            var attributes = AttributeSet(contentType: n % 2 == 0 ? .plainText : .markdown)
            attributes.title = "title \(n)"
            attributes.textContent = text
            if n % 3 == 0 { attributes.keywords = ["kw\(n % 4)"] }
            if n % 5 < 2 { attributes.authorNames = ["Author\(n % 2)"] }
            if n % 4 == 1 { attributes.contentDescription = "about\(n % 3)" }
            if n % 7 < 3 { attributes.contentModificationDate = now.addingTimeInterval(Double(n % 2)) }
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier("i\(n)"),
                domainIdentifier: n % 3 == 1 ? nil : DomainIdentifier(rawValue: "d.\(n % 2)"),
                attributeSet: attributes,
                expirationDate: n % 2 == 0 ? now.addingTimeInterval(3600 + Double(n % 3)) : .distantFuture)
        }
        // More than one chunk of the load pipeline, then single items in later transactions.
        var expected = (0..<1_500).map { item($0) }
        try await fixture.index.indexItems(expected)
        for n in [3, 4, 7] {
            expected[n] = item(n + 1, text: "changed")
            expected[n].uniqueIdentifier = ItemIdentifier("i\(n)")
            try await fixture.index.indexItems([expected[n]])
        }
        let stored = Dictionary(
            uniqueKeysWithValues: try await fixture.index.allItems().map { ($0.uniqueIdentifier, $0) })
        #expect(stored.count == expected.count)
        for item in expected {
            let found = stored[item.uniqueIdentifier]
            #expect(found?.domainIdentifier == item.domainIdentifier, "\(item.uniqueIdentifier)")
            #expect(found?.expirationDate == item.expirationDate, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.contentType == item.attributeSet.contentType, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.keywords == item.attributeSet.keywords, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.authorNames == item.attributeSet.authorNames, "\(item.uniqueIdentifier)")
            #expect(
                found?.attributeSet.contentDescription == item.attributeSet.contentDescription,
                "\(item.uniqueIdentifier)")
            #expect(
                found?.attributeSet.contentModificationDate == item.attributeSet.contentModificationDate,
                "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.textContent == item.attributeSet.textContent, "\(item.uniqueIdentifier)")
        }
        // The full-text index holds each item's own keywords, people and description.
        func expectedMatches(_ word: String, _ value: (AttributeSet) -> [String]?) -> Set<String> {
            Set(expected.filter { value($0.attributeSet)?.contains(word) == true }.map(\.uniqueIdentifier.rawValue))
        }
        for word in ["kw0", "kw1", "kw2", "kw3"] {
            #expect(
                Set(try await fixture.identifiers(word) { $0.limit = 2_000 }) == expectedMatches(word, \.keywords),
                "\(word)")
        }
        for word in ["Author0", "Author1"] {
            #expect(
                Set(try await fixture.identifiers(word) { $0.limit = 2_000 }) == expectedMatches(word, \.authorNames),
                "\(word)")
        }
        for word in ["about0", "about1", "about2"] {
            #expect(
                Set(try await fixture.identifiers(word) { $0.limit = 2_000 })
                    == expectedMatches(word, { $0.contentDescription.map { [$0] } }), "\(word)")
        }
        #expect(Set(try await fixture.identifiers("changed")) == ["i3", "i4", "i7"])
        // The replaced items' old entries are gone from the full-text index.
        let body = try await fixture.identifiers("body") { $0.limit = 2_000 }
        #expect(body.count == 1_497)
        #expect(Set(body).isDisjoint(with: ["i3", "i4", "i7"]))
    }

    @Test(arguments: TestBackend.available)
    func aBulkLoadThatRepeatsAnIdentifierKeepsTheLastItem(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let items =
            (0..<20_000).map { Fixtures.item("n\($0)", title: "note \($0)", text: "first") }
            + [Fixtures.item("n3", title: "note 3", text: "second")]
        try await fixture.index.indexItems(items)
        #expect(try await fixture.index.itemCount() == 20_000)
        #expect(try await fixture.identifiers("second") == ["n3"])
    }

    // MARK: Expiration

    @Test(arguments: TestBackend.available)
    func anExpiredItemIsNeverReturnedAndIsPurged(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let now = clock.now
        try await fixture.index.indexItems([
            Fixtures.item("soon", text: "ephemeral", expiration: now.addingTimeInterval(60)),
            Fixtures.item("later", text: "ephemeral", expiration: now.addingTimeInterval(3600)),
        ])
        #expect(try await fixture.identifiers("ephemeral").sorted() == ["later", "soon"])
        // Both given vectors, so the counts of semantic search see the expiry too.
        let pending = try await fixture.index.read { try $0.pendingEmbeddings(model: "m", limit: 10) }
        try await fixture.index.write(purgingExpired: false) { writer in
            for item in pending { _ = try writer.setVectors([[0.5, 0.5]], for: item, model: "m") }
        }
        #expect(try await fixture.index.embeddingCounts(model: "m") == (items: 2, passages: 2, backlog: 0))
        clock.advance(by: 61)
        #expect(try await fixture.identifiers("ephemeral") == ["later"])
        #expect(try await fixture.index.itemCount() == 1)
        #expect(
            try await fixture.index.embeddingCounts(model: "m") == (items: 1, passages: 2, backlog: 0),
            "the expired item is counted neither as embedded nor as waiting (its vectors go when it is purged)")
        #expect(try await fixture.index.embeddingCounts(model: "other") == (items: 0, passages: 0, backlog: 1))
        #expect(try await fixture.index.items(withIdentifiers: ["soon"]).isEmpty)
        var filterOnly = SearchQuery()
        filterOnly.limit = 10
        #expect(try await fixture.index.search(filterOnly).map(\.item.uniqueIdentifier) == ["later"])
        #expect(try await fixture.index.purgeExpiredItems() == 1)
        #expect(try await fixture.index.purgeExpiredItems() == 0)
    }

    /// Semantic search looks up the expired items on every query: through the partial index, not by
    /// reading every row (which cost 21 ms a search at 100,000 items). SQLite only: SQLite's query plan.
    @Test func findingTheExpiredItemsReadsThePartialIndex() async throws {
        let fixture = try await make(.sqlite)
        try await fixture.index.indexItems([Fixtures.item("n", text: "kept")])
        let connection = try fixture.indexFile()
        let plan = try connection.prepare(
            "EXPLAIN QUERY PLAN SELECT id FROM items WHERE \(SQLiteIndexReader.hasExpired)"
        )
        .rows([.real(clock.now.timeIntervalSince1970)]) { $0.text(3) }
        #expect(plan.contains { $0.contains("USING COVERING INDEX items_expires") }, "\(plan)")
    }

    @Test(arguments: TestBackend.available)
    func anItemWithoutExpirationGetsTheDefaultLifetime(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([Fixtures.item("n", text: "thirty days", expiration: nil)])
        let stored = try #require(try await fixture.index.items(withIdentifiers: ["n"]).first)
        #expect(stored.expirationDate == clock.now.addingTimeInterval(30 * 24 * 3600))
        clock.advance(by: 30 * 24 * 3600 + 1)
        #expect(try await fixture.identifiers("thirty").isEmpty)
    }

    // MARK: Batches and client state

    @Test(arguments: TestBackend.available)
    func aBatchWritesNothingUntilItEndsThenEverythingWithItsState(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        #expect(try await fixture.index.fetchLastClientState() == nil)
        let batch = fixture.index.beginBatch()
        try batch.indexItems([Fixtures.item("a", text: "batched"), Fixtures.item("b", text: "batched")])
        try batch.deleteItems(withIdentifiers: ["b"])
        #expect(try await fixture.index.itemCount() == 0)
        try await batch.end(clientState: Data("cursor=2".utf8))
        #expect(try await fixture.identifiers("batched") == ["a"])
        #expect(try await fixture.index.fetchLastClientState() == Data("cursor=2".utf8))
        #expect(performing: { try batch.indexItems([]) }, throws: { ($0 as? ReplicaError)?.code == .batchEnded })
    }

    @Test(arguments: TestBackend.available)
    func aCompareAndSwapBatchEndsOnlyFromTheExpectedState(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let first = fixture.index.beginBatch()
        try first.indexItems([Fixtures.item("a", text: "one")])
        try await first.end(expectedClientState: nil, newClientState: Data("1".utf8))

        let stale = fixture.index.beginBatch()
        try stale.indexItems([Fixtures.item("b", text: "two")])
        await #expect(
            performing: {
                try await stale.end(expectedClientState: nil, newClientState: Data("2".utf8))
            }, throws: { ($0 as? ReplicaError)?.code == .clientStateMismatch })
        #expect(try await fixture.index.items(withIdentifiers: ["b"]).isEmpty)
        #expect(try await fixture.index.fetchLastClientState() == Data("1".utf8))

        let next = fixture.index.beginBatch()
        try next.indexItems([Fixtures.item("b", text: "two")])
        try await next.end(expectedClientState: Data("1".utf8), newClientState: Data("2".utf8))
        #expect(try await fixture.index.fetchLastClientState() == Data("2".utf8))
        #expect(try await fixture.index.itemCount() == 2)
    }

    @Test(arguments: TestBackend.available)
    func refusesAnOversizedClientState(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let batch = fixture.index.beginBatch()
        await #expect(throws: ReplicaError.self) {
            try await batch.end(clientState: Data(count: SearchableIndex.maximumClientStateSize + 1))
        }
    }
}
