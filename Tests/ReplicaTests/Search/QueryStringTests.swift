import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Core Spotlight's query strings: the parser, the comparisons' meaning, and queries over a store.
@Suite struct QueryStringTests {
    // MARK: Parsing

    @Test func andBindsTighterThanOrAndNotTighterThanBoth() throws {
        let parsed = try QueryPredicate(queryString: #"a == "1" || b == "2" && !c == "3""#)
        let a = QueryPredicate.comparison(.key("a"), .equal, .string("1", []))
        let b = QueryPredicate.comparison(.key("b"), .equal, .string("2", []))
        let c = QueryPredicate.comparison(.key("c"), .equal, .string("3", []))
        #expect(parsed == .or(a, .and(b, .not(c))))
        #expect(try QueryPredicate(queryString: #"(a == "1" || b == "2") && c == "3""#) == .and(.or(a, b), c))
    }

    @Test(arguments: [
        #"title == "launch*"cd"#,
        #"(title == "a" || title == "b") && !(rating > 3)"#,
        #"InRange(contentModificationDate, $time.today(-7), $time.now)"#,
        #"contentCreationDate >= $time.iso(2026-11-20T10:00:00.250Z) && com.example.flag == true"#,
        #"* == "say \"hi\" \* \\ ?"wt || rating != -1.5"#,
        #"kind == "x" && (a == "1" && (b == "2" || !(c == "3" || d == "4")))"#,
    ])
    func theDescriptionParsesBackToTheSamePredicate(text: String) throws {
        let predicate = try QueryPredicate(queryString: text)
        #expect(try QueryPredicate(queryString: predicate.description) == predicate, "\(predicate.description)")
    }

    @Test func readsTheLegacyFormsAndSpotlightNames() throws {
        #expect(
            try QueryPredicate(queryString: #"kMDItemTitle ==[cd] "Paris""#)
                == .comparison(.key(.title), .equal, .string("Paris", [.caseInsensitive, .diacriticInsensitive])))
        #expect(try QueryPredicate(queryString: "** == \"x\"") == .comparison(.anyText, .equal, .string("x", [])))
        #expect(
            try QueryPredicate(queryString: "inrange(rating, 1, 2)") == .inRange(.key(.rating), .number(1), .number(2)))
        // Found by fuzzing: kMDItem and a digit is a name of its own, not "1", which would not parse back.
        let digit = try QueryPredicate(queryString: "kMDItem1 != -2.5")
        #expect(digit == .comparison(.key("kMDItem1"), .notEqual, .number(-2.5)))
        #expect(try QueryPredicate(queryString: digit.description) == digit)
    }

    @Test(arguments: [
        (#"title = "x""#, 7, "write =="),
        (#"title == "x" &&"#, 16, "expected a comparison"),
        (#"title == "x"#, 10, "no closing double quote"),
        (#"(title == "x""#, 14, "expected )"),
        (#"title == "x")"#, 13, "closing parenthesis"),
        (#"title == "x"q"#, 13, "modifiers c, d, w or t"),
        (#"title < 3"#, 7, "holds text"),
        (#"contentModificationDate > "soon""#, 27, "holds a date"),
        (#"rating == "high""#, 11, "holds a number"),
        (#"title == 'x'"#, 10, "double quotes"),
        (#"a == $time.fortnight"#, 12, "unknown $time name"),
        (#"a == $time.today(1.5)"#, 18, "whole number"),
        (#"a == $time.iso(yesterday)"#, 16, "ISO 8601"),
        (#"a == 1e999"#, 6, "not a number"),
        (#"title == "x" title == "y""#, 14, "&& or ||"),
        ("", 1, "empty"),
    ])
    func aMistakeNamesItsColumn(text: String, column: Int, problem: String) {
        #expect {
            try QueryPredicate(queryString: text)
        } throws: { error in
            guard let error = error as? ReplicaError, let syntax = error.cause as? QueryStringSyntaxError else {
                return false
            }
            return error.code == .invalidQuery && syntax.column == column && syntax.problem.contains(problem)
                && error.message.contains("column \(column)")
        }
    }

    @Test func deepNestingIsRefusedNotOverflowed() throws {
        let deep = String(repeating: "(", count: 10_000) + #"a == "1""# + String(repeating: ")", count: 10_000)
        #expect(throws: ReplicaError.self) { try QueryPredicate(queryString: deep) }
        let negations = String(repeating: "!", count: 10_000) + #"a == "1""#
        #expect(throws: ReplicaError.self) { try QueryPredicate(queryString: negations) }
        // A long chain builds a tree as deep as it is long.
        let chain = Array(repeating: #"a == "1""#, count: 300).joined(separator: " && ")
        #expect(throws: ReplicaError.self) { try QueryPredicate(queryString: chain) }
        #expect(
            try QueryPredicate(queryString: Array(repeating: #"a == "1""#, count: 256).joined(separator: " || "))
                .description.count > 0)
    }

    // MARK: What a comparison means

    func matches(_ text: String, _ attributes: AttributeSet, now: Date = Date(timeIntervalSince1970: 1_800_000_000))
        throws -> Bool
    {
        PredicateMatcher(try QueryPredicate(queryString: text), now: now, timeZone: TimeZone(identifier: "UTC")!)
            .matches(attributes)
    }

    func titled(_ title: String) -> AttributeSet {
        var attributes = AttributeSet()
        attributes.title = title
        return attributes
    }

    /// The examples of Spotlight's query syntax documentation, and the wildcards.
    @Test(arguments: [
        (#""Paris""#, "Paris", true), (#""Paris""#, "paris", false), (#""Paris""#, "I love Paris", false),
        (#""Paris"c"#, "paris", true), (#""Paris"c"#, "I love Paris", false),
        (#""Paris"wc"#, "I love Paris", true), (#""Paris"wc"#, "paris-france.jpg", true),
        (#""Paris"wc"#, "Comparison", false),
        (#""Window"w"#, "MyWindow", true), (#""Window"t"#, "MyWindow", false), (#""window"w"#, "MyWindow", false),
        (#""Cafe"d"#, "Café", true), (#""Cafe""#, "Café", false), (#""CAFE"cd"#, "café", true),
        (#""laun*""#, "launch", true), (#""*nch""#, "launch", true), (#""l?unch""#, "launch", true),
        (#""l?nch""#, "launch", false),
        (#""a\*b""#, "a*b", true), (#""a\*b""#, "axxb", false), (#""*""#, "", true),
        (#""love paris"wc"#, "I love Paris today", true), (#""paris love"wc"#, "I love Paris today", false),
        (#""a*b*c*d""#, "aXbXcXd", true), (#""a*b*c*d""#, "aXbXcX", false),
    ])
    func textComparisons(value: String, title: String, expected: Bool) throws {
        #expect(try matches("title == " + value, titled(title)) == expected)
        #expect(try matches("title != " + value, titled(title)) == !expected)
    }

    @Test func anItemWithoutTheAttributeMatchesNoComparisonOnIt() throws {
        let untitled = AttributeSet()
        #expect(try !matches(#"title == "*""#, untitled))
        #expect(try !matches(#"title != "x""#, untitled))
        #expect(try matches(#"!(title == "x")"#, untitled))
    }

    @Test func listsAndPeopleMatchWhenAnyValueDoes() throws {
        var attributes = AttributeSet()
        attributes.keywords = ["alpha", "beta"]
        attributes.authors = [Person(displayName: "Ada Lovelace", handles: ["ada@example.com"])]
        #expect(try matches(#"keywords == "beta""#, attributes))
        #expect(try !matches(#"keywords != "beta""#, attributes))
        #expect(try matches(#"authors == "ada@*""#, attributes))
        #expect(try matches(#"* == "lovelace"cw"#, attributes))
        #expect(try !matches(#"* == "babbage"cw"#, attributes))
    }

    @Test func numbersDatesAndFlagsCompareByValue() throws {
        var attributes = AttributeSet()
        attributes.rating = 3
        attributes[AttributeKey("com.example.done")] = .bool(true)
        attributes.contentModificationDate = Date(timeIntervalSince1970: 1_800_000_000 - 3 * 86_400)
        #expect(try matches("rating >= 3 && rating < 4 && rating != 2", attributes))
        #expect(try matches("InRange(rating, 1, 3)", attributes))
        #expect(try !matches("InRange(rating, 3.5, 5)", attributes))
        #expect(try matches(#"rating == "3""#, attributes))
        #expect(try matches("com.example.done == true && com.example.done != 0", attributes))
        #expect(try !matches("com.example.done == false", attributes))
        #expect(try matches("contentModificationDate > $time.today(-7)", attributes))
        #expect(try !matches("contentModificationDate > $time.yesterday", attributes))
        #expect(try matches(#"contentModificationDate < "2027-01-15""#, attributes))
    }

    @Test func timeExpressionsStartAtMidnightInTheQuerysZone() throws {
        // 2026-11-23T03:30:00Z is a Monday; in New York it is still Sunday the 22nd.
        let now = try #require(ISO8601.date(from: "2026-11-23T03:30:00Z"))
        let utc = TimeZone(identifier: "UTC")!
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        func date(_ text: String, _ zone: TimeZone) throws -> String {
            guard case .comparison(_, _, .time(let expression)) = try QueryPredicate(queryString: "a > " + text) else {
                return "?"
            }
            return ISO8601.string(from: expression.date(now: now, timeZone: zone))
        }
        #expect(try date("$time.today", utc) == "2026-11-23T00:00:00Z")
        #expect(try date("$time.today", newYork) == "2026-11-22T05:00:00Z")
        #expect(try date("$time.yesterday", utc) == "2026-11-22T00:00:00Z")
        #expect(try date("$time.now(-90)", utc) == "2026-11-23T03:28:30Z")
        #expect(try date("$time.this_month(-1)", utc) == "2026-10-01T00:00:00Z")
        #expect(try date("$time.next_year", utc) == "2027-01-01T00:00:00Z")
        #expect(try date("$time.iso(\"2026-11-20T10:00:00+01:00\")", newYork) == "2026-11-20T09:00:00Z")
    }
}

/// Query strings run over a store: `Store.query`, `SearchQuery.predicate` with and without words.
/// Runs on both backends (``TestBackend``).
@Suite struct StoreQueryTests {
    let clock = Fixtures.ManualClock(ISO8601.date(from: "2026-11-23T12:00:00Z")!)

    /// What a test works on: a store with alice and bob signed in, on the suite's clock.
    struct Fixture {
        let storage: TestStore
        var store: Store { storage.store }

        func item(
            _ id: String, _ title: String, text: String = "", type: ContentType = .plainText, modified: String?,
            rating: Double? = nil
        ) -> SearchableItem {
            var item = Fixtures.item(
                id, title: title, text: text, contentType: type, modified: modified.flatMap(ISO8601.date(from:)))
            item.attributeSet.rating = rating
            return item
        }

        func fill() async throws {
            try await store.index(account: "alice").indexItems([
                item(
                    "a1", "Launch plan", text: "the rocket launch is on Friday", modified: "2026-11-22T10:00:00Z",
                    rating: 4),
                item(
                    "a2", "Launch review", text: "what went wrong", type: .emailMessage,
                    modified: "2026-11-20T10:00:00Z", rating: 2),
                item("a3", "Café notes", text: "nothing about rockets", modified: "2026-10-01T10:00:00Z"),
                item("a4", "undated launch", modified: nil),
            ])
            try await store.index(named: "Mail", account: "bob").indexItems([
                item("b1", "launch party", type: .emailMessage, modified: "2026-11-23T09:00:00Z")
            ])
        }

        func identifiers(_ query: ItemQuery) async throws -> [String] {
            var found: [String] = []
            for try await result in query.results { found.append(result.item.uniqueIdentifier.rawValue) }
            return found
        }
    }

    func make(_ backend: TestBackend) async throws -> Fixture {
        let storage = try await backend.makeStore(configuration: Fixtures.configuration(clock: clock))
        try await storage.store.signIn("alice")
        try await storage.store.signIn("bob")
        return Fixture(storage: storage)
    }

    @Test(arguments: TestBackend.available)
    func findsWhatTheStringSaysAcrossAccountsNewestFirstInEachIndex(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.fill()
        let query = try fixture.store.query(#"title == "launch*"cw"#)
        // a4 has no date of its own: it was indexed now, so it is the newest.
        #expect(try await fixture.identifiers(query) == ["a4", "a1", "a2", "b1"])
        #expect(query.foundItemCount == 4)
        #expect(
            try await fixture.identifiers(fixture.store.query(#"title == "launch*"cw"#, accounts: ["bob"])) == ["b1"])
        #expect(try await fixture.identifiers(fixture.store.query(#"title == "launch*"cw"#, limit: 2)) == ["a4", "a1"])
    }

    /// The dates and content type are also checked in SQL first: the answer must be the same as the
    /// predicate alone gives, for items with and without the attribute.
    @Test(arguments: TestBackend.available)
    func datesAndTypesGiveTheSameAnswerAsThePredicateAlone(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.fill()
        let strings = [
            "contentModificationDate > $time.today(-2)",
            "contentModificationDate != $time.iso(2026-11-22T10:00:00Z)",
            "contentModificationDate == \"2026-11-22T10:00:00Z\"",
            "InRange(contentModificationDate, $time.this_month, $time.now)",
            "!(contentModificationDate > $time.this_month)",
            #"contentType == "public.email-message" || rating > 3"#,
            #"contentType == "public.email-message" && contentModificationDate >= $time.today(-3)"#,
        ]
        let index = try await fixture.store.index(account: "alice")
        let all = try await index.allItems()
        for text in strings {
            let matcher = PredicateMatcher(try QueryPredicate(queryString: text), now: clock.now, timeZone: .current)
            let expected = Set(all.filter { matcher.matches($0.attributeSet) }.map(\.uniqueIdentifier.rawValue))
            let found = Set(try await fixture.identifiers(fixture.store.query(text, accounts: ["alice"])))
            #expect(found == expected, "\(text)")
            #expect(!expected.isEmpty || text.hasPrefix("!"), "\(text) should find something in this test")
        }
    }

    @Test(arguments: TestBackend.available)
    func fetchesOnlyTheAttributesAsked(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.fill()
        var results: [SearchResult] = []
        for try await result in try fixture.store.query(
            #"title == "Launch plan""#, fetchAttributes: [.title, .textContent]
        ).results {
            results.append(result)
        }
        let attributes = try #require(results.first).item.attributeSet
        #expect(attributes.keys == [.textContent, .title])
        #expect(attributes.textContent == "the rocket launch is on Friday")
    }

    @Test(arguments: TestBackend.available)
    func aPredicateFiltersWhatTypedWordsFindAndTheTextContentCanBeCompared(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.fill()
        var query = try SearchQuery(queryString: #"contentType != "public.email-message""#)
        query.text = "launch"
        query.accounts = ["alice"]
        let found = try await fixture.store.search(query).map(\.item.uniqueIdentifier.rawValue)
        #expect(Set(found) == ["a1", "a4"])
        #expect(try await fixture.identifiers(fixture.store.query(#"textContent == "rocket*"w"#)) == ["a1", "a3"])
    }

    @Test(arguments: TestBackend.available)
    func fetchItemsReadsItemsBackWholeInTheOrderAsked(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.fill()
        try await fixture.store.index(named: "Mail", account: "alice").indexItems([
            fixture.item("m1", "Inbox", text: "body of m1", modified: nil)
        ])
        let found = try await fixture.store.fetchItems(withIdentifiers: ["m1", "absent", "a1", "m1"], account: "alice")
        #expect(found.map(\.item.uniqueIdentifier.rawValue) == ["m1", "a1"])
        #expect(found.map(\.indexName) == ["Mail", "default"])
        #expect(found[0].item.attributeSet.textContent == "body of m1")
        #expect(found[1].item.attributeSet.rating == 4)
        #expect(found[1].origin.owner == .api)
        #expect(
            try await fixture.store.fetchItems(withIdentifiers: ["m1"], account: "alice", indexNames: ["default"])
                .isEmpty)
        // Identifiers are per index: a second item "a1" in Mail is read back too, after the first.
        try await fixture.store.index(named: "Mail", account: "alice").indexItems([
            fixture.item("a1", "Mail's own", text: "another a1", modified: nil)
        ])
        let both = try await fixture.store.fetchItems(withIdentifiers: ["a1"], account: "alice")
        #expect(both.map(\.indexName) == ["Mail", "default"])
        #expect(both[0].item.attributeSet.textContent == "another a1")
        try await fixture.store.signOut("alice")
        await #expect(throws: ReplicaError.self) {
            try await fixture.store.fetchItems(withIdentifiers: ["a1"], account: "alice")
        }
    }
}
