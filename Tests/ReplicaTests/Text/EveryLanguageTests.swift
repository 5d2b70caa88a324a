import Foundation
import Replica
import ReplicaCore
import ReplicaPostgres
import ReplicaSQLite
import ReplicaTestSupport
import ReplicaText
import Testing

@testable import ReplicaIndex
@testable import ReplicaSQLiteStore

/// Issue 45 on both backends: the words of every script are found inside text written without spaces,
/// each item's words are stemmed for its language, and an index whose words another analyzer made has
/// them made again in the background.
struct EveryLanguageTests {
    static func found(_ store: Store, _ text: String, languages: [String] = [], exact: Bool = false) async throws
        -> [String]
    {
        var query = SearchQuery(text)
        query.disablesSemanticSearch = true
        query.languages = languages
        query.typoTolerance = !exact
        return try await store.search(query).map(\.item.uniqueIdentifier.rawValue).sorted()
    }

    static func item(
        _ identifier: String, _ text: String, title: String? = nil, language: String? = nil,
        domain: String? = nil
    ) -> SearchableItem {
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
        for (query, expected) in [
            ("北京", ["zh"]), ("预算", ["zh"]), ("農業", []), ("农业", ["zh-bank"]), ("東京", ["ja"]), ("新幹線", ["ja"]),
            ("김치", ["ko"]), ("ไทย", ["th"]), ("上海", []), ("北京*", ["zh"]),
        ] {
            #expect(try await Self.found(fixture.store, query) == expected, "\(query) on \(backend)")
        }
        // A long query word the dictionary keeps whole is found by its pairs, however the item's text was cut.
        #expect(try await Self.found(fixture.store, "中国农业").contains("zh-bank"))
        // A question typed without spaces with a number in it: its words each on their own, the number too,
        // not the whole question as one phrase (which found nothing).
        #expect(try await Self.found(fixture.store, "2015年北京开会讨论什么？") == ["zh"])
        // Every word of a sentence typed without spaces: the item with all of them.
        var all = SearchQuery("明天北京开会")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        #expect(try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue) == ["zh"])
    }

    /// A load of many items has its text analyzed ahead on the thread that prepares the rows, and the
    /// writer's tokenizer replays the tokens (``TextAnalyzer/Preanalysis``): the words, their positions
    /// and the vocabulary are those of the same load analyzed by the tokenizer itself, in every script,
    /// with items whose language the writer settles (too short to tell) among them.
    @Test func aLoadAnalyzedAheadHoldsTheWordsOfOneAnalyzedInPlace() async throws {
        let fixture = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        var random = SplitMix(seed: 45)
        let items = (0..<1_300).map { number in
            var item = Self.sentences[number % Self.sentences.count]
            item.uniqueIdentifier = ItemIdentifier("item-\(number)")
            if number % 3 == 0 {
                item.attributeSet.title =
                    ["Wetter", "Zug fährt", "短い", "Mi casa", "ok"][Int.random(in: 0..<5, using: &random)]
            }
            // Too short for CLD2: settled by the writer.
            if number % 7 == 0 { item.attributeSet.textContent = "Bahnhof" }
            // Words of 16 bytes and fewer are kept in the vocabulary's entries, longer ones beside them.
            if number % 11 == 0 {
                item.attributeSet.keywords = [
                    "Straßenbahn", "überall", "characterization", "misunderstandings", "Straßenbahnhaltestellen",
                ]
            }
            // A text of thousands of words, over 512 KB: the tables the preparing thread analyzes in grow
            // past what it keeps for the next text, which is analyzed in fresh ones. In the second chunk
            // of 162 (the writer prepares the first itself), prepared at the share of 100 % given below.
            if number == 200 {
                item.attributeSet.textContent = String(repeating: Self.distinctWords(3_000) + " ", count: 40)
                item.attributeSet[.language] = .text("en")
            }
            return item
        }
        for (name, ahead) in [("ahead", true), ("inPlace", false)] {
            try await fixture.store.index(named: name, account: "alice").write(purgingExpired: false) { writer in
                let writer = writer as! SQLiteIndexWriter
                writer.analyzesAhead = ahead
                writer.aheadPercent = 100
                defer { writer.analyzesAhead = true }
                let before = TextAnalyzer.Preanalysis.replayedOnThisThread
                try writer.index(contentsOf: items.map { ($0, .api) })
                let replayed = TextAnalyzer.Preanalysis.replayedOnThisThread - before
                // Five columns an item analyzed ahead: all of the second and third chunks (prepared at
                // once), and the share moves by 5 points a chunk at most after them; less the items
                // whose language the writer settled, and the first chunk, which the writer prepares.
                #expect(ahead ? replayed >= 2_000 : replayed == 0, "\(replayed) texts replayed")
            }
        }
        func contents(_ name: String) throws -> [String] {
            let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/\(name).sqlite").path
            let connection = try Connection(path: path)
            try connection.execute("CREATE VIRTUAL TABLE temp.occurrences USING fts5vocab(main, items_text, instance)")
            let words = try connection.prepare("SELECT term, doc, col, offset FROM temp.occurrences").rows {
                "\($0.text(0)) \($0.int64(1)) \($0.text(2)) \($0.int64(3))"
            }
            let vocabulary = try connection.prepare("SELECT word, documents FROM vocabulary ORDER BY word").rows {
                "\($0.text(0)) \($0.int64(1))"
            }
            return words + ["--"] + vocabulary
        }
        let ahead = try contents("ahead")
        let inPlace = try contents("inPlace")
        #expect(ahead.count > 10_000)
        #expect(ahead.contains { $0.hasPrefix("haus ") }, "no German stem")
        // Every eleventh item's keywords, 119 of them, of 16 and 17 bytes (in an entry and beside it).
        #expect(ahead.contains("characterization 119") && ahead.contains("misunderstandings 119"))
        #expect(ahead.count == inPlace.count)
        let differences = Set(ahead).symmetricDifference(inPlace).sorted().prefix(20)
        #expect(
            differences.isEmpty,
            "ahead: \(differences.filter(Set(ahead).contains)), in place: \(differences.filter(Set(inPlace).contains))")
    }

    /// The tables a thread analyzes ahead in, kept from one text to the next, are freed when the thread
    /// ends: Dispatch ends its idle worker threads, and a long `watch` would otherwise keep each one's.
    @Test func aThreadsTablesForAnalyzingAheadAreFreedWhenItEnds() throws {
        let before = TextAnalyzer.Preanalysis.tablesFreedAtThreadEnd
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { _ in
                _ = TextAnalyzer.Preanalysis(["Die Kinder spielten im Garten", "Wetter"], language: "de")
                return nil
            }, nil)
        try #require(started == 0)
        #expect(pthread_join(thread, nil) == 0)
        // Other tests' threads may end meanwhile too: at least this one's were freed.
        #expect(TextAnalyzer.Preanalysis.tablesFreedAtThreadEnd > before)
    }

    /// `count` different words of letters alone (`qaaaa qaaab …`), as the vocabulary counts them.
    static func distinctWords(_ count: Int) -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        return (0..<count).map { (number: Int) -> String in
            let digits: [Character] = [letters[number / 676 % 26], letters[number / 26 % 26], letters[number % 26]]
            return "qa" + String(digits)
        }.joined(separator: " ")
    }

    @Test(arguments: TestBackend.available)
    func wordsAreStemmedForTheItemsLanguage(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let detected = Self.item(
            "de-detected",
            "Die Kinder spielten den ganzen Nachmittag im Garten ihrer Großeltern, während die Eltern "
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
        // German function words count only beside the other words of a German query: "die" alone
        // finds no item that has it ("de-detected" has), in a question told from its words too.
        #expect(try await Self.found(fixture.store, "die Häuser", languages: ["de"]) == ["de"])
        #expect(try await Self.found(fixture.store, "wann wurden die Häuser renoviert") == ["de"])
        // A word alone, whose language cannot be told, is stemmed for each language of the account's
        // items: German "Häusern" finds "Häuser" without `languages` (and without typo tolerance, which
        // would find it one letter away), English "connected" still finds "connections".
        #expect(try await Self.found(fixture.store, "Häusern", exact: true) == ["de"])
        #expect(try await Self.found(fixture.store, "Kindern", exact: true) == ["de-detected"])
        #expect(try await Self.found(fixture.store, "connected") == ["en"])
    }

    /// A short query is stemmed for the languages of the account's items that are not rare: for German
    /// beside English while German items are a fair share of them, for English alone once they are few.
    @Test(arguments: TestBackend.available)
    func aShortQueryIsStemmedForTheLanguagesOfTheAccountsItems(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([
            Self.item("en", "The connections were closed before the supplier launched the batteries."),
            Self.item("de", "Die Häuser wurden im Winter renoviert.", language: "de"),
        ])
        #expect(try await Self.found(fixture.store, "Häusern", exact: true) == ["de"])
        // Sixty English items more: German is under a fiftieth of what the account was given.
        try await index.indexItems(
            (0..<60).map { Self.item("en-\($0)", "Note \($0) about the harbour pumps and their batteries.") })
        #expect(try await Self.found(fixture.store, "Häusern", exact: true).isEmpty)
        #expect(try await Self.found(fixture.store, "Häusern", languages: ["de"], exact: true) == ["de"])
    }

    /// A text too short for CLD2 to tell its language is stemmed for the language most of the index's
    /// items are in, counting those of the same batch before it (English in an index with none yet),
    /// through the bulk path and one item at a time, and `get` says which (the index's commonest now).
    @Test(arguments: TestBackend.available)
    func aTextWhoseLanguageCannotBeToldTakesTheIndexsCommonest(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([Self.item("first", "Häuser")])
        let german = (0..<20).map {
            Self.item(
                "de-\($0)",
                "Satz \($0): Die Kinder spielten den ganzen Nachmittag im Garten ihrer Großeltern, während "
                    + "die Eltern in der Küche das Abendessen vorbereiteten.")
        }
        try await index.indexItems(german + [Self.item("in-batch", "Häuser")])
        try await index.indexItems([Self.item("alone", "Häusern")])
        let stored = try await index.fetchItems(withIdentifiers: ["in-batch", "alone", "de-0"])
        #expect(stored.map(\.wordsLanguage) == ["de", "de", "de"])
        // Stemmed for German, "Häuser" stands beside "haus"; the first, stemmed for English, does not.
        #expect(try await Self.found(fixture.store, "Haus", languages: ["de"], exact: true) == ["alone", "in-batch"])
    }

    /// Vietnamese words keep their tones beside their folded form: a word typed with its marks ranks the
    /// items with those tones first and still finds the others; typed without, it finds them all.
    @Test(arguments: TestBackend.available)
    func aVietnameseWordRanksItsOwnTonesFirst(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        // The shorter item has "mai": by the folded word alone, BM25 would rank it first.
        try await index.indexItems([
            Self.item("tomorrow", "Hẹn gặp lại ngày mai."),
            Self.item(
                "roof", "Con mèo nằm ngủ trên mái nhà cả buổi chiều hôm qua, rồi chạy xuống vườn chơi với con chó."),
            Self.item("rice", "Người mẹ nấu một nồi cơm lớn cho cả gia đình vào buổi tối."),
            Self.item("river", "Dòng sông chảy qua làng và đổ ra biển ở phía đông."),
            Self.item("school", "Học sinh đến trường bằng xe đạp mỗi sáng."),
        ])
        #expect(try await index.fetchItems(withIdentifiers: ["roof"]).map(\.wordsLanguage) == ["vi"])
        func ranked(_ text: String) async throws -> [String] {
            var query = SearchQuery(text)
            query.disablesSemanticSearch = true
            query.languages = ["vi"]
            query.typoTolerance = false
            return try await fixture.store.search(query).map(\.item.uniqueIdentifier.rawValue)
        }
        #expect(try await ranked("mái") == ["roof", "tomorrow"])
        #expect(try await ranked("mai").sorted() == ["roof", "tomorrow"])
    }

    /// An SQLite index made before the languages were counted has them counted once from its items when
    /// it opens (migration 0014), so its short queries are stemmed for them from then on.
    @Test func anIndexMadeBeforeTheCountHasItsLanguagesCountedFromItsItems() async throws {
        let fixture = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems([
            Self.item("de", "Die Häuser wurden im Winter renoviert.", language: "de"),
            Self.item("en", "The connections were closed before the supplier launched the batteries."),
        ])
        // As before the count: no languages recorded, the schema as it was then (0015 and 0016 undone too).
        let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/default.sqlite").path
        let connection = try Connection(path: path)
        try connection.execute("DELETE FROM meta WHERE key = 'languages'")
        try connection.execute("DROP INDEX embedded_model")
        try connection.execute("DROP TABLE vocabulary_held_back")
        try connection.execute("DELETE FROM replica_migrations WHERE version >= 14")
        try connection.execute("PRAGMA user_version = 13")
        let stale = try fixture.open()
        #expect(try await Self.found(stale, "Häusern", exact: true) == ["de"])
        #expect(try connection.scalar("SELECT value FROM meta WHERE key = 'languages'") == .text("de:1 en:1"))
    }

    /// An item's language without stems is the one its app gave, else CLD2's; a language with stems its
    /// app gave comes first, and a tag that names no one language is not taken.
    @Test func anItemsLanguageWithoutStemsIsTheOneItsAppGaveElseCLD2s() {
        let chinese = "2017年的火车票已经订好了，八月第二周去里斯本。我们在那里住一个星期，然后坐火车去波尔图。"
        #expect(TextAnalyzer.itemLanguage(given: [], text: chinese) == (nil, true, "zh"))
        #expect(TextAnalyzer.itemLanguage(given: ["ja-JP"], text: "短い") == (nil, true, "ja"))
        #expect(TextAnalyzer.itemLanguage(given: ["ja", "de-CH"], text: chinese) == ("de", true, nil))
        for unnamed in ["und", "chinese simplified", "zh:cn", ""] {
            #expect(TextAnalyzer.itemLanguage(given: [unnamed], text: chinese) == (nil, true, "zh"), "\(unnamed)")
        }
        #expect(TextAnalyzer.itemLanguage(given: [], text: "ok") == ("en", false, nil))
    }

    /// An SQLite index made before the languages without stems were counted (migration 0017) counts them
    /// from then on only if it holds no item in one: it cannot tell which language those are in, and a
    /// count of the later items alone would leave the earlier ones' language out.
    @Test func anIndexMadeBeforeLanguagesWithoutStemsWereCountedCountsThemOnlyIfItHoldsNone() async throws {
        let fixture = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        try await fixture.store.index(named: "plain", account: "alice").indexItems([
            Self.item("de", "Die Häuser wurden im Winter renoviert.", language: "de")
        ])
        try await fixture.store.index(named: "mixed", account: "alice").indexItems([
            Self.item("de", "Die Häuser wurden im Winter renoviert.", language: "de"),
            Self.item("zh", "2017年的火车票已经订好了，八月第二周去里斯本。", language: "zh"),
        ])
        let indexes = fixture.directory.url.appendingPathComponent("accounts/alice/indexes").path
        for name in ["plain", "mixed"] {
            let connection = try Connection(path: "\(indexes)/\(name).sqlite")
            #expect(
                try connection.scalar("SELECT value FROM meta WHERE key = 'languages_unstemmed'")
                    == .text(name == "plain" ? "" : "zh:1"))
            try connection.execute("DELETE FROM meta WHERE key = 'languages_unstemmed'")
            try connection.execute("DELETE FROM replica_migrations WHERE version >= 17")
            try connection.execute("PRAGMA user_version = 16")
        }
        let stale = try fixture.open()
        for name in ["plain", "mixed"] {
            #expect(try await stale.index(named: name, account: "alice").itemCount() > 0)
            let connection = try Connection(path: "\(indexes)/\(name).sqlite")
            let counted = try connection.scalar("SELECT value FROM meta WHERE key = 'languages_unstemmed'")
            #expect(counted == (name == "plain" ? .text("") : nil), "\(name)")
        }
    }

    /// The languages an index has been given, and those a query whose language cannot be told is
    /// stemmed for: the commonest first, each at least a fiftieth of the items, at most four.
    @Test func theLanguagesOfAnIndexAreCountedAndTheCommonOnesKept() {
        var written = WrittenLanguages(meta: "en:900 de:90 fr:10 broken x:y")
        #expect(written.counts == ["en": 900, "de": 90, "fr": 10])
        #expect(written.common == ["en", "de"])
        written.add("fr", count: 100)
        #expect(written.common == ["en", "fr", "de"])
        #expect(WrittenLanguages(meta: written.meta) == written)
        let many = WrittenLanguages(counts: ["a": 10, "b": 20, "c": 30, "d": 40, "e": 50])
        #expect(many.common == ["e", "d", "c", "b"])
        #expect(WrittenLanguages(meta: nil).common.isEmpty)
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
        for (query, first) in [
            ("connections", "plural"), ("connection", "singular"), ("connect", "verb"),
            ("harbour connections", "plural"),
        ] {
            var search = SearchQuery(query)
            search.disablesSemanticSearch = true
            let found = try await fixture.store.search(search).map(\.item.uniqueIdentifier.rawValue)
            #expect(Set(found) == ["plural", "singular", "verb"], "\(query) on \(backend)")
            #expect(found.first == first, "\(query) on \(backend): \(found)")
        }
        // Every word required: each as typed or by its stem, so every form still matches.
        var all = SearchQuery("connections harbour")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        #expect(
            Set(try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue)) == [
                "plural", "singular", "verb",
            ])
    }

    /// Every word required, stemmed for several languages: a word is any of its forms, its stem in each
    /// language among them, so a Spanish plural asked with English first finds the Spanish items (by the
    /// English stem alone, "universidad", it found only the singular); the form typed ranks first among
    /// the forms of one language.
    @Test(arguments: TestBackend.available)
    func aRequiredWordIsAnyOfItsFormsInEveryLanguageOfTheQuery(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([
            Self.item("plural", "Las universidades abrieron sus puertas en septiembre.", language: "es"),
            Self.item("singular", "La universidad abrió sus puertas en septiembre.", language: "es"),
            Self.item("other", "El puerto abrió sus puertas en septiembre.", language: "es"),
            Self.item("en", "The harbour pumps were checked on Monday.", language: "en"),
        ])
        var all = SearchQuery("universidades septiembre")
        all.requiresAllWords = true
        all.disablesSemanticSearch = true
        all.languages = ["en", "es"]
        // (English's stem of the plural is the Spanish singular, which may then rank first.)
        #expect(
            Set(try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue)) == ["plural", "singular"],
            "on \(backend)")
        all.languages = ["es"]
        #expect(
            try await fixture.store.search(all).map(\.item.uniqueIdentifier.rawValue) == ["plural", "singular"],
            "on \(backend)")
    }

    /// The form typed counts ``FTSPattern/typedFormWeight`` of what its stem counts in BM25, not as
    /// much again: of two items of one length, one with the form typed and one with another form, the
    /// first scores more by exactly that weight times the form's idf, on both backends.
    @Test(arguments: TestBackend.available)
    func theFormTypedCountsLessThanItsStem(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems(
            [
                Self.item("plural", "The connections were checked."),
                Self.item("singular", "The connection was checked."),
            ]
                + (0..<8).map { Self.item("other-\($0)", "Pumps number \($0) were serviced on Monday.") })
        var typed = SearchQuery("connections")
        typed.languages = ["en"]
        let query = typed
        let scores = try await index.read { reader in
            let pattern = try #require(try reader.pattern(of: query))
            let found = try reader.matches(query, pattern: pattern, limit: 10).found
            return Dictionary(
                uniqueKeysWithValues: found.map { ($0.item.item.uniqueIdentifier.rawValue, $0.item.score) })
        }
        let (plural, singular) = (try #require(scores["plural"]), try #require(scores["singular"]))
        // FTS5's idf of a word 1 and 2 of 10 items have: "connections", and its stem "connect".
        let idf = { (hits: Double) in log((10 - hits + 0.5) / (hits + 0.5)) }
        let expected = FTSPattern.typedFormWeight * idf(1) / idf(2)
        #expect(abs((plural - singular) / singular - expected) < 1e-9, "on \(backend): \(plural) against \(singular)")
    }

    /// An item's words are removed as they were made, stemmed for its language: after its text changes,
    /// its old stems find nothing.
    @Test(arguments: TestBackend.available)
    func anItemsOldWordsGoWithItsOldText(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let index = try await fixture.store.index(account: "alice")
        try await index.indexItems([
            Self.item("note", "Die Häuser wurden renoviert", language: "de", domain: "notes"),
            Self.item("other", "Les maisons étaient rénovées", language: "fr", domain: "notes"),
        ])
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

    /// A load of a few hundred items (a file tree's transaction of large files, cut at 16 MiB) is
    /// prepared in several chunks on another core too, not written one by one with every text analyzed
    /// on the writer's thread: the writer replays the tokens of the first chunks.
    @Test func aLoadOfAFewHundredItemsIsAnalyzedAhead() async throws {
        let fixture = try await TestBackend.sqlite.makeStore(signingIn: "alice")
        let items = (0..<300).map { number in
            var item = Self.sentences[number % Self.sentences.count]
            item.uniqueIdentifier = ItemIdentifier("item-\(number)")
            return item
        }
        try await fixture.store.index(account: "alice").write(purgingExpired: false) { writer in
            let writer = writer as! SQLiteIndexWriter
            writer.aheadPercent = 100
            let before = TextAnalyzer.Preanalysis.replayedOnThisThread
            try writer.index(contentsOf: items.map { ($0, .api) })
            let replayed = TextAnalyzer.Preanalysis.replayedOnThisThread - before
            // Five columns an item, for the first chunk at least (the share analyzed ahead adapts after it).
            #expect(replayed >= 5 * LoadChunks.size(for: items.count, atMost: 512), "\(replayed) texts replayed")
        }
    }

    /// An index whose words another analyzer made (an older replica, another ICU) keeps answering from
    /// them while they are made again, a batch per transaction, beside them; writes made meanwhile are
    /// kept; a remake stopped after a batch goes on from it in a new process; the new words, their
    /// vocabulary and the ranking lists are swapped in at once, the same as a new index of the same items.
    @Test(arguments: TestBackend.available)
    func wordsOfAnotherAnalyzerAreMadeAgainInTheBackground(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems(Self.sentences)
        // Ranking lists kept: they are built again from the new words when these are swapped in.
        try await fixture.store.index(account: "alice").rebuildRankingLists()
        try await Self.makeWordsOfAnotherAnalyzer(fixture)
        // Opening does not make them: searches read the old words.
        var store = try fixture.open()
        var index = try await store.index(account: "alice")
        #expect(
            try await index.wordsStatus()
                == WordsStatus(analyzer: "porter unicode61", remade: nil, items: Self.sentences.count))
        #expect(try await Self.found(store, "北京") == [])

        // One batch of three (zh, zh-bank, ja), then stopped.
        let stopped = Task { [index] in
            try await index.remakeWords(batchSize: 3) { _, _ in withUnsafeCurrentTask { $0?.cancel() } }
        }
        #expect(try await stopped.value == false)
        #expect(
            try await index.wordsStatus()
                == WordsStatus(analyzer: "porter unicode61", remade: 3, items: Self.sentences.count))
        #expect(try await Self.found(store, "北京") == [], "the new words are not read before every item has them")

        // Writes meanwhile: a text changed and an item deleted among those made again, an item deleted
        // among the rest, a new item.
        let changed = Self.item("zh", "上海的天气很好")
        let added = Self.item("new", "Die Boote liegen im Hafen.", language: "de")
        try await index.indexItems([changed, added])
        _ = try await index.deleteItems(withIdentifiers: ["ja", "ko"])

        // A new process goes on from the last batch.
        store = try fixture.open()
        index = try await store.index(account: "alice")
        #expect(try await index.wordsStatus().remade == 3)
        #expect(try await store.remakeStaleWords() == 1)
        #expect(
            try await index.wordsStatus()
                == WordsStatus(analyzer: TextAnalyzer.version, remade: nil, items: Self.sentences.count - 1))
        #expect(try await Self.found(store, "上海") == ["zh"])
        #expect(try await Self.found(store, "北京") == [])
        #expect(try await Self.found(store, "农业") == ["zh-bank"])
        #expect(try await Self.found(store, "東京") == [])
        #expect(try await Self.found(store, "김치") == [])
        #expect(try await Self.found(store, "Boot") == ["new"])
        #expect(try await Self.found(store, "Haus") == ["de"])
        #expect(
            try await Self.found(store, "renovirt") == ["de"], "the vocabulary was counted again: a typo is forgiven")
        #expect(try await index.rankingListsAreStale(minimumItems: 1) == false)
        #expect(try await store.remakeStaleWords() == 0)

        // The same words and vocabulary as a new index of the same items.
        let fresh = try await backend.makeStore(signingIn: "alice")
        let items =
            Self.sentences.filter { !["zh", "ja", "ko"].contains($0.uniqueIdentifier.rawValue) } + [changed, added]
        try await fresh.store.index(account: "alice").indexItems(items)
        #expect(try await TyposTests.vocabulary(index) == TyposTests.vocabulary(fresh.store.index(account: "alice")))
        for query in ["上海", "银行", "ภาษา", "connection", "Straße", "Hafen", "supplier launch"] {
            var search = SearchQuery(query)
            search.disablesSemanticSearch = true
            let remade = try await store.search(search).map { ($0.item.uniqueIdentifier, $0.score) }
            let new = try await fresh.store.search(search).map { ($0.item.uniqueIdentifier, $0.score) }
            #expect(remade.map(\.0) == new.map(\.0), "\(query)")
            #expect(zip(remade, new).allSatisfy { abs($0.1 - $1.1) < 1e-9 }, "\(query): the same scores")
        }
    }

    /// Makes alice's index as an index of an older analyzer would be: other words (none here), another
    /// analyzer recorded.
    static func makeWordsOfAnotherAnalyzer(_ fixture: TestStore) async throws {
        switch fixture.backend {
        case .sqlite:
            let path = fixture.directory.url.appendingPathComponent("accounts/alice/indexes/default.sqlite").path
            let connection = try Connection(path: path)
            try connection.execute("INSERT INTO items_text(items_text) VALUES ('delete-all')")
            try connection.execute("UPDATE meta SET value = 'porter unicode61' WHERE key = 'analyzer'")
        case .postgres:
            let admin = try await PostgresConnection.opening(url: try #require(fixture.database).adminURL)
            try await admin.runScript(
                """
                UPDATE replica.items SET words = ''::tsvector;
                UPDATE replica.meta SET value = 'porter unicode61' WHERE key = 'analyzer';
                """)
        }
    }

    /// A remake's vocabulary, counted as its batches make the words (on PostgreSQL, rather than from
    /// every item's words at the swap), is a new index's of the same items; when a write changes an
    /// item's words between two batches, the swap counts it from the items instead, so the old words of
    /// an item already made again are not counted.
    @Test(arguments: TestBackend.available)
    func aRemakesVocabularyIsANewIndexsWithOrWithoutAWriteBetweenItsBatches(_ backend: TestBackend) async throws {
        let rewritten = Self.item("en", "The harbour pumps were checked on Monday.")
        for writeBetween in [false, true] {
            let fixture = try await backend.makeStore(signingIn: "alice")
            try await fixture.store.index(account: "alice").indexItems(Self.sentences)
            try await Self.makeWordsOfAnotherAnalyzer(fixture)
            let store = try fixture.open()
            let index = try await store.index(account: "alice")
            // Two items a batch, by one tally, as `remakeWords` runs them; the third batch makes "en".
            let tally = WordsRemake.VocabularyTally()
            var batches = 0
            while case .madeAgain = try await index.write(
                purgingExpired: false, { try $0.remakeWords(batchSize: 2, tally: tally) })
            {
                batches += 1
                if writeBetween && batches == 3 { try await index.indexItems([rewritten]) }
            }
            #expect(batches == 4)
            #expect(try await index.wordsStatus().isCurrent)
            let fresh = try await backend.makeStore(signingIn: "alice")
            let items =
                writeBetween ? Self.sentences.filter { $0.uniqueIdentifier != "en" } + [rewritten] : Self.sentences
            try await fresh.store.index(account: "alice").indexItems(items)
            #expect(
                try await TyposTests.vocabulary(index) == TyposTests.vocabulary(fresh.store.index(account: "alice")),
                "on \(backend), \(writeBetween ? "with" : "without") a write between two batches")
        }
    }

    /// On PostgreSQL, which writes every row it updates anew (with an entry in each of its indexes), a
    /// new analyzer version rewrites only the items whose words it changes: here one, whose old words
    /// differ; the rest keep their row versions, and every item is found as a new index finds it.
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aRemakeRewritesOnlyTheItemsWhoseWordsChange(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        try await fixture.store.index(account: "alice").indexItems(Self.sentences)
        let admin = try await PostgresConnection.opening(url: try #require(fixture.database).adminURL)
        try await admin.runScript(
            """
            UPDATE replica.items SET words = strip(words) WHERE identifier = 'zh';
            UPDATE replica.meta SET value = 'an older analyzer' WHERE key = 'analyzer';
            """)
        func rowVersions() async throws -> [String: String] {
            let result = try await admin.run("SELECT identifier, xmin::text FROM replica.items")
            return Dictionary(
                uniqueKeysWithValues: (0..<result.rowCount).map {
                    (result.string($0, 0) ?? "", result.string($0, 1) ?? "")
                })
        }
        let before = try await rowVersions()
        let store = try fixture.open()
        #expect(try await store.remakeStaleWords() == 1)
        let after = try await rowVersions()
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after.filter { before[$0.key] != $0.value }.keys.sorted() == ["zh"])
        let index = try await store.index(account: "alice")
        #expect(try await index.wordsStatus().isCurrent)
        #expect(try await Self.found(store, "北京") == ["zh"])
        #expect(try await Self.found(store, "新幹線") == ["ja"])
        #expect(try await store.remakeStaleWords() == 0)
    }
}
