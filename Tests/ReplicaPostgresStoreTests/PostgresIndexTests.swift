import Foundation
import ReplicaCore
import ReplicaIndex
import ReplicaPostgres
import ReplicaTestSupport
import Testing

@testable import ReplicaPostgresStore

/// An index kept in PostgreSQL behind the same seam as the SQLite file, compared with it on the same
/// items and queries: the same items match, in the same order, with the same scores.
@Suite(.enabled(if: PostgresTestServer.isEnabled, "needs a PostgreSQL server (scripts/setup-system.sh installs one)"))
struct PostgresIndexTests {
    let database: PostgresTestDatabase
    let pool: PostgresPool
    let folder: TemporaryDirectory

    init() throws {
        database = try PostgresTestServer.makeMigratedDatabase()
        pool = PostgresPool(url: database.url, maximumConnections: 2)
        folder = try TemporaryDirectory("replica-pg-index")
    }

    static let lease = IndexLease(generation: 1) {}

    /// Both backends' indexes keep an item a year unless it says otherwise.
    static let configuration: SearchableIndex.Configuration = {
        var configuration = SearchableIndex.Configuration()
        configuration.defaultLifetime = 365 * 24 * 3600
        return configuration
    }()

    func indexes(_ account: AccountID = "alice") throws -> (sqlite: SearchableIndex, postgres: SearchableIndex) {
        let sqlite = try SearchableIndex(
            path: folder.path + "/\(account.rawValue).sqlite", name: "default", account: account, signIn: Self.lease,
            configuration: Self.configuration
        ) { _ in }
        return (sqlite, try postgresIndex(account).1)
    }

    /// An index on PostgreSQL alone, with its storage.
    func postgresIndex(_ account: AccountID = "alice") throws -> (PostgresIndexStorage, SearchableIndex) {
        let storage = try PostgresIndexStorage(pool: pool, account: account, indexName: "default")
        return (
            storage,
            SearchableIndex(
                storage: storage, name: "default", account: account, signIn: Self.lease,
                configuration: Self.configuration
            ) { _ in }
        )
    }

    static let vocabulary = [
        "running", "runner", "ran", "runs", "café", "cafe", "garden", "gardening", "harbor", "harbour",
        "invoice", "invoices", "sourdough", "bread", "starter", "Ångström", "naïve", "résumé", "tyres",
        "garage", "state", "art", "launch", "risk", "meeting", "notes", "budget", "quarterly", "report",
        "alpine", "meadow", "river", "stone", "bridge", "connection", "connected", "connecting",
    ]

    /// Items of random words from the vocabulary (seeded), with titles, keywords, descriptions and bodies
    /// of different lengths, a few with punctuation-joined words.
    static func items(count: Int, seed: UInt64) -> [SearchableItem] {
        var generator = SplitMix(seed: seed)
        func words(_ range: ClosedRange<Int>) -> String {
            (0..<Int.random(in: range, using: &generator)).map { _ in vocabulary.randomElement(using: &generator)! }
                .joined(separator: " ")
        }
        return (0..<count).map { number in
            var attributes = AttributeSet(contentType: .plainText)
            attributes.title = words(1...4)
            if number % 3 == 0 { attributes.keywords = [words(1...1), words(1...1)] }
            if number % 4 == 0 { attributes.contentDescription = words(3...10) }
            attributes.textContent = words(0...120) + (number % 7 == 0 ? " garage/tyres state-of-the-art" : "")
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier("item-\(number)"),
                domainIdentifier: DomainIdentifier("d\(number % 5)"),
                attributeSet: attributes)
        }
    }

    @Test func bothBackendsRankTheSameItemsTheSameWay() async throws {
        let (sqlite, postgres) = try indexes()
        let items = Self.items(count: 300, seed: 20_261_127)
        try await sqlite.indexItems(items)
        try await postgres.indexItems(items)
        #expect(try await postgres.itemCount() == 300)

        var generator = SplitMix(seed: 7)
        var queries: [SearchQuery] = []
        for number in 0..<240 {
            let count = Int.random(in: 1...4, using: &generator)
            var text = (0..<count).map { _ in Self.vocabulary.randomElement(using: &generator)! }.joined(separator: " ")
            if number % 10 == 0 { text = String(text.prefix(4)) + "*" }
            if number % 13 == 0 { text = "\"" + text + "\"" }
            var query = SearchQuery(text)
            query.limit = 10
            query.requiresAllWords = number % 6 == 0
            if number % 9 == 0 { query.domains = [DomainIdentifier("d\(number % 5)")] }
            queries.append(query)
        }
        queries += ["garage/tyres", "state-of-the-art", "cafe", "naive resume", "angstrom", "connections"].map {
            SearchQuery($0)
        }
        // Typos: both backends correct them to the same words, and score them the same.
        queries += ["lanch meadow", "sourdogh", "quartely report", "conection", "gardning notes", "brigde"].map {
            SearchQuery($0)
        }
        var compared = 0
        for query in queries {
            let expected = try await sqlite.search(query)
            let found = try await postgres.search(query)
            #expect(found.count == expected.count, "\(query.text ?? "")")
            // The same scores in the same order; items of equal score may come in either order.
            let expectedScores = expected.map { ($0.score * 1e9).rounded() }
            let foundScores = found.map { ($0.score * 1e9).rounded() }
            #expect(foundScores == expectedScores, "\(query.text ?? "")")
            #expect(
                Set(found.map(\.item.uniqueIdentifier)) == Set(expected.map(\.item.uniqueIdentifier)),
                "\(query.text ?? "")")
            compared += expected.isEmpty ? 0 : 1
        }
        #expect(compared > 150, "most queries find something, so the comparison means something")
        // The same vocabulary.
        let vocabulary: @Sendable (any IndexReader) throws -> [String] = { reader in
            try "abcdefghijklmnopqrstuvwxyz".flatMap { letter in
                try reader.vocabulary(beginningWith: String(letter), lengths: 1...64, heldByMoreThan: 0).map {
                    "\($0.word) \($0.documents)"
                }
            }
        }
        let sqliteWords = try await sqlite.read(vocabulary)
        #expect(!sqliteWords.isEmpty)
        #expect(try await postgres.read(vocabulary) == sqliteWords)
    }

    /// Searches of words and prefixes are ranked by the server, which sends only the best: its ranking
    /// must be the full ranking's best, score for score, or every such search pays for the full one too.
    @Test func theServerRanksWordsAndPrefixesAsTheFullRankingDoes() async throws {
        let (storage, index) = try postgresIndex()
        try await index.indexItems(Self.items(count: 400, seed: 20_261_128))
        var generator = SplitMix(seed: 11)
        let queries = (0..<300).map { number in
            let count = Int.random(in: 1...8, using: &generator)
            var text = (0..<count).map { _ in Self.vocabulary.randomElement(using: &generator)! }.joined(separator: " ")
            if number % 5 == 0 { text = String(text.prefix(3)) + "*" }
            var query = SearchQuery(text)
            query.requiresAllWords = number % 7 == 0
            if number % 9 == 0 { query.domains = [DomainIdentifier("d\(number % 5)")] }
            // Every item is plain text: a filter by text passes them all, one by image none.
            if number % 11 == 0 { query.contentTypes = [number % 2 == 0 ? .text : .image] }
            if number % 13 == 0 { query.excludedOwners = [number % 2 == 0 ? .api : .records] }
            return query
        }
        let compared = try await storage.read(now: Date(), prepare: {}) { reader in
            let reader = try #require(reader as? PostgresIndexReader)
            var compared = 0
            for query in queries {
                guard let pattern = try query.validatedPattern(), let terms = PostgresIndexReader.SearchTerms(pattern),
                    let ranking = try reader.ranking(terms)
                else { continue }
                let full = try reader.rankedHere(ranking, query).scored
                // The server finds nothing exactly when the full ranking does.
                guard let (counted, server) = try reader.rankedInServer(terms, query, limit: 20) else {
                    #expect(full.isEmpty, "\(query.text ?? "")")
                    continue
                }
                #expect(
                    counted.idfs == ranking.idfs && counted.averageLength == ranking.averageLength,
                    "\(query.text ?? "")")
                let best = try #require(
                    server, "the server's scores differ from the full ranking's for \(query.text ?? "")")
                #expect(best.scored.count == min(full.count, 28), "\(query.text ?? "")")
                #expect(best.scored.map(\.id) == full.prefix(best.scored.count).map(\.id), "\(query.text ?? "")")
                #expect(best.scored.map(\.score) == full.prefix(best.scored.count).map(\.score), "\(query.text ?? "")")
                compared += full.count > 28 ? 1 : 0
            }
            return compared
        }
        #expect(compared > 100, "most queries match more than the server sends, so its cut is tested")
    }

    @Test func anotherAccountsItemsAreNeitherFoundNorCounted() async throws {
        let (_, alice) = try indexes("alice")
        let (_, bob) = try indexes("bob")
        try await alice.indexItems(Self.items(count: 40, seed: 1))
        try await bob.indexItems(Self.items(count: 60, seed: 2))
        #expect(try await alice.itemCount() == 40)
        #expect(try await bob.itemCount() == 60)
        let found = try await alice.search(SearchQuery("garden"))
        #expect(
            found.allSatisfy { result in
                Self.items(count: 40, seed: 1).contains { $0.uniqueIdentifier == result.item.uniqueIdentifier }
            })
    }

    @Test func deletionsExpiryAndUpdatesAreSeenAsOnSQLite() async throws {
        let (sqlite, postgres) = try indexes()
        let items = Self.items(count: 80, seed: 3)
        for index in [sqlite, postgres] {
            try await index.indexItems(items)
            _ = try await index.deleteItems(withDomainIdentifiers: [DomainIdentifier("d1")])
            _ = try await index.deleteItems(withIdentifiers: [ItemIdentifier("item-2"), ItemIdentifier("item-3")])
            var changed = AttributeSet()
            changed.title = "sourdough starter"
            try await index.indexItems([
                SearchableItem(uniqueIdentifier: ItemIdentifier("item-4"), attributeSet: changed, isUpdate: true)
            ])
        }
        #expect(try await postgres.itemCount() == (try await sqlite.itemCount()))
        for text in ["sourdough starter", "garden", "harbor river", "invoice*"] {
            let expected = try await sqlite.search(SearchQuery(text)).map {
                ($0.item.uniqueIdentifier, ($0.score * 1e9).rounded())
            }
            let found = try await postgres.search(SearchQuery(text)).map {
                ($0.item.uniqueIdentifier, ($0.score * 1e9).rounded())
            }
            #expect(found.map(\.1) == expected.map(\.1), "\(text)")
            #expect(Set(found.map(\.0)) == Set(expected.map(\.0)), "\(text)")
        }
        let fetched = try await postgres.items(withIdentifiers: [ItemIdentifier("item-4")])
        #expect(fetched.first?.attributeSet.title == "sourdough starter")
        #expect(
            fetched.first?.attributeSet.textContent == items[4].attributeSet.textContent,
            "a merge keeps what it does not change")
    }

    /// PostgreSQL refuses a word over 2,046 bytes and a `tsvector` over 1 MB; SQLite takes both. Such items
    /// are indexed all the same, and the long word and the words of a huge item are still found.
    @Test func aVeryLongWordAndAHugeVocabularyAreIndexedAndFound() async throws {
        let (_, postgres) = try indexes()
        let long = String(repeating: "x", count: 3000)
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = "measurements"
        attributes.textContent = "start " + long + " end"
        var huge = AttributeSet(contentType: .plainText)
        huge.title = "vocabulary"
        var generator = SplitMix(seed: 11)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        huge.textContent =
            "harbor "
            + (0..<150_000).map { _ in String((0..<7).map { _ in letters.randomElement(using: &generator)! }) }
            .joined(separator: " ")
        try await postgres.indexItems([
            SearchableItem(uniqueIdentifier: "long", attributeSet: attributes),
            SearchableItem(uniqueIdentifier: "huge", attributeSet: huge),
        ])
        #expect(try await postgres.search(SearchQuery(long)).map(\.item.uniqueIdentifier) == ["long"])
        #expect(try await postgres.search(SearchQuery("measurements end")).first?.item.uniqueIdentifier == "long")
        #expect(try await postgres.search(SearchQuery("harbor vocabulary")).first?.item.uniqueIdentifier == "huge")
    }

    /// A new index owes its owner a reindex of everything, once: as a new SQLite file does.
    @Test func aNewIndexOwesItsOwnerAReindexOnce() async throws {
        let (_, postgres) = try indexes("carol")
        #expect(try await postgres.read { try $0.meta("reindex_all_pending") } == "1")
        try await postgres.write { try $0.setMeta("reindex_all_pending", nil) }
        let (_, again) = try indexes("carol")
        #expect(try await again.read { try $0.meta("reindex_all_pending") } == nil)
    }
}
