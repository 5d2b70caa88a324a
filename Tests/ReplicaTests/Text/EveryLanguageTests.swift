import Foundation
import Testing
import Replica
import ReplicaIndex
import ReplicaPostgres
import ReplicaSQLite
import ReplicaTestSupport
import ReplicaText

/// Issue 45 on both backends: the words of every script are found inside text written without spaces,
/// each item's words are stemmed for its language, and an index whose words another analyzer made has
/// them made again when it opens.
struct EveryLanguageTests {
    static func found(_ store: Store, _ text: String, languages: [String] = []) async throws -> [String] {
        var query = SearchQuery(text)
        query.disablesSemanticSearch = true
        query.languages = languages
        return try await store.search(query).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    static func item(_ identifier: String, _ text: String, title: String? = nil, language: String? = nil,
                     domain: String? = nil) -> SearchableItem {
        var item = Fixtures.item(identifier, title: title, text: text, domain: domain)
        if let language { item.attributeSet[.language] = .text(language) }
        return item
    }

    static let sentences = [
        item("zh", "我们明天在北京开会讨论预算问题"),
        item("zh-bank", "中国农业发展银行的贷款"),
        item("ja", "東京駅で新幹線の切符を買いました"),
        item("ko", "어제 김치를 많이 먹었어요"),
        item("th", "ภาษาไทยง่ายนิดเดียว"),
        item("en", "The connections were closed before the supplier launched the batteries."),
        item("de", "Die Häuser wurden im Winter renoviert, und die Straßen waren voller Schnee.", language: "de-CH"),
    ]

    @Test(arguments: TestBackend.available)
    func wordsInsideTextWithoutSpacesAreFound(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems(Self.sentences)
        for (query, expected) in [("北京", ["zh"]), ("预算", ["zh"]), ("農業", []), ("农业", ["zh-bank"]), ("東京", ["ja"]), ("新幹線", ["ja"]),
                                  ("김치", ["ko"]), ("ไทย", ["th"]), ("上海", []), ("北京*", ["zh"])] {
            #expect(try await Self.found(fixture.store, query) == expected, "\(query) on \(backend)")
        }
        // A long query word the dictionary keeps whole is found by its pairs, however the item's text was cut.
        #expect(try await Self.found(fixture.store, "中国农业").contains("zh-bank"))
        // Every word of a sentence typed without spaces: the item with all of them.
        var all = SearchQuery("明天北京开会")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        #expect(try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue) == ["zh"])
    }

    @Test(arguments: TestBackend.available)
    func wordsAreStemmedForTheItemsLanguage(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let detected = Self.item("de-detected", "Die Kinder spielten den ganzen Nachmittag im Garten ihrer Großeltern, während die Eltern "
            + "in der Küche das Abendessen vorbereiteten und über die Ferien sprachen.")
        try await fixture.store.index(account: "alice").indexItems(Self.sentences + [detected])
        // German stems (the item says its language, or it is told from the text): Haus finds Häuser.
        #expect(try await Self.found(fixture.store, "Haus") == ["de"])
        #expect(try await Self.found(fixture.store, "Häusern", languages: ["de"]) == ["de"])
        #expect(try await Self.found(fixture.store, "Kind", languages: ["de"]) == ["de-detected"])
        // English by default: connected finds connections, battery finds batteries.
        #expect(try await Self.found(fixture.store, "connected") == ["en"])
        #expect(try await Self.found(fixture.store, "battery") == ["en"])
        // The exact word is found whatever the query's language.
        #expect(try await Self.found(fixture.store, "Häuser", languages: ["en"]) == ["de"])
    }

    /// A word is searched as typed and by its stem at one place: every form of it is found, and the
    /// form typed first, on both backends and through the ranking lists as without them.
    @Test(arguments: TestBackend.available)
    func theWordAsTypedRanksAboveItsOtherForms(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([
            Self.item("plural", "The connections to the harbour were checked by the inspector on Monday."),
            Self.item("singular", "The connection to the harbour was checked by the inspector on Monday."),
            Self.item("verb", "The inspector will connect the harbour pumps on Monday."),
        ])
        for (query, first) in [("connections", "plural"), ("connection", "singular"), ("connect", "verb"), ("harbour connections", "plural")] {
            var search = SearchQuery(query)
            search.disablesSemanticSearch = true
            let found = try await fixture.store.search(search).map(\.item.uniqueIdentifier.rawValue)
            #expect(Set(found) == ["plural", "singular", "verb"], "\(query) on \(backend)")
            #expect(found.first == first, "\(query) on \(backend): \(found)")
        }
        // Every word required: each by its stem, so every form still matches.
        var all = SearchQuery("connections harbour")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        #expect(Set(try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue)) == ["plural", "singular", "verb"])
    }

    /// An item's words are removed as they were made, stemmed for its language: after its text changes,
    /// its old stems find nothing.
    @Test(arguments: TestBackend.available)
    func anItemsOldWordsGoWithItsOldText(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([Self.item("note", "Die Häuser wurden renoviert", language: "de", domain: "notes"),
                                    Self.item("other", "Les maisons étaient rénovées", language: "fr", domain: "notes")])
        #expect(try await Self.found(fixture.store, "Haus") == ["note"])
        try await index.indexItems([Self.item("note", "Boats on the lake", language: "en", domain: "notes")])
        #expect(try await Self.found(fixture.store, "Haus") == [])
        #expect(try await Self.found(fixture.store, "boat") == ["note"])
        _ = try await index.deleteItems(withDomainIdentifiers: [DomainIdentifier("notes")])
        #expect(try await Self.found(fixture.store, "maison") == [])
        if backend == .sqlite {
            // Nothing is left of the words in the full-text index itself.
            let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/default.sqlite").path
            let connection = try Connection(path: path)
            try connection.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, items_text, row)")
            #expect(try connection.scalarInt("SELECT count(*) FROM temp.words") == 0)
        }
    }

    /// An index whose words another analyzer made (an older replica, another ICU) has them made again
    /// when it opens, with the analyzer recorded.
    @Test(arguments: TestBackend.available)
    func wordsOfAnotherAnalyzerAreMadeAgain(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems(Self.sentences)
        // Ranking lists kept: they are built again from the new words, in the open that makes them.
        try await fixture.store.index(account: "alice").rebuildRankingLists()
        // As an index of the old analyzer would be: other words (none here), another analyzer recorded.
        switch backend {
        case .sqlite:
            let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/default.sqlite").path
            let connection = try Connection(path: path)
            try connection.execute("INSERT INTO items_text(items_text) VALUES ('delete-all')")
            try connection.execute("UPDATE meta SET value = 'porter unicode61' WHERE key = 'analyzer'")
        case .postgres:
            let admin = try PostgresConnection(url: try #require(fixture.database).adminURL)
            try admin.executeScript("""
                UPDATE replica.items SET words = ''::tsvector;
                UPDATE replica.meta SET value = 'porter unicode61' WHERE key = 'analyzer';
                """)
        }
        #expect(try await Self.found(fixture.store, "北京") == [])
        let reopened = try fixture.open()
        #expect(try await Self.found(reopened, "北京") == ["zh"])
        #expect(try await Self.found(reopened, "Haus") == ["de"])
        // The vocabulary was made again with the words: a typo is forgiven.
        #expect(try await Self.found(reopened, "renovirt") == ["de"])
        #expect(try await reopened.index(account: "alice").rankingListsAreStale(minimumItems: 1) == false)
    }
}
