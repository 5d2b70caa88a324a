import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex
@testable import ReplicaSQLiteStore

/// Runs on both backends (``TestBackend``): a search that differs between them fails.
@Suite struct SearchTests {
    /// What a test works on: a store with alice signed in, and her default index.
    struct Fixture {
        let storage: TestStore
        var store: Store { storage.store }
        let index: SearchableIndex

        func found(_ text: String?, _ adjust: (inout SearchQuery) -> Void = { _ in }) async throws -> [String] {
            var query = SearchQuery(text)
            adjust(&query)
            return try await index.search(query).map(\.item.uniqueIdentifier.rawValue)
        }
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore()
        for account: AccountID in ["alice"] { try await storage.store.signIn(account) }
        return Fixture(storage: storage, index: try await storage.store.index(account: "alice"))
    }

    @Test(arguments: TestBackend.available)
    func ranksTitleAboveKeywordsAboveDescriptionAboveBody(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        func item(_ id: String, _ key: AttributeKey) -> SearchableItem {
            var attributes = AttributeSet(contentType: .plainText)
            attributes.title = "untitled \(id)"
            attributes.textContent = "filler text of the same length here"
            attributes[key] = key == .keywords ? .texts(["zephyr"]) : .text("zephyr")
            if key == .textContent { attributes.textContent = "zephyr filler text of the same length" }
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier(id), attributeSet: attributes, expirationDate: .distantFuture)
        }
        try await fixture.index.indexItems([
            item("body", .textContent), item("description", .contentDescription),
            item("title", .title), item("keywords", .keywords),
        ])
        #expect(try await fixture.found("zephyr") == ["title", "keywords", "description", "body"])
        let scores = try await fixture.index.search(SearchQuery("zephyr")).map(\.score)
        #expect(scores == scores.sorted(by: >))
        #expect(scores.allSatisfy { $0 > 0 })
    }

    /// A query of function words alone ("the which how") is still ranked by them, but never scores as
    /// high as a real match: it scored 0.717 before, above many real matches.
    @Test(arguments: TestBackend.available)
    func aQueryOfFunctionWordsAloneScoresBelowARealMatch(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("a", title: "Which harbour", text: "the tide and how it turns"),
            Fixtures.item("b", text: "the crane and the harbour"),
        ])
        let functionWords = try await fixture.index.search(SearchQuery("the which how"))
        #expect(!functionWords.isEmpty, "ranked by the words anyway")
        #expect(
            functionWords.allSatisfy { $0.score <= FTSPattern.functionWordsScoreScale }, "\(functionWords.map(\.score))"
        )
        let real = try await fixture.index.search(SearchQuery("the harbour"))
        #expect(
            real.count == 2 && real.allSatisfy { $0.score > FTSPattern.functionWordsScoreScale }, "\(real.map(\.score))"
        )
    }

    /// 500 content types or domains used to reach SQLite's expression depth and fail with "remove unusual
    /// characters"; now the most a filter may list is said plainly, and that many work.
    @Test(arguments: TestBackend.available)
    func aFilterOfTooManyValuesIsRefusedInWordsAndTheMostAllowedWork(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([Fixtures.item("1", text: "harbor crane", domain: "d.7")])
        let most = SearchQuery.maximumFilterValues
        let found = try await fixture.found("harbor") { query in
            query.contentTypes = (1..<most).map { ContentType(rawValue: "public.type\($0)") } + [.plainText]
            query.domains = (0..<most).map { DomainIdentifier(rawValue: "d.\($0)") }
            query.authors = (0..<most).map { "author \($0)" }
        }
        #expect(found.isEmpty, "no author matched")
        let withoutAuthors = try await fixture.found("harbor") { query in
            query.contentTypes = (1..<most).map { ContentType(rawValue: "public.type\($0)") } + [.plainText]
            query.domains = (0..<most).map { DomainIdentifier(rawValue: "d.\($0)") }
        }
        #expect(withoutAuthors == ["1"])
        for kind in ["content types", "domains", "authors", "recipients"] {
            await #expect(
                performing: {
                    _ = try await fixture.found("harbor") { query in
                        let many = (0..<500).map { "x\($0)" }
                        switch kind {
                        case "content types": query.contentTypes = many.map(ContentType.init(rawValue:))
                        case "domains": query.domains = many.map(DomainIdentifier.init(rawValue:))
                        case "authors": query.authors = many
                        default: query.recipients = many
                        }
                    }
                },
                throws: { error in
                    (error as? ReplicaError)?.code == .invalidArgument
                        && (error as? ReplicaError)?.message.contains("at most \(most) \(kind); it names 500") == true
                })
        }
    }

    @Test(arguments: TestBackend.available)
    func stemsPrefixesAndPhrases(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("1", text: "The launches were delayed by the supplier"),
            Fixtures.item("2", text: "delayed supplier launches"),
            Fixtures.item("3", text: "supplementary notes"),
        ])
        #expect(try await fixture.found("launching").sorted() == ["1", "2"])
        #expect(try await fixture.found("suppl*").sorted() == ["1", "2", "3"])
        #expect(try await fixture.found(#""by the supplier""#) == ["1"])
        #expect(try await fixture.found(#""supplier launches""#) == ["2"])
    }

    @Test(arguments: TestBackend.available)
    func snippetsMarkTheMatchedWords(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("1", text: "Budget review. The launch risk is the supplier. Other words follow.")
        ])
        let result = try #require(try await fixture.index.search(SearchQuery("launch risk")).first)
        #expect(result.snippet?.contains("[launch] [risk]") == true)
    }

    @Test(arguments: TestBackend.available)
    func operatorWordsAndCharactersAreSearchedAsText(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("ops", text: "salt and pepper, near or far, not now"),
            Fixtures.item("other", text: "nothing relevant"),
        ])
        for word in ["and", "AND", "near", "NEAR", "or", "OR", "not", "NOT"] {
            #expect(try await fixture.found(word) == ["ops"], "\(word)")
        }
        // Every FTS5 operator character, alone and around words: results or a clear error, never a crash.
        let punctuation = [
            #"""#, "(", ")", "*", "^", ":", "-", "+", "{", "}", "[", "]", ",", ".", "\"\"", "\u{0}", "'",
        ]
        for fragment in punctuation {
            #expect(try await fixture.found("salt \(fragment) pepper") == ["ops"], "salt \(fragment) pepper")
            #expect(try await fixture.found("salt\(fragment)") == ["ops"], "salt\(fragment)")
            await #expect(
                performing: { try await fixture.index.search(SearchQuery(fragment)) },
                throws: { error in
                    (error as? ReplicaError)?.code == .invalidQuery
                })
        }
        #expect(try await fixture.found("NEAR(") == ["ops"])
        #expect(try await fixture.found("AND(pepper") == ["ops"])
        #expect(try await fixture.found("-salt") == ["ops"])
    }

    @Test(arguments: TestBackend.available)
    func textFullOfQuerySyntaxFindsTheDocumentThatContainsIt(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let text = #"Use NEAR(alpha, 2) AND title:beta OR "gamma" NOT {delta} ^epsilon* in queries."#
        try await fixture.index.indexItems([
            Fixtures.item("syntax", text: text), Fixtures.item("other", text: "alpha beta"),
        ])
        // Words joined by punctuation are words: "other" has two of them, "syntax" has them as typed.
        #expect(try await fixture.found(text) == ["syntax", "other"])
        #expect(try await fixture.found("title:beta") == ["syntax", "other"])
        #expect(try await fixture.found("NEAR(alpha, 2)") == ["syntax", "other"])
    }

    /// Words joined by punctuation in one typed word ("title:sourdough", "garage/tyres", "sourdough's")
    /// are searched as the words they are, as the indexed text is split: each finds the note that has them
    /// apart, and an item that has them side by side, as typed, comes first. A word with a digit
    /// (an invoice number, a date, a version) stays whole, and so does a quoted phrase.
    @Test(arguments: TestBackend.available)
    func wordsJoinedByPunctuationAreSearchedAsWords(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item(
                "sourdough", title: "Sourdough starter",
                text: "Feed the starter twice a day with equal weights of flour and water."),
            Fixtures.item(
                "garage", title: "Friday",
                text: "Booked the garage for Friday: the winter tyres go on the car and the brakes get checked."),
            Fixtures.item(
                "rack", title: "Shed",
                text: "The garage/tyres rack in the shed is full: sort it out in spring before the car goes in."),
            Fixtures.item(
                "invoice17", title: "Invoice INV-2024-0917", text: "Billed to Oakwood Library: training workshop."),
            Fixtures.item(
                "invoice18", title: "Invoice INV-2024-0918", text: "Billed to Maple Print Shop: hardware upgrade."),
        ])
        #expect(try await fixture.found("title:sourdough") == ["sourdough"])
        #expect(try await fixture.found("sourdough's") == ["sourdough"])
        #expect(try await fixture.found("sourdough\u{2019}s") == ["sourdough"], "a typographic apostrophe too")
        #expect(try await fixture.found("garage/tyres") == ["rack", "garage"], "side by side as typed first")
        #expect(try await fixture.found("garage/tyres") { $0.requiresAllWords = true }.sorted() == ["garage", "rack"])
        // A quoted phrase is still a phrase, whatever joins its words.
        #expect(try await fixture.found(#""garage tyres""#) == ["rack"])
        #expect(try await fixture.found(#""garage/tyres""#) == ["rack"])
        // An identifier with digits is searched whole: one invoice, not every invoice of 2024.
        #expect(try await fixture.found("INV-2024-0917") == ["invoice17"])
        #expect(try await fixture.found("2024-0918") == ["invoice18"])
    }

    @Test(arguments: TestBackend.available)
    func filtersOnContentTypeHierarchy(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("md", text: "shared", contentType: .markdown),
            Fixtures.item("mail", text: "shared", contentType: .emailMessage),
            Fixtures.item("photo", text: "shared", contentType: .image),
        ])
        #expect(try await fixture.found("shared") { $0.contentTypes = [.text] }.sorted() == ["mail", "md"])
        #expect(try await fixture.found("shared") { $0.contentTypes = [.plainText] } == ["md"])
        #expect(
            try await fixture.found("shared") { $0.contentTypes = [.message, .image] }.sorted() == ["mail", "photo"])
    }

    @Test(arguments: TestBackend.available)
    func filtersOnDomainsDatesAndPeople(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let day: TimeInterval = 86_400
        let base = Date(timeIntervalSince1970: 1_795_000_000)
        func item(_ id: String, domain: String, created: Date, authors: [String], recipients: [String])
            -> SearchableItem
        {
            var attributes = AttributeSet(contentType: .emailMessage)
            attributes.textContent = "quarterly report"
            attributes.contentCreationDate = created
            attributes.contentModificationDate = created.addingTimeInterval(day)
            attributes.authors = authors.map { Person(displayName: $0, handles: ["\($0.lowercased())@example.com"]) }
            attributes.recipientNames = recipients
            return SearchableItem(
                uniqueIdentifier: ItemIdentifier(id), domainIdentifier: DomainIdentifier(domain),
                attributeSet: attributes, expirationDate: .distantFuture)
        }
        try await fixture.index.indexItems([
            item("1", domain: "account.a.mail", created: base, authors: ["Shelly"], recipients: ["Ada Lovelace"]),
            item(
                "2", domain: "account.a.mail.sent", created: base + 10 * day, authors: ["Ada"], recipients: ["Shelly"]),
            item("3", domain: "account.a.notes", created: base + 20 * day, authors: ["Grace"], recipients: []),
        ])
        #expect(try await fixture.found("report") { $0.domains = ["account.a.mail"] }.sorted() == ["1", "2"])
        #expect(try await fixture.found("report") { $0.created = DateRange(start: base + day) }.sorted() == ["2", "3"])
        #expect(
            try await fixture.found("report") { $0.created = DateRange(start: base, end: base + 10 * day) } == ["1"])
        #expect(try await fixture.found("report") { $0.modified = DateRange(end: base + 2 * day) } == ["1"])
        #expect(try await fixture.found("report") { $0.authors = ["shelly"] } == ["1"])
        #expect(try await fixture.found("report") { $0.authors = ["grace@example.com"] } == ["3"])
        #expect(try await fixture.found("report") { $0.recipients = ["lovelace"] } == ["1"])
        // People are searchable words too.
        #expect(try await fixture.found("Grace") == ["3"])
        // Without words, filters list matching items newest first.
        #expect(try await fixture.found(nil) { $0.domains = ["account.a"] } == ["3", "2", "1"])
    }

    @Test(arguments: TestBackend.available)
    func refusesALimitOutOfRange(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        await #expect(throws: ReplicaError.self) { try await fixture.index.search(SearchQuery("x", limit: 0)) }
        await #expect(throws: ReplicaError.self) { try await fixture.index.search(SearchQuery("x", limit: 1_000_000)) }
    }

    // MARK: Questions: words are ranked evidence

    @Test(arguments: TestBackend.available)
    func aQuestionFindsWhatItAsksAboutThoughNotEveryWordIsThere(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item(
                "ipsc", title: "Reprogramming without c-Myc",
                text: "Induction of pluripotent stem cells from fibroblasts without the c-Myc factor"),
            Fixtures.item("heart", title: "Cardiac repair", text: "Stem cell therapy after a heart attack"),
            Fixtures.item("bread", title: "Sourdough", text: "How to bake bread at home"),
        ])
        let question = "which stem cell induction methods avoid c-Myc"
        let answers = try await fixture.found(question)
        #expect(answers.first == "ipsc")
        #expect(!answers.contains("bread"), "function words alone never make a match")
        #expect(try await fixture.found(question) { $0.requiresAllWords = true }.isEmpty, "no item has every word")
        #expect(try await fixture.found("stem cell") { $0.requiresAllWords = true }.sorted() == ["heart", "ipsc"])
    }

    @Test(arguments: TestBackend.available)
    func moreOfTheWordsAndWordsNearEachOtherComeFirst(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let filler = Array(repeating: "lorem", count: 40).joined(separator: " ")
        try await fixture.index.indexItems([
            Fixtures.item("one", text: "orchid \(filler) plain"),
            Fixtures.item("apart", text: "orchid \(filler) harbor \(filler) quartz"),
            Fixtures.item("close", text: "orchid harbor quartz \(filler) \(filler)"),
        ])
        #expect(try await fixture.found("orchid harbor quartz") == ["close", "apart", "one"])
        let scores = try await fixture.index.search(SearchQuery("orchid harbor quartz")).map(\.score)
        #expect(scores.allSatisfy { (0...1).contains($0) }, "\(scores)")
        #expect(scores[0] > scores[1] && scores[1] > scores[2])
    }

    @Test(arguments: TestBackend.available)
    func theBestMatchWinsWhateverTheSizeOfItsIndex(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // One item matching in title, keywords and body, alone in a small index; 300 body-only matches
        // in a big one. Raw BM25 depends on the index's size and ranked the small one last.
        var attributes = AttributeSet(contentType: .plainText)
        attributes.title = "Launch risk review"
        attributes.keywords = ["launch", "risk"]
        attributes.textContent = "the launch risk, reviewed"
        try await fixture.store.index(named: "Small", account: "alice").indexItems([
            SearchableItem(uniqueIdentifier: "small", attributeSet: attributes, expirationDate: .distantFuture)
        ])
        try await fixture.index.indexItems(
            (0..<300).map { number in
                Fixtures.item(
                    "big\(number)", title: "note \(number)",
                    text: number.isMultiple(of: 3) ? "launch and risk in the body \(number)" : "other words \(number)")
            })
        let results = try await fixture.store.search(SearchQuery("launch risk", limit: 31))
        #expect(
            results.first?.item.uniqueIdentifier == "small",
            "\(results.prefix(3).map { ($0.item.uniqueIdentifier, $0.score) })")
        #expect(results.count == 31)
        #expect(results.map(\.score) == results.map(\.score).sorted(by: >))
        #expect(results.first.map { $0.score > 0.9 && $0.score <= 1 } == true)
    }

    /// The ranking's second step counts each candidate's words with one FTS5 query a word; the counts
    /// (and which candidates have every word near each other) must be what a lookup per candidate and
    /// word finds, including for queries with more words than are counted.
    /// SQLite only: it checks the SQLite reader's FTS5 lookups against FTS5 itself.
    @Test func wordsPresentAgreeWithALookupPerCandidateAndWord() async throws {
        let fixture = try await make(.sqlite)
        let vocabulary = [
            "amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo",
            "jasper", "krill", "lagoon", "marsh", "nectar",
        ]
        var generator = SplitMix(seed: 7)
        try await fixture.index.indexItems(
            (0..<300).map { number in
                let words = vocabulary.filter { _ in Int.random(in: 0..<4, using: &generator) == 0 }.shuffled(
                    using: &generator)
                return Fixtures.item(
                    "i\(number)", title: "item \(number)",
                    text: (words + ["filler", "words", "here"]).joined(separator: " "))
            })
        for text in [
            "amber basalt", "cobalt dune ember", "fjord garnet harbor indigo jasper",
            vocabulary.joined(separator: " "),
        ] {
            let pattern = try FTSPattern(text: text)
            let terms = Array(pattern.meaningfulTerms.prefix(Ranking.maximumCountedTerms))
            let (present, brute, close, bruteClose) = try await fixture.index.read { reader in
                let reader = reader as! SQLiteIndexReader
                let rowIDs = try reader.connection.prepare("SELECT rowid FROM items_text WHERE items_text MATCH ?")
                    .rows([.text(pattern.matchExpression)]) { $0.int64(0) }
                let seek = try reader.connection.prepare(
                    "SELECT 1 FROM items_text WHERE items_text MATCH ? AND rowid = ?")
                func has(_ expression: String, _ rowID: Int64) throws -> Bool {
                    try seek.firstRow([.text(expression), .integer(rowID)]) { _ in true } ?? false
                }
                var brute: [Int64: Int] = [:]
                for rowID in rowIDs { brute[rowID] = try terms.filter { try has($0.expression, rowID) }.count }
                let present = try reader.wordsPresent(
                    terms, in: rowIDs, allMatched: pattern.meaningfulTerms.count == terms.count)
                let near = try #require(pattern.nearExpression)
                let every = rowIDs.filter { brute[$0] == terms.count }
                return (
                    present, brute, try reader.rows(matching: near, among: every),
                    Set(try every.filter { try has(near, $0) })
                )
            }
            #expect(!brute.isEmpty && present == brute, "\(text)")
            #expect(close == bruteClose, "\(text)")
        }
        #expect(vocabulary.count > Ranking.maximumCountedTerms, "the last query has words that are not counted")
    }

    @Test(arguments: TestBackend.available)
    func suggestionsCompleteTheLastWordFromWordsAsWrittenThenTitles(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems([
            Fixtures.item("1", title: "Supplier contracts", text: "the supplier was late; suppliers agree"),
            Fixtures.item("2", title: "Budget", text: "a supplier and a supply chain"),
            Fixtures.item("3", title: "Other", text: "nothing here"),
        ])
        let words = try await fixture.store.suggestions(for: "suppl")
        #expect(words.prefix(3) == ["supplier", "suppliers", "supply"], "\(words)")
        #expect(words.contains("Supplier contracts"), "a title with such a word comes after the words")
        #expect(
            try await fixture.store.suggestions(for: "late suppl", limit: 2) == ["late supplier", "late suppliers"])
        #expect(try await fixture.store.suggestions(for: "zzz").isEmpty)
        #expect(try await fixture.store.suggestions(for: "\"( ").isEmpty, "no word to complete: nothing, and no error")
    }

    /// A prefix most items have is completed from the 200 items added last (FTS5's prefix query would merge the
    /// postings of every such word first); a rarer one still from every item.
    @Test(arguments: TestBackend.available)
    func aPrefixMostItemsHaveIsCompletedFromTheItemsAddedLast(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.index.indexItems(
            (0..<200).map { Fixtures.item("old\($0)", title: "Old \($0)", text: "thunder rolled") })
        try await fixture.index.indexItems(
            (0..<200).map { number in
                Fixtures.item(
                    "new\(number)", title: number >= 190 ? "Then and now \(number)" : "New \(number)",
                    text: number < 150 ? "The report, then the Theory" : "other words")
            })
        let completions = try await fixture.index.completions(of: "Th")
        #expect(
            completions.words == ["the": 150, "then": 160, "theory": 150], "each word counted once an item, lowercased")
        #expect(completions.titles.count == 10 && completions.titles["Then and now 193"] == 1)
        #expect(try await fixture.store.suggestions(for: "th", limit: 3) == ["then", "the", "theory"])
        // In none of the items added last: the prefix query over every item finds it (here the first word of
        // each text, which the marked-up text begins with).
        let rare = try await fixture.index.completions(of: "thu").words
        #expect(rare == ["thunder": 200], "\(rare)")
    }

    /// A word written with a separate accent (NFD) stays one word on both paths, as FTS5 keeps it.
    @Test(arguments: TestBackend.available)
    func anAccentWrittenApartStaysInItsWord(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let cafe = "cafe\u{301}"
        try await fixture.index.indexItems(
            (0..<200).map { Fixtures.item("c\($0)", title: "Menu \($0)", text: "\(cafe) au lait") })
        #expect(
            try await fixture.index.completions(of: "caf").words.map { Array($0.key.unicodeScalars) } == [
                Array(cafe.unicodeScalars)
            ])
        try await fixture.index.indexItems(
            (0..<200).map { Fixtures.item("t\($0)", title: "Tea \($0)", text: "green tea") })
        #expect(
            try await fixture.index.completions(of: "caf").words.map { Array($0.key.unicodeScalars) } == [
                Array(cafe.unicodeScalars)
            ],
            "the prefix query over every item gives the same word")
    }
}
