import Foundation
import Testing
import ReplicaSQLite
@testable import Replica
@testable import ReplicaIndex
@testable import ReplicaCore
import ReplicaTestSupport

@Suite struct SearchableIndexTests {
    let directory: TemporaryDirectory
    let clock = Fixtures.ManualClock()
    let store: Store
    let index: SearchableIndex

    init() throws {
        directory = try TemporaryDirectory()
        store = try Store(directory: directory.url, configuration: Fixtures.configuration(clock: clock))
        for account: AccountID in ["alice"] { try store.signIn(account) }
        index = try store.index(named: "Notes", account: "alice")
    }

    func identifiers(_ text: String, in index: SearchableIndex? = nil, _ adjust: (inout SearchQuery) -> Void = { _ in }) async throws -> [String] {
        var query = SearchQuery(text)
        adjust(&query)
        return try await (index ?? self.index).search(query).map(\.item.uniqueIdentifier.rawValue)
    }

    // MARK: Index, replace, update

    @Test func indexingTheSameIdentifierReplacesTheItem() async throws {
        try await index.indexItems([Fixtures.item("n1", title: "Launch plan", text: "supplier risk")])
        try await index.indexItems([Fixtures.item("n1", title: "Budget", text: "numbers only")])
        #expect(try await index.itemCount() == 1)
        #expect(try await identifiers("supplier").isEmpty)
        #expect(try await identifiers("numbers") == ["n1"])
        let stored = try await index.items(withIdentifiers: ["n1"])
        #expect(stored.first?.attributeSet.title == "Budget")
        #expect(stored.first?.attributeSet.textContent == "numbers only")
    }

    @Test func anUpdateMergesIntoTheStoredItem() async throws {
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = "Launch plan"
        attributes.textContent = "supplier risk"
        attributes.keywords = ["q3"]
        try await index.indexItems([SearchableItem(uniqueIdentifier: "n1", domainIdentifier: "account.alice.notes", attributeSet: attributes, expirationDate: .distantFuture)])

        var change = AttributeSet()
        change.title = "Launch plan v2"
        change.keywords = nil
        try await index.indexItems([SearchableItem(uniqueIdentifier: "n1", attributeSet: change, isUpdate: true)])

        let stored = try #require(try await index.items(withIdentifiers: ["n1"]).first)
        #expect(stored.attributeSet.title == "Launch plan v2")
        #expect(stored.attributeSet.textContent == "supplier risk")
        #expect(stored.attributeSet.keywords == nil)
        #expect(stored.attributeSet.contentType == .plainText)
        #expect(stored.domainIdentifier == "account.alice.notes")
        #expect(stored.expirationDate == .distantFuture)
        #expect(try await identifiers("supplier") == ["n1"])
        #expect(try await identifiers("q3").isEmpty)
    }

    @Test(arguments: [
        ["title"], ["title", "displayName"], ["subject"], ["title", "subject", "contentDescription"],
        ["contentDescription"], ["contentDescription", "path"], ["displayName", "comment"], [],
    ])
    func storedAttributesReadBackExactly(keys: [String]) async throws {
        var attributes = AttributeSet(contentType: keys.isEmpty ? nil : .markdown)
        for key in keys { attributes[AttributeKey(key)] = .text("\(key) value\nwith a second line") }
        attributes.keywords = ["k1", "k2"]
        attributes.textContent = "body"
        attributes.contentModificationDate = Date(timeIntervalSince1970: 1_795_168_800)
        attributes[AttributeKey("com.example.count")] = .number(3)
        let item = SearchableItem(uniqueIdentifier: "n", domainIdentifier: "d", attributeSet: attributes, expirationDate: .distantFuture)
        try await index.indexItems([item])
        #expect(try await index.items(withIdentifiers: ["n"]) == [item])
        let found = try #require(try await index.search(SearchQuery("body")).first)
        var withoutText = attributes
        withoutText.textContent = nil
        #expect(found.item.attributeSet.keys == withoutText.keys)
    }

    @Test func anUpdateOfAMissingItemIsIgnored() async throws {
        var change = AttributeSet()
        change.title = "Ghost"
        try await index.indexItems([SearchableItem(uniqueIdentifier: "missing", attributeSet: change, isUpdate: true)])
        #expect(try await index.itemCount() == 0)
    }

    @Test func aBadItemStopsTheWholeCallBeforeAnythingIsWritten() async throws {
        let good = Fixtures.item("good", text: "fine")
        let bad = Fixtures.item("", text: "no identifier")
        await #expect(throws: ReplicaError.self) { try await index.indexItems([good, bad]) }
        #expect(try await index.itemCount() == 0)
    }

    // MARK: Deletes

    @Test func deletesByIdentifier() async throws {
        try await index.indexItems([Fixtures.item("a", text: "alpha"), Fixtures.item("b", text: "alpha")])
        #expect(try await index.deleteItems(withIdentifiers: ["a", "unknown"]) == 1)
        #expect(try await identifiers("alpha") == ["b"])
    }

    @Test func aDomainDeleteCoversEveryDomainUnderIt() async throws {
        try await index.indexItems([
            Fixtures.item("1", text: "word", domain: "account.a"),
            Fixtures.item("2", text: "word", domain: "account.a.notes"),
            Fixtures.item("3", text: "word", domain: "account.a.notes.archive"),
            Fixtures.item("4", text: "word", domain: "account.ab"),
            Fixtures.item("5", text: "word", domain: "account.a-b"),
            Fixtures.item("6", text: "word"),
        ])
        #expect(try await index.deleteItems(withDomainIdentifiers: ["account.a"]) == 3)
        #expect(try await identifiers("word").sorted() == ["4", "5", "6"])
    }

    /// The full-text table's settings, read from the index file itself.
    func fullTextSettings() throws -> [String: String] {
        let connection = try indexFile()
        return Dictionary(uniqueKeysWithValues: try connection.prepare("SELECT k, CAST(v AS TEXT) FROM items_text_config WHERE k != 'version'")
            .rows { ($0.text(0), $0.text(1)) })
    }

    @Test func deleteAllEmptiesTheIndexButKeepsItUsable() async throws {
        try await index.indexItems((0..<50).map { Fixtures.item("i\($0)", title: "Title \($0)", text: "common words") })
        let settings = try fullTextSettings()
        #expect(settings["hashsize"] == "16777216")
        #expect(try await index.deleteAllItems() == 50)
        // The full-text table is recreated with every setting it had (the hash size, the field weights).
        #expect(try fullTextSettings() == settings)
        #expect(try await index.itemCount() == 0)
        #expect(try await identifiers("common").isEmpty)
        try await index.indexItems([Fixtures.item("after", title: "Launch", text: "common")])
        // Field weights survive the rebuild of the full-text table: a title match ranks first.
        try await index.indexItems([Fixtures.item("body", title: "Other", text: "launch launch")])
        #expect(try await identifiers("launch") == ["after", "body"])
    }

    // MARK: Bulk loads

    /// A connection of the test's own to the index file, to read what the index API does not show.
    func indexFile() throws -> Connection {
        try Connection(path: directory.path + "/accounts/alice/indexes/Notes.sqlite")
    }

    /// The names of the indexes on the items table, read from the index file itself.
    func itemIndexes() throws -> Set<String> {
        let connection = try indexFile()
        return Set(try connection.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'items'").rows { $0.text(0) })
    }

    @Test func aBulkLoadIntoAnEmptyIndexRebuildsItsIndexesAndIdentifiersStayUnique() async throws {
        let before = try itemIndexes()
        #expect(before.isSuperset(of: ["items_identifier", "items_domain", "items_expires"]))
        // 20,000 items into an empty index: the secondary indexes, the identifier's too, are built at the end.
        try await index.indexItems((0..<20_000).map {
            Fixtures.item("n\($0)", title: "note \($0)", text: $0 == 7 ? "needle" : "hay", domain: "d.\($0 % 3)")
        })
        #expect(try itemIndexes() == before)
        #expect(try await index.itemCount() == 20_000)
        #expect(try await identifiers("needle") == ["n7"])
        try await index.indexItems([Fixtures.item("n7", title: "note 7", text: "moved")])
        #expect(try await index.itemCount() == 20_000)
        #expect(try await identifiers("needle").isEmpty)
        #expect(try await identifiers("moved") == ["n7"])
        #expect(try await index.deleteItems(withDomainIdentifiers: ["d.1"]) == 6_666)  // n7 is in no domain now
    }

    /// Within a load, each item binds only the values that differ from the item before it, so items that
    /// differ from their neighbours in every field must each be stored, and found, exactly as given.
    @Test func itemsThatDifferFromTheirNeighboursInEveryFieldAreStoredAsGiven() async throws {
        let now = clock.now
        func item(_ n: Int, text: String = "body") -> SearchableItem {
            var attributes = AttributeSet(contentType: n % 2 == 0 ? .plainText : .markdown)
            attributes.title = "title \(n)"
            attributes.textContent = text
            if n % 3 == 0 { attributes.keywords = ["kw\(n % 4)"] }
            if n % 5 < 2 { attributes.authorNames = ["Author\(n % 2)"] }
            if n % 4 == 1 { attributes.contentDescription = "about\(n % 3)" }
            if n % 7 < 3 { attributes.contentModificationDate = now.addingTimeInterval(Double(n % 2)) }
            return SearchableItem(uniqueIdentifier: ItemIdentifier("i\(n)"),
                                  domainIdentifier: n % 3 == 1 ? nil : DomainIdentifier(rawValue: "d.\(n % 2)"),
                                  attributeSet: attributes,
                                  expirationDate: n % 2 == 0 ? now.addingTimeInterval(3600 + Double(n % 3)) : .distantFuture)
        }
        // More than one chunk of the load pipeline, then single items in later transactions.
        var expected = (0..<1_500).map { item($0) }
        try await index.indexItems(expected)
        for n in [3, 4, 7] {
            expected[n] = item(n + 1, text: "changed")
            expected[n].uniqueIdentifier = ItemIdentifier("i\(n)")
            try await index.indexItems([expected[n]])
        }
        let stored = Dictionary(uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0) })
        #expect(stored.count == expected.count)
        for item in expected {
            let found = stored[item.uniqueIdentifier]
            #expect(found?.domainIdentifier == item.domainIdentifier, "\(item.uniqueIdentifier)")
            #expect(found?.expirationDate == item.expirationDate, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.contentType == item.attributeSet.contentType, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.keywords == item.attributeSet.keywords, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.authorNames == item.attributeSet.authorNames, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.contentDescription == item.attributeSet.contentDescription, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.contentModificationDate == item.attributeSet.contentModificationDate, "\(item.uniqueIdentifier)")
            #expect(found?.attributeSet.textContent == item.attributeSet.textContent, "\(item.uniqueIdentifier)")
        }
        // The full-text index holds each item's own keywords, people and description.
        func expectedMatches(_ word: String, _ value: (AttributeSet) -> [String]?) -> Set<String> {
            Set(expected.filter { value($0.attributeSet)?.contains(word) == true }.map(\.uniqueIdentifier.rawValue))
        }
        for word in ["kw0", "kw1", "kw2", "kw3"] {
            #expect(Set(try await identifiers(word) { $0.limit = 2_000 }) == expectedMatches(word, \.keywords), "\(word)")
        }
        for word in ["Author0", "Author1"] {
            #expect(Set(try await identifiers(word) { $0.limit = 2_000 }) == expectedMatches(word, \.authorNames), "\(word)")
        }
        for word in ["about0", "about1", "about2"] {
            #expect(Set(try await identifiers(word) { $0.limit = 2_000 }) == expectedMatches(word, { $0.contentDescription.map { [$0] } }), "\(word)")
        }
        #expect(Set(try await identifiers("changed")) == ["i3", "i4", "i7"])
        // The replaced items' old entries are gone from the full-text index.
        let body = try await identifiers("body") { $0.limit = 2_000 }
        #expect(body.count == 1_497)
        #expect(Set(body).isDisjoint(with: ["i3", "i4", "i7"]))
    }

    @Test func aBulkLoadThatRepeatsAnIdentifierKeepsTheLastItem() async throws {
        let items = (0..<20_000).map { Fixtures.item("n\($0)", title: "note \($0)", text: "first") }
            + [Fixtures.item("n3", title: "note 3", text: "second")]
        try await index.indexItems(items)
        #expect(try await index.itemCount() == 20_000)
        #expect(try await identifiers("second") == ["n3"])
    }

    // MARK: Expiration

    @Test func anExpiredItemIsNeverReturnedAndIsPurged() async throws {
        let now = clock.now
        try await index.indexItems([
            Fixtures.item("soon", text: "ephemeral", expiration: now.addingTimeInterval(60)),
            Fixtures.item("later", text: "ephemeral", expiration: now.addingTimeInterval(3600)),
        ])
        #expect(try await identifiers("ephemeral").sorted() == ["later", "soon"])
        // Both given vectors, so the counts of semantic search see the expiry too.
        let pending = try await index.read { try $0.pendingEmbeddings(model: "m", limit: 10) }
        try await index.write(purgingExpired: false) { writer in
            for item in pending { _ = try writer.setVectors([[0.5, 0.5]], for: item, model: "m") }
        }
        #expect(try await index.embeddingCounts(model: "m") == (items: 2, passages: 2, backlog: 0))
        clock.advance(by: 61)
        #expect(try await identifiers("ephemeral") == ["later"])
        #expect(try await index.itemCount() == 1)
        #expect(try await index.embeddingCounts(model: "m") == (items: 1, passages: 2, backlog: 0),
                "the expired item is counted neither as embedded nor as waiting (its vectors go when it is purged)")
        #expect(try await index.embeddingCounts(model: "other") == (items: 0, passages: 0, backlog: 1))
        #expect(try await index.items(withIdentifiers: ["soon"]).isEmpty)
        var filterOnly = SearchQuery()
        filterOnly.limit = 10
        #expect(try await index.search(filterOnly).map(\.item.uniqueIdentifier) == ["later"])
        #expect(try await index.purgeExpiredItems() == 1)
        #expect(try await index.purgeExpiredItems() == 0)
    }

    /// Semantic search looks up the expired items on every query: through the partial index, not by
    /// reading every row (which cost 21 ms a search at 100,000 items).
    @Test func findingTheExpiredItemsReadsThePartialIndex() async throws {
        try await index.indexItems([Fixtures.item("n", text: "kept")])
        let connection = try indexFile()
        let plan = try connection.prepare("EXPLAIN QUERY PLAN SELECT id FROM items WHERE \(SQLiteIndexReader.hasExpired)")
            .rows([.real(clock.now.timeIntervalSince1970)]) { $0.text(3) }
        #expect(plan.contains { $0.contains("USING COVERING INDEX items_expires") }, "\(plan)")
    }

    @Test func anItemWithoutExpirationGetsTheDefaultLifetime() async throws {
        try await index.indexItems([Fixtures.item("n", text: "thirty days", expiration: nil)])
        let stored = try #require(try await index.items(withIdentifiers: ["n"]).first)
        #expect(stored.expirationDate == clock.now.addingTimeInterval(30 * 24 * 3600))
        clock.advance(by: 30 * 24 * 3600 + 1)
        #expect(try await identifiers("thirty").isEmpty)
    }

    // MARK: Batches and client state

    @Test func aBatchWritesNothingUntilItEndsThenEverythingWithItsState() async throws {
        #expect(try await index.fetchLastClientState() == nil)
        let batch = index.beginBatch()
        try batch.indexItems([Fixtures.item("a", text: "batched"), Fixtures.item("b", text: "batched")])
        try batch.deleteItems(withIdentifiers: ["b"])
        #expect(try await index.itemCount() == 0)
        try await batch.end(clientState: Data("cursor=2".utf8))
        #expect(try await identifiers("batched") == ["a"])
        #expect(try await index.fetchLastClientState() == Data("cursor=2".utf8))
        #expect(performing: { try batch.indexItems([]) }, throws: { ($0 as? ReplicaError)?.code == .batchEnded })
    }

    @Test func aCompareAndSwapBatchEndsOnlyFromTheExpectedState() async throws {
        let first = index.beginBatch()
        try first.indexItems([Fixtures.item("a", text: "one")])
        try await first.end(expectedClientState: nil, newClientState: Data("1".utf8))

        let stale = index.beginBatch()
        try stale.indexItems([Fixtures.item("b", text: "two")])
        await #expect(performing: {
            try await stale.end(expectedClientState: nil, newClientState: Data("2".utf8))
        }, throws: { ($0 as? ReplicaError)?.code == .clientStateMismatch })
        #expect(try await index.items(withIdentifiers: ["b"]).isEmpty)
        #expect(try await index.fetchLastClientState() == Data("1".utf8))

        let next = index.beginBatch()
        try next.indexItems([Fixtures.item("b", text: "two")])
        try await next.end(expectedClientState: Data("1".utf8), newClientState: Data("2".utf8))
        #expect(try await index.fetchLastClientState() == Data("2".utf8))
        #expect(try await index.itemCount() == 2)
    }

    @Test func refusesAnOversizedClientState() async throws {
        let batch = index.beginBatch()
        await #expect(throws: ReplicaError.self) {
            try await batch.end(clientState: Data(count: SearchableIndex.maximumClientStateSize + 1))
        }
    }
}
