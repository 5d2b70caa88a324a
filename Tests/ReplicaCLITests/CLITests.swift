import Foundation
import Replica
import ReplicaSQLite
import ReplicaTestSupport
import Testing

/// End-to-end tests: they run the built `replica` binary and check what it prints and how it exits.
/// Each test says its backend first (``CLIPlace/use(_:signingIn:)``); those not tied to SQLite's files run
/// on both.
@Suite struct CLITests {
    let directory: TemporaryDirectory
    let place: CLIPlace
    var store: String { place.store }

    init() throws {
        directory = try TemporaryDirectory()
        place = CLIPlace(directory: directory)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil, environment: [String: String] = [:]) throws
        -> ProcessResult
    {
        try ReplicaProcess.run(place.arguments + arguments, input: input, environment: environment)
    }

    static func line(
        _ id: String, title: String, text: String, domain: String? = nil, modified: String? = nil,
        type: String = "public.plain-text"
    ) -> String {
        var attributes = #""title": "\#(title)", "textContent": "\#(text)", "contentType": "\#(type)""#
        if let modified { attributes += #", "contentModificationDate": "\#(modified)""# }
        let domainPart = domain.map { #", "domainIdentifier": "\#($0)""# } ?? ""
        return
            #"{"uniqueIdentifier": "\#(id)"\#(domainPart), "expirationDate": "2099-01-01T00:00:00Z", "attributes": {\#(attributes)}}"#
    }

    // MARK: Import and search

    @Test(arguments: TestBackend.available)
    func importThenSearchPrintsTheDocumentedJSON(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = [
            Self.line(
                "n1", title: "Launch plan", text: "The launch risk is the supplier.", domain: "account.a.notes",
                modified: "2026-11-20T10:00:00Z"),
            Self.line(
                "n2", title: "Budget", text: "Numbers, and no launch words at all... except launch.",
                domain: "account.a.notes"),
        ].joined(separator: "\n")
        let imported = try replica("import", "--account", "a", "-", input: lines)
        #expect(imported.status == 0)
        #expect(imported.standardOutput.isEmpty)
        #expect(
            imported.standardError.hasPrefix("replica: imported 2 items into account 'a' in ")
                && imported.standardError.hasSuffix(" s\n"),
            "the summary tells the whole time: \(imported.standardError)")

        let search = try replica("search", "--json", "launch", "risk")
        #expect(search.status == 0)
        #expect(search.standardError.isEmpty)
        let output = search.standardOutput
        #expect(output.hasSuffix("}\n") && output.split(separator: "\n").count == 1)
        // Keys in the documented order, values as imported.
        let prefix =
            #"{"results":[{"account":"a","uniqueIdentifier":"n1","domainIdentifier":"account.a.notes","score":"#
        #expect(output.hasPrefix(prefix), "\(output)")
        let afterScore = try #require(output.range(of: #","matched""#)).lowerBound
        let score = try #require(Double(output[output.index(output.startIndex, offsetBy: prefix.count)..<afterScore]))
        #expect(score > 0 && score <= 1)
        #expect(
            output[afterScore...].hasPrefix(
                #","matched":"lexical","title":"Launch plan","snippet":"The [launch] [risk] is the supplier.","contentType":"public.plain-text","contentModificationDate":"2026-11-20T10:00:00Z","#
            ))
    }

    @Test(arguments: TestBackend.available)
    func noMatchPrintsAnEmptyListAndSucceeds(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try replica("import", "--account", "a", "-", input: Self.line("n1", title: "T", text: "words"))
        let search = try replica("search", "--json", "absent")
        #expect(search.status == 0)
        #expect(search.standardOutput == "{\"results\":[]}\n")
    }

    @Test(arguments: TestBackend.available)
    func aQueryWithNoWordFailsWithoutNamingTheEngine(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try replica("import", "--account", "a", "-", input: Self.line("n1", title: "T", text: "words"))
        for query in [#"""#, "()", "* : ^", #""( )""#, "NEAR("] {
            let search = try replica("search", "--json", query)
            if query == "NEAR(" {
                #expect(search.status == 0, "a word, searched as a word")
                continue
            }
            #expect(search.status == 1, "\(query)")
            #expect(search.standardOutput.isEmpty)
            #expect(search.standardError.hasPrefix("replica: error: the query has no words to search for"))
            for engine in ["fts", "FTS", "sqlite", "SQLite", "syntax error"] {
                #expect(!search.standardError.contains(engine))
            }
        }
    }

    /// Words joined by punctuation are searched as words, as the README says: each of these finds the note.
    @Test(arguments: TestBackend.available)
    func wordsJoinedByPunctuationFindTheNoteThatHasTheWords(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = [
            Self.line("bread", title: "Sourdough starter", text: "Feed the starter twice a day with flour and water."),
            Self.line("car", title: "Friday", text: "Booked the garage for Friday: the winter tyres go on the car."),
        ].joined(separator: "\n")
        #expect(try replica("import", "--account", "a", "-", input: lines).status == 0)
        for (query, wanted) in [("title:sourdough", "bread"), ("sourdough's", "bread"), ("garage/tyres", "car")] {
            let search = try replica("search", "--lexical", "--json", query)
            #expect(search.status == 0, "\(search.standardError)")
            let found = try JSON.parse(search.standardOutput)["results"]?.arrayValue?.compactMap {
                $0["uniqueIdentifier"]?.stringValue
            }
            #expect(found == [wanted], "\(query): \(search.standardOutput)")
        }
    }

    @Test(arguments: TestBackend.available)
    func searchReadsDateAndTypeFiltersAndHumanOutput(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = [
            Self.line("old", title: "Old launch", text: "launch", modified: "2025-01-01T00:00:00Z"),
            Self.line(
                "new", title: "New launch", text: "launch", modified: "2026-11-01T00:00:00Z",
                type: "net.daringfireball.markdown"),
        ].joined(separator: "\n")
        try replica("import", "--account", "a", "-", input: lines)
        let recent = try replica("search", "--json", "--modified-after", "2026-01-01", "launch")
        #expect(recent.standardOutput.contains(#""uniqueIdentifier":"new""#))
        #expect(!recent.standardOutput.contains(#""uniqueIdentifier":"old""#))
        let text = try replica("search", "--type", "public.text", "--limit", "1", "launch")
        #expect(text.status == 0)
        #expect(text.standardOutput.split(separator: "\n").first?.hasSuffix("launch") == true)
        #expect(text.standardOutput.contains("account a"))
        let bad = try replica("search", "--modified-after", "last tuesday", "launch")
        #expect(bad.status == 2)
        #expect(bad.standardError.contains("ISO 8601"))
    }

    @Test(arguments: TestBackend.available)
    func anImportWithBadLinesAppliesTheRestAndExitsOne(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let input = [
            Self.line("good1", title: "Fine", text: "kept"),
            "{not json",
            #"{"attributes": {"title": "no id"}}"#,
            #"{"uniqueIdentifier": "typed", "attributes": {"rating": "five"}}"#,
            Self.line("good2", title: "Also fine", text: "kept"),
        ].joined(separator: "\n")
        let result = try replica("import", "--account", "a", "-", input: input)
        #expect(result.status == 1)
        #expect(result.standardError.contains("line 2: malformed JSON"))
        #expect(result.standardError.contains("line 3: the item has no uniqueIdentifier"))
        #expect(result.standardError.contains("line 4: item 'typed': attribute 'rating' must be a number"))
        #expect(result.standardError.contains("imported 2 items into account 'a'; rejected 3 lines"))
        let search = try replica("search", "--json", "kept")
        #expect(search.standardOutput.components(separatedBy: "uniqueIdentifier").count == 3)
    }

    /// U+0000 in an identifier is refused by every importer (items, entities, activities, records): no
    /// command could name such an item to get or delete it.
    @Test(arguments: TestBackend.available)
    func identifiersHoldingNULAreRefusedByEveryImporter(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let items = [
            Self.line("fine", title: "Fine", text: "kept"), Self.line(#"nul\u0000id"#, title: "Nul", text: "kept"),
            Self.line("dom", title: "Domain", text: "kept", domain: #"account.a\u0000.x"#),
        ].joined(separator: "\n")
        let imported = try replica("import", "--account", "a", "-", input: items)
        #expect(
            imported.status == 1
                && imported.standardError.contains("line 2: uniqueIdentifier holds the character U+0000"),
            "\(imported.standardError)")
        #expect(
            imported.standardError.contains("line 3: item 'dom': domainIdentifier holds the character U+0000"),
            "\(imported.standardError)")
        #expect(imported.standardError.contains("imported 1 item into"), "\(imported.standardError)")
        let entity = try replica(
            "entities", "import", "--account", "a", "-",
            input: #"{"type": "Landmark", "id": "x\u0000y", "title": "Peak"}"#)
        #expect(entity.status == 1 && entity.standardError.contains("U+0000"), "\(entity.standardError)")
        let activity = try replica(
            "activities", "donate", "--account", "a", "-",
            input: #"{"activityType": "view", "persistentIdentifier": "p\u0000q", "title": "Seen"}"#)
        #expect(activity.status == 1 && activity.standardError.contains("U+0000"), "\(activity.standardError)")
        let record = try replica(
            "records", "import", "-",
            input: #"{"account": "a", "kind": "note", "id": "r\u0000s", "version": 1, "fields": {}}"#)
        #expect(record.status == 1 && record.standardError.contains("U+0000"), "\(record.standardError)")
        #expect(try replica("get", "--account", "a", "fine").status == 0)
    }

    /// An import into an account that is not signed in (signed out before it, or while it runs) stops at
    /// the first refusal with one line that says how many lines were not written, not one line per line.
    @Test(arguments: TestBackend.available)
    func anImportRefusedForASignedOutAccountSaysSoOnce(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try replica("accounts", "sign-in", "b")
        try replica("accounts", "sign-out", "b")
        let lines = (1...3_000).map { Self.line("n\($0)", title: "Note", text: "kept") }.joined(separator: "\n")
        let imported = try replica("import", "--account", "b", "-", input: lines)
        #expect(imported.status == 1)
        let notes = imported.standardError.split(separator: "\n").filter { $0.contains("is not signed in") }
        #expect(
            notes.count == 1 && notes.first?.contains("line 1: account 'b' is not signed in") == true
                && notes.first?.contains("3000 lines from there on were not written") == true,
            "\(imported.standardError.prefix(2_000))")
        #expect(
            imported.standardError.contains("imported 0 items into account 'b'; rejected 3000 lines"),
            "\(imported.standardError.suffix(500))")
    }

    @Test(arguments: TestBackend.available)
    func aLineThatIsNotUTF8IsReportedByNumber(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        var bytes = Data((Self.line("ok", title: "Fine", text: "kept") + "\n").utf8)
        bytes.append(contentsOf: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D, 0x0A])
        let file = directory.appending("bad.jsonl")
        try bytes.write(to: file)
        let result = try replica("import", "--account", "a", file.path)
        #expect(result.status == 1)
        #expect(result.standardError.contains("line 2: the line is not valid UTF-8 text"))
    }

    // MARK: Query strings

    @Test(arguments: TestBackend.available)
    func queryPrintsTheItemsAQueryStringSelects(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = [
            Self.line("n1", title: "Launch plan", text: "rocket", modified: "2026-11-20T10:00:00Z"),
            Self.line(
                "n2", title: "Launch review", text: "debrief", modified: "2026-11-21T10:00:00Z",
                type: "public.email-message"),
            Self.line("n3", title: "Budget", text: "numbers", modified: "2026-11-22T10:00:00Z"),
        ].joined(separator: "\n")
        try replica("import", "--account", "a", "-", input: lines)
        let query = try replica(
            "query", "--json", "--fetch", "title,contentType",
            #"title == "launch*"cw && contentModificationDate >= $time.iso(2026-11-20) && !(contentType == "public.email-message")"#
        )
        #expect(query.status == 0)
        #expect(
            query.standardOutput
                == #"{"items":[{"account":"a","index":"default","uniqueIdentifier":"n1","owner":"api","attributes":{"contentType":"public.plain-text","title":"Launch plan"}}],"found":1}"#
                + "\n")
        let plain = try replica("query", #"contentModificationDate > "2026-11-20T12:00:00Z""#)
        #expect(plain.status == 0)
        #expect(
            plain.standardOutput.split(separator: "\n").filter { !$0.hasPrefix(" ") } == [
                "n3 — Budget", "n2 — Launch review",
            ])
    }

    @Test(arguments: TestBackend.available)
    func aMistakeInTheQueryStringIsShownWhereItIs(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let query = try replica("query", #"title == "x" || rating > "high""#)
        #expect(query.status == 2)
        #expect(query.standardOutput.isEmpty)
        #expect(
            query.standardError == """
                replica: error: the query string has a mistake at column 26: rating holds a number; compare it with a number
                  title == "x" || rating > "high"
                                           ^

                """)
    }

    @Test(arguments: TestBackend.available)
    func getPrintsStoredItemsWholeAndNamesTheMissing(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let line =
            #"{"uniqueIdentifier": "n1", "domainIdentifier": "account.a.notes", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "Launch plan", "textContent": "The whole text.", "keywords": ["q3"], "rating": 4}}"#
        try replica("import", "--account", "a", "--index", "Notes", "-", input: line)
        let get = try replica("get", "--account", "a", "--json", "n1", "gone", "n1")
        #expect(get.status == 1)
        let output = get.standardOutput
        #expect(
            output.hasPrefix(
                #"{"items":[{"uniqueIdentifier":"n1","domainIdentifier":"account.a.notes","account":"a","index":"Notes","owner":"api","indexed":""#
            ), "\(output)")
        #expect(
            output.hasSuffix(
                #"","expirationDate":"2099-01-01T00:00:00Z","wordsLanguage":"en","attributes":{"keywords":["q3"],"rating":4,"textContent":"The whole text.","title":"Launch plan"}}],"missing":["gone"]}"#
                    + "\n"), "\(output)")
        #expect(get.standardError == "replica: error: no item 'gone' in account 'a'\n")
        let plain = try replica("get", "--account", "a", "--index", "Notes", "n1")
        #expect(plain.status == 0)
        #expect(plain.standardOutput.contains("  textContent: The whole text.\n"))
        // The language the item's words are stemmed for: English, when CLD2 cannot tell from so short a text.
        #expect(plain.standardOutput.contains(" · words stemmed for en\n"), "\(plain.standardOutput)")
        #expect(try replica("get", "--account", "b", "n1").status == 1)
        // search, suggest and recent refuse an account that is unknown or signed out the same way, rather
        // than answer that it holds nothing.
        try replica("accounts", "sign-in", "c")
        try replica("accounts", "sign-out", "c")
        for account in ["b", "c"] {
            for arguments in [
                ["search", "--account", account, "launch"],
                ["search", "--json", "--account", "a", "--account", account, "launch"],
                ["suggest", "--account", account, "lau"], ["recent", "--account", account],
            ] {
                let refused = try ReplicaProcess.run(place.arguments + arguments)
                #expect(
                    refused.status == 1 && refused.standardOutput.isEmpty
                        && refused.standardError.contains("account '\(account)' is not signed in"),
                    "\(arguments): \(refused.status) \(refused.standardOutput) \(refused.standardError)")
            }
        }
        #expect(try replica("search", "--account", "a", "launch").standardOutput.hasPrefix("n1 — Launch plan"))
    }

    // MARK: Entities, activities, enrichment

    @Test(arguments: TestBackend.available)
    func entitiesAreImportedAndFoundAsEntities(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let line =
            #"{"type": "LandmarkEntity", "id": "42", "title": "Matterhorn", "subtitle": "Zermatt", "priority": 10, "properties": {"description": {"key": "contentDescription", "value": "A pyramid-shaped peak"}, "continent": {"customKey": "com_example_continent", "value": "Europe"}}}"#
        let imported = try replica(
            "entities", "import", "--account", "a", "-", input: line + "\n" + #"{"type": "LandmarkEntity"}"#)
        #expect(imported.status == 1)
        #expect(imported.standardError.contains("line 2: an entity needs a \"type\" and an \"id\""))
        let search = try replica("search", "--json", "pyramid")
        #expect(
            search.standardOutput.contains(#""entity":{"type":"LandmarkEntity","id":"42"}"#), "\(search.standardOutput)"
        )
        let get = try replica("get", "--account", "a", "--json", "entity:LandmarkEntity:42")
        #expect(
            get.standardOutput.contains(#""com_example_continent":"Europe""#)
                && !get.standardOutput.contains("replica."))
    }

    @Test(arguments: TestBackend.available)
    func activitiesFeedRecentAndCanBeDeleted(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try replica(
            "import", "--account", "a", "-",
            input: Self.line("n1", title: "Alpha", text: "a") + "\n" + Self.line("n2", title: "Beta", text: "b"))
        let views =
            (0..<3).map { _ in
                #"{"activityType": "com.example.view", "persistentIdentifier": "view:n2", "relatedUniqueIdentifier": "n2", "eligibleForPrediction": true}"#
            }
            + [
                #"{"activityType": "com.example.view", "persistentIdentifier": "view:n1", "relatedUniqueIdentifier": "n1", "eligibleForPrediction": true, "date": "2026-01-01T00:00:00Z"}"#
            ]
        let donated = try replica("activities", "donate", "--account", "a", "-", input: views.joined(separator: "\n"))
        #expect(donated.status == 0)
        let recent = try replica("recent", "--json")
        #expect(recent.status == 0)
        let ids = (try JSON.parse(recent.standardOutput)["recent"]?.arrayValue ?? []).compactMap {
            $0["uniqueIdentifier"]?.stringValue
        }
        #expect(ids == ["n2", "n1"])
        #expect(
            recent.standardOutput.contains(#""title":"Beta","activityType":"com.example.view","#)
                && recent.standardOutput.contains(#""views":3"#))
        #expect(try replica("activities", "delete", "--account", "a", "--all").status == 0)
        #expect(try replica("recent", "--json").standardOutput == #"{"recent":[]}"# + "\n")
    }

    /// One activity too large to keep (a 20 MB title) used to cancel the whole donation; it is reported by
    /// its line number and skipped, and the rest are donated, as the help says.
    @Test(arguments: TestBackend.available)
    func anOversizedActivityIsSkippedAndTheRestAreDonated(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let view = { (id: Int) in
            #"{"activityType": "com.example.view", "persistentIdentifier": "view:\#(id)", "title": "Visit \#(id)", "eligibleForPrediction": true}"#
        }
        var lines = (1...10).map(view)
        lines.append(
            #"{"activityType": "com.example.view", "persistentIdentifier": "view:huge", "eligibleForPrediction": true, "title": ""#
                + String(repeating: "x", count: 20 << 20) + #""}"#)
        lines.append(view(12))
        let donated = try replica("activities", "donate", "--account", "a", "-", input: lines.joined(separator: "\n"))
        #expect(donated.status == 1)
        #expect(donated.standardError.contains("line 11:"), "\(donated.standardError)")
        #expect(donated.standardError.contains("donated 11 activities"), "\(donated.standardError)")
        #expect(!donated.standardError.contains("xxxx"), "no content in the error")
        let recent = try replica("recent", "--limit", "100", "--json")
        #expect((try JSON.parse(recent.standardOutput)["recent"]?.arrayValue ?? []).count == 11)
    }

    @Test(arguments: TestBackend.available)
    func getOfAnEntityNamesItsTypeAndIdentifier(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let entity =
            #"{"type": "LandmarkEntity", "id": "42", "title": "Matterhorn", "properties": {"description": {"key": "contentDescription", "value": "A pyramid-shaped peak"}}}"#
        #expect(try replica("entities", "import", "--account", "a", "-", input: entity).status == 0)
        #expect(
            try replica("import", "--account", "a", "-", input: Self.line("n1", title: "Plain", text: "not an entity"))
                .status == 0)
        let get = try replica("get", "--account", "a", "--json", "entity:LandmarkEntity:42", "n1")
        #expect(get.status == 0, "\(get.standardError)")
        let items = try JSON.parse(get.standardOutput)["items"]?.arrayValue ?? []
        let byIdentifier = Dictionary(
            uniqueKeysWithValues: items.compactMap { item in item["uniqueIdentifier"]?.stringValue.map { ($0, item) } })
        #expect(byIdentifier.keys.sorted() == ["entity:LandmarkEntity:42", "n1"])
        #expect(
            byIdentifier["entity:LandmarkEntity:42"]?["entity"] == .object([("type", "LandmarkEntity"), ("id", "42")]))
        #expect(byIdentifier["n1"]?["entity"] == nil, "an item that is no entity says nothing of one")
        #expect(get.standardOutput.contains(#""entity":{"type":"LandmarkEntity","id":"42"}"#))
    }

    /// Imports n1 (Alpha) and n2 (Beta) into account a, and donates views: n1 once, n2 three times.
    func importAndView() throws {
        try replica(
            "import", "--account", "a", "-",
            input: Self.line("n1", title: "Alpha", text: "a") + "\n" + Self.line("n2", title: "Beta", text: "b"))
        let views =
            [
                #"{"activityType": "com.example.view", "persistentIdentifier": "view:n1", "relatedUniqueIdentifier": "n1", "eligibleForPrediction": true}"#
            ]
            + (0..<3).map { _ in
                #"{"activityType": "com.example.view", "persistentIdentifier": "view:n2", "relatedUniqueIdentifier": "n2", "eligibleForPrediction": true}"#
            }
        #expect(
            try replica("activities", "donate", "--account", "a", "-", input: views.joined(separator: "\n")).status == 0
        )
    }

    func recentIdentifiers(_ arguments: String...) throws -> [String] {
        let recent = try ReplicaProcess.run(place.arguments + ["recent", "--json"] + arguments)
        #expect(recent.status == 0, "\(recent.standardError)")
        return (try JSON.parse(recent.standardOutput)["recent"]?.arrayValue ?? []).compactMap {
            $0["uniqueIdentifier"]?.stringValue
        }
    }

    @Test(arguments: TestBackend.available)
    func activitiesDeleteByIdentifierRemovesJustThatActivity(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try importAndView()
        #expect(try recentIdentifiers() == ["n2", "n1"])
        let deleted = try replica("activities", "delete", "--account", "a", "--id", "view:n2")
        #expect(deleted.status == 0)
        #expect(deleted.standardError.contains("deleted 1 activity"), "\(deleted.standardError)")
        #expect(try recentIdentifiers() == ["n1"])
        // The item stays; only the activity about it went.
        #expect(try replica("search", "--json", "beta").standardOutput.contains(#""uniqueIdentifier":"n2""#))
        #expect(
            try replica("activities", "delete", "--account", "a", "--id", "view:n2").standardError.contains(
                "deleted 0 activities"))
    }

    @Test(arguments: TestBackend.available)
    func recentKeepsToItsLimitAndTheAccountsAskedFor(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try importAndView()
        try replica("accounts", "sign-in", "b")
        try replica("import", "--account", "b", "-", input: Self.line("b1", title: "Gamma", text: "g"))
        let view =
            #"{"activityType": "com.example.view", "persistentIdentifier": "view:b1", "relatedUniqueIdentifier": "b1", "eligibleForPrediction": true}"#
        #expect(try replica("activities", "donate", "--account", "b", "-", input: view).status == 0)

        #expect(try recentIdentifiers("--account", "a", "--limit", "1") == ["n2"])
        let plain = try replica("recent", "--account", "a", "--limit", "1")
        #expect(plain.status == 0)
        let lines = plain.standardOutput.split(separator: "\n")
        #expect(lines.count == 2 && lines.first == "n2 — Beta", "one item, two lines: \(plain.standardOutput)")
        #expect(lines.last?.hasPrefix("  account a · 3 views · last ") == true)

        let other = try ReplicaProcess.run(place.arguments + ["recent", "--json", "--account", "b"])
        let entries = try JSON.parse(other.standardOutput)["recent"]?.arrayValue ?? []
        #expect(entries.compactMap { $0["uniqueIdentifier"]?.stringValue } == ["b1"], "none of account a's items")
        #expect(entries.allSatisfy { $0["account"]?.stringValue == "b" })
        #expect(Set(try recentIdentifiers()) == ["n1", "n2", "b1"], "without --account, every signed-in account's")
        let absent = try replica("recent", "--account", "nobody")
        #expect(absent.status != 0 && absent.standardError.contains("account 'nobody' is not signed in"))
    }

    @Test(arguments: TestBackend.available)
    func importedMessagesAreEnrichedAndStatusCountsWhatWasNot(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let now = ISO8601.string(from: Date())
        let text =
            String(repeating: "The launch moves to Friday because the supplier is late. ", count: 5)
            + "Can you confirm by tomorrow?"
        let lines = [
            #"{"uniqueIdentifier": "m1", "domainIdentifier": "thread.1", "updateListenerOptions": ["summarization", "priority"], "attributes": {"contentType": "public.email-message", "title": "Launch", "textContent": "\#(text)", "contentCreationDate": "\#(now)", "authors": [{"displayName": "Bob", "handles": ["bob@example.com"]}]}}"#,
            #"{"uniqueIdentifier": "m2", "domainIdentifier": "thread.1", "updateListenerOptions": ["summarization"], "attributes": {"contentType": "public.email-message", "title": "Re", "textContent": "ok", "contentCreationDate": "\#(now)", "authorNames": ["Ada"]}}"#,
        ]
        #expect(try replica("import", "--account", "a", "-", input: lines.joined(separator: "\n")).status == 0)
        let get = try replica("get", "--account", "a", "--json", "m1")
        let attributes = try JSON.parse(get.standardOutput)["items"]?.arrayValue?.first?["attributes"]
        #expect(attributes?["textContentSummary"]?.stringValue?.contains("supplier") == true)
        #expect(attributes?["isPriority"]?.boolValue != nil)
        let status = try replica("status", "--json")
        let enrichment = try JSON.parse(status.standardOutput)["accounts"]?.arrayValue?.first?["indexes"]?.arrayValue?
            .first?["enrichment"]
        #expect(enrichment?["enriched"]?.intValue == 1)
        #expect(enrichment?["skipped"] == .object([("summarization.tooShort", 1)]))
        #expect(
            try replica("status").standardOutput.contains(
                "summaries and priority: 1 enriched; not enriched: 1 summarization.tooShort"))
    }

    @Test(arguments: TestBackend.available)
    func watchAnnouncesEnrichedItemsAsJSONLines(_ backend: TestBackend) async throws {
        try await place.use(backend, signingIn: "a")
        let watcher = try RunningProcess(replica: place.arguments + ["watch", "--json"])
        // Another process (the app) indexes a message that asks for a summary; the watcher enriches it.
        let app = try place.openStore()
        var attributes = AttributeSet(contentType: .emailMessage)
        attributes.textContent = String(
            repeating: "The launch moves to Friday because the supplier is late. ", count: 5)
        attributes.contentCreationDate = Date()
        attributes.authorNames = ["Bob"]
        var mail = SearchableItem(uniqueIdentifier: "m1", domainIdentifier: "thread.1", attributeSet: attributes)
        mail.updateListenerOptions = [.summarization]
        try await app.index(account: "a").indexItems([mail])
        let line =
            #"{"event":"itemsUpdated","account":"a","index":"default","items":[{"uniqueIdentifier":"m1","changed":["textContentSummary"]}]}"#
        #expect(await eventually { watcher.standardOutput.contains(line) }, "\(watcher.standardOutput)")
        watcher.signal(SIGTERM)
        #expect(await watcher.exit(within: 120) == 0)
    }

    // MARK: Usage and exit codes

    @Test func usageErrorsExitTwoAndSayWhatToDo() throws {
        try place.use(.sqlite, signingIn: "a")
        let cases: [([String], String)] = [
            (["frobnicate"], "unknown command 'frobnicate'"),
            (["import", "-"], "this command needs --account ID"),
            (["search", "--limit", "0", "x"], "option --limit needs a whole number from 1 to 10000"),
            (["search", "--bogus", "x"], "unknown option --bogus"),
            (["delete", "--account", "a"], "say what to delete"),
            (["delete", "--account", "a", "--id", "x", "--all"], "use one of --id, --domain and --all"),
            (["accounts", "explode"], "unknown accounts action 'explode'"),
            (["switch-account"], "switch-account needs one account ID"),
        ]
        for (arguments, message) in cases {
            let result = try ReplicaProcess.run(place.arguments + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            #expect(result.standardOutput.isEmpty)
        }
        let bare = try ReplicaProcess.run([])
        #expect(bare.status == 2)
        #expect(bare.standardOutput.contains("Usage: replica"))
    }

    @Test func everyCommandHasHelp() throws {
        try place.use(.sqlite, signingIn: "a")
        for command in ["import", "search", "delete", "status", "accounts", "switch-account"] {
            for form in [[command, "--help"], ["--help", command], ["help", command], [command, "-h"]] {
                let result = try ReplicaProcess.run(form)
                #expect(result.status == 0, "\(form)")
                #expect(result.standardOutput.hasPrefix("Usage: replica"), "\(form)")
            }
        }
        let top = try ReplicaProcess.run(["--help"])
        #expect(top.status == 0)
        #expect(top.standardOutput.contains("switch-account"))
        #expect(try ReplicaProcess.run(["--version"]).standardOutput.hasPrefix("replica "))
    }

    @Test func theStoreComesFromTheOptionTheEnvironmentOrXDG() throws {
        try place.use(.sqlite, signingIn: "a")
        let input = Self.line("n1", title: "T", text: "located")
        let xdg = directory.path + "/xdg"
        try Fixtures.signIn(store: xdg + "/replica", "a")
        let fromXDG = try ReplicaProcess.run(
            ["import", "--account", "a", "-"], input: input,
            environment: ["XDG_DATA_HOME": xdg, "REPLICA_STORE": ""])
        #expect(fromXDG.status == 0)
        #expect(FileManager.default.fileExists(atPath: xdg + "/replica/catalog.sqlite"))
        let fromEnvironment = try ReplicaProcess.run(
            ["search", "--json", "located"], environment: ["REPLICA_STORE": xdg + "/replica"])
        #expect(fromEnvironment.standardOutput.contains(#""uniqueIdentifier":"n1""#))
    }

    /// The catalog says who is signed in: damaged, it stops every command with words that say so, and
    /// nothing is deleted; restored, the store works again.
    @Test func aDamagedCatalogStopsEveryCommandAndDeletesNothing() throws {
        try place.use(.sqlite, signingIn: "a")
        #expect(
            try replica("import", "--account", "a", "-", input: Self.line("1", title: "harbor", text: "quay")).status
                == 0)
        let catalog = store + "/catalog.sqlite"
        try Connection(path: catalog).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let sound = try Data(contentsOf: URL(fileURLWithPath: catalog))
        // Page 1 past its 100-byte header (where the schema lives) is overwritten.
        var damaged = sound
        damaged.replaceSubrange(
            100..<min(4096, sound.count), with: Data(repeating: 0xA5, count: min(4096, sound.count) - 100))
        try damaged.write(to: URL(fileURLWithPath: catalog))
        let files = TemporaryDirectory.allFiles(under: URL(fileURLWithPath: store + "/accounts")).map(\.path).sorted()
        for command in [
            ["status"], ["search", "harbor"], ["accounts", "sign-out", "a"], ["import", "--account", "a", "-"],
        ] {
            let result = try ReplicaProcess.run(
                place.arguments + command, input: Self.line("2", title: "late", text: "x"))
            #expect(result.status == 1, "\(command)")
            #expect(
                result.standardError.contains(
                    "the store's catalog (\(catalog)) is damaged or the disk could not read it")
                    && result.standardError.contains("has deleted nothing"), "\(command): \(result.standardError)")
        }
        #expect(
            TemporaryDirectory.allFiles(under: URL(fileURLWithPath: store + "/accounts")).map(\.path).sorted() == files)
        try sound.write(to: URL(fileURLWithPath: catalog))
        #expect(try replica("search", "--json", "harbor").standardOutput.contains(#""uniqueIdentifier":"1""#))
    }

    // MARK: Deletes, accounts, status

    @Test(arguments: TestBackend.available)
    func deletesByIdentifierDomainAndAll(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = [
            Self.line("1", title: "a", text: "word", domain: "account.a"),
            Self.line("2", title: "b", text: "word", domain: "account.a.notes"),
            Self.line("3", title: "c", text: "word", domain: "account.ab"),
            Self.line("4", title: "d", text: "word"),
            Self.line("5", title: "e", text: "word"),
        ].joined(separator: "\n")
        try replica("import", "--account", "a", "-", input: lines)
        #expect(
            try replica("delete", "--account", "a", "--json", "--domain", "account.a").standardOutput
                == "{\"deleted\":2}\n")
        #expect(
            try replica("delete", "--account", "a", "--json", "--id", "4", "5", "missing").standardOutput
                == "{\"deleted\":2}\n")
        #expect(try replica("delete", "--account", "a", "--json", "--all").standardOutput == "{\"deleted\":1}\n")
        #expect(try replica("delete", "--account", "nobody", "--json", "--all").standardOutput == "{\"deleted\":0}\n")
        #expect(try replica("accounts").standardOutput == "a\n", "deleting from an unknown account does not create it")
    }

    @Test(arguments: TestBackend.available)
    func statusShowsCountsSizesAndTheClientState(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let lines = (1...3).map { Self.line("n\($0)", title: "t", text: "word") }.joined(separator: "\n")
        try replica("accounts", "sign-in", "b")
        try replica("import", "--account", "b", "--client-state", "cursor=3", "-", input: lines)
        try replica("import", "--account", "a", "-", input: lines)
        let status = try replica("status", "--json")
        #expect(status.status == 0)
        let text = status.standardOutput
        #expect(text.contains(#""accounts":[{"id":"a","itemCount":3,"indexBytes":"#))
        #expect(text.contains(#"{"id":"b","itemCount":3,"indexBytes":"#))
        #expect(text.contains(#""lastClientState":"cursor=3""#))
        #expect(text.contains(#""lastClientState":null"#))
        let human = try replica("status")
        #expect(human.standardOutput.contains("account b: 3 items"))
        #expect(human.standardOutput.contains("client state cursor=3"))
    }

    @Test(arguments: TestBackend.available)
    func accountsSignInListSignOutAndSwitch(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        try replica("accounts", "sign-in", "x")
        try replica("accounts", "sign-in", "y")
        try replica("import", "--account", "y", "-", input: Self.line("n", title: "t", text: "word"))
        #expect(try replica("accounts", "list").standardOutput == "a\nx\ny\n")
        #expect(try replica("accounts", "--json").standardOutput.hasPrefix(#"{"accounts":[{"id":"a","signedInAt":"#))
        let removed = try replica("accounts", "remove", "x")
        #expect(removed.status == 0)
        #expect(try replica("accounts").standardOutput == "a\ny\n")
        let again = try replica("accounts", "sign-out", "x")
        #expect(again.status == 1)
        #expect(again.standardError.contains("the store has no account 'x'"))
        try replica("switch-account", "z")
        #expect(try replica("accounts").standardOutput == "z\n")
        #expect(try replica("search", "--json", "word").standardOutput == "{\"results\":[]}\n")
    }

    // MARK: Crashes and concurrency

    @Test(arguments: TestBackend.available)
    func aBatchKilledBeforeItsCommitLeavesTheIndexAndStateAsTheyWere(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let first = (1...5).map { Self.line("old\($0)", title: "t", text: "before") }.joined(separator: "\n")
        try replica("import", "--account", "a", "--client-state", "v1", "-", input: first)
        let second = (1...500).map { Self.line("new\($0)", title: "t", text: "after") }.joined(separator: "\n")

        let killed = try replica(
            "import", "--account", "a", "--client-state", "v2", "-", input: second,
            environment: ["REPLICA_TEST_CRASH": "batch.beforeCommit:1"])
        #expect(killed.wasSignaled, "the crash point should have killed the import")
        let afterCrash = try replica("status", "--json").standardOutput
        #expect(afterCrash.contains(#""itemCount":5"#))
        #expect(afterCrash.contains(#""lastClientState":"v1""#))
        #expect(try replica("search", "--json", "after").standardOutput == "{\"results\":[]}\n")

        let committed = try replica(
            "import", "--account", "a", "--client-state", "v2", "-", input: second,
            environment: ["REPLICA_TEST_CRASH": "batch.afterCommit:1"])
        #expect(committed.wasSignaled)
        let afterCommit = try replica("status", "--json").standardOutput
        #expect(afterCommit.contains(#""itemCount":505"#))
        #expect(afterCommit.contains(#""lastClientState":"v2""#))
    }

    @Test(arguments: TestBackend.available)
    func concurrentWritersTakeTurnsInsteadOfFailing(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        let group = DispatchGroup()
        let results = Recorder<ProcessResult>()
        for writer in 0..<3 {
            let lines = (0..<3000).map { Self.line("w\(writer)-\($0)", title: "t", text: "concurrent words \($0)") }
                .joined(separator: "\n")
            DispatchQueue.global().async(group: group) {
                if let result = try? ReplicaProcess.run(
                    place.arguments + ["import", "--account", "a", "-"], input: lines)
                {
                    results.append(result)
                }
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        #expect(results.all.count == 3)
        #expect(results.all.allSatisfy { $0.status == 0 }, "\(results.all.map(\.standardError))")
        #expect(try replica("status", "--json").standardOutput.contains(#""itemCount":9000"#))
    }

    @Test func aSignOutInterruptedHalfwayHidesTheAccountAndIsFinishedNextTime() throws {
        try place.use(.sqlite, signingIn: "a")
        let canary = "qqcanary\(UInt32.random(in: 0..<UInt32.max))"
        try replica("switch-account", "kept")
        try replica("accounts", "sign-in", "gone")
        try replica("import", "--account", "gone", "-", input: Self.line("n", title: canary, text: "\(canary) body"))
        try replica("import", "--account", "kept", "-", input: Self.line("k", title: "kept", text: "kept body"))
        let killed = try replica(
            "accounts", "sign-out", "gone", environment: ["REPLICA_TEST_CRASH": "signOut.recorded:1"])
        #expect(killed.wasSignaled)
        #expect(!directory.filesContaining(canary).isEmpty, "killed before the files were removed")

        let search = try replica("search", "--json", canary)
        #expect(search.standardOutput == "{\"results\":[]}\n")
        #expect(search.standardError.contains("finished signing out account 'gone'"))
        #expect(directory.filesContaining(canary).isEmpty)
        #expect(try replica("accounts").standardOutput == "kept\n")
    }
}

/// Text from outside never acts on a terminal or splits a line of output.
/// On both backends.
@Suite struct ControlCharacterTests {
    let place: CLIPlace

    init() throws {
        place = CLIPlace(directory: try TemporaryDirectory())
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(place.arguments + arguments, input: input)
    }

    /// Raw characters that must never come out: ESC, other C0 and C1 controls, DEL, line and paragraph
    /// separators, direction overrides (a line break is allowed only between lines).
    static func rawUnsafe(_ text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && DisplayText.isUnsafe($0) }.map { String($0.value, radix: 16) }
    }

    @Test(arguments: TestBackend.available)
    func titlesAndIdentifiersWithControlCharactersAreEscapedEverywhere(_ backend: TestBackend) throws {
        try place.use(backend, signingIn: "a")
        // JSON escapes: ESC, CR, tab, a line break, U+2028, a C1 control and a right-to-left override.
        let evilID = #"evil\n1 99 fake\u2028line\u001b[2J\u0085"#
        let evilTitle = #"harbor \u001b[31mred\u001b[0m\r\nforged line\u202e\u009b"#
        let lines = [
            #"{"uniqueIdentifier": "\#(evilID)", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "\#(evilTitle)", "textContent": "harbor words \u2029 more\u0007"}}"#,
            #"{"uniqueIdentifier": "plain", "expirationDate": "2099-01-01T00:00:00Z", "attributes": {"title": "harbor plain", "textContent": "harbor"}}"#,
        ].joined(separator: "\n")
        #expect(
            try replica("import", "--account", "a", "--client-state", "state\u{1B}[2Jx", "-", input: lines).status == 0)

        let human = try replica("search", "harbor")
        #expect(human.status == 0)
        #expect(Self.rawUnsafe(human.standardOutput).isEmpty, "\(human.standardOutput.debugDescription)")
        #expect(human.standardOutput.contains(#"evil\n1 99 fake\u{2028}line\u{1B}[2J"#), "\(human.standardOutput)")
        // Two results of three lines each: nothing in them started a line of its own.
        #expect(human.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).count == 7)

        let status = try replica("status")
        #expect(Self.rawUnsafe(status.standardOutput).isEmpty, "\(status.standardOutput.debugDescription)")

        for format in ["compact", "structured"] {
            let tool = try replica("tool", "call", "--format", format, #"{"query": "harbor"}"#)
            #expect(tool.status == 0, "\(tool.standardError)")
            #expect(Self.rawUnsafe(tool.standardOutput).isEmpty, "\(format): \(tool.standardOutput.debugDescription)")
            if format == "compact" {
                // The preamble, the query's line and one line per result.
                let outputLines = tool.standardOutput.split(separator: "\n")
                #expect(outputLines.count == 4, "\(tool.standardOutput)")
                #expect(
                    outputLines.contains {
                        $0.hasPrefix("1 evil%0A1%2099%20fake%E2%80%A8line%1B[2J%C2%85 ") || $0.hasPrefix("2 evil%0A1")
                    },
                    "\(tool.standardOutput)")
            }
        }
        let json = try replica("search", "--json", "harbor")
        #expect(Self.rawUnsafe(json.standardOutput).isEmpty)
        #expect(
            json.standardOutput.contains(#"\u2028"#) && json.standardOutput.contains(#"\u001b"#)
                && json.standardOutput.contains(#"\u0085"#))
    }
}

/// Questions on the command line and in the tool: ranked by default, every word only when asked.
@Suite struct QuestionTests {
    let directory: TemporaryDirectory
    var store: String { directory.path + "/store" }

    init() throws {
        directory = try TemporaryDirectory()
        try Fixtures.signIn(store: store, "a")
        let lines = [
            CLITests.line("ipsc", title: "Reprogramming", text: "induction of pluripotent stem cells without c-Myc"),
            CLITests.line("heart", title: "Cardiac repair", text: "stem cell therapy"),
        ].joined(separator: "\n")
        #expect(try replica("import", "--account", "a", "-", input: lines).status == 0)
    }

    @discardableResult
    @available(*, noasync, message: "it waits for a process")
    func replica(_ arguments: String..., input: String? = nil) throws -> ProcessResult {
        try ReplicaProcess.run(["--store", store] + arguments, input: input)
    }

    func ids(_ output: String) throws -> [String] {
        try JSON.parse(output)["results"]?.arrayValue?.compactMap { $0["uniqueIdentifier"]?.stringValue } ?? []
    }

    @Test func searchRanksByDefaultAndRequiresEveryWordWithAll() throws {
        let question = ["search", "--json", "which", "stem", "cell", "induction", "methods", "avoid", "c-Myc?"]
        #expect(try ids(ReplicaProcess.run(["--store", store] + question).standardOutput) == ["ipsc", "heart"])
        #expect(
            try ids(ReplicaProcess.run(["--store", store] + question + ["--any"]).standardOutput) == ["ipsc", "heart"])
        #expect(try ids(ReplicaProcess.run(["--store", store] + question + ["--all"]).standardOutput) == [])
        #expect(try ids(replica("search", "--json", "--all", "stem", "therapy").standardOutput) == ["heart"])
        let both = try replica("search", "--all", "--any", "stem")
        #expect(both.status == 2 && both.standardError.contains("--all and --any contradict each other"))
        let human = try replica("search", "stem", "induction")
        #expect(
            human.standardOutput.contains("score 0.") || human.standardOutput.contains("score 1.00"),
            "a score a person can read: \(human.standardOutput)")
        #expect(!human.standardOutput.contains("score 0.00"))
    }

    @Test func theToolOffersAllWordsOnlyWithCompleteGuidance() throws {
        let ranked = try replica("tool", "call", #"{"query": "which stem cell methods avoid c-Myc?"}"#)
        #expect(ranked.standardOutput.contains(#""id":"ipsc""#), "\(ranked.standardOutput)")
        let all = try replica("tool", "call", #"{"query": "stem therapy", "allWords": true}"#)
        #expect(
            all.status == 0 && all.standardOutput.contains(#""id":"heart""#)
                && !all.standardOutput.contains(#""id":"ipsc""#))
        #expect(try replica("tool", "schema").standardOutput.contains(#""allWords""#))
        let focused = try replica("tool", "schema", "--guidance", "focused:documents")
        #expect(focused.status == 0 && !focused.standardOutput.contains("allWords"), "\(focused.standardError)")
    }

    /// With the model installed: a query that shares no word with an item finds it by meaning, through
    /// every face (search, tool call, mcp), and each result says how it matched.
    @Test func aQuestionFindsAnItemByMeaningThroughSearchToolAndMCP() throws {
        let store = directory.path + "/semantic"
        try Fixtures.signIn(store: store, "a")
        func replica(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
            try ReplicaProcess.run(["--store", store] + arguments, input: input, environment: ReplicaProcess.withModel)
        }
        let lines = [
            CLITests.line("cat", title: "Afternoon", text: "The feline dozed on the rug all afternoon."),
            CLITests.line("tax", title: "Quarterly filing", text: "Submit the VAT return before the deadline."),
        ].joined(separator: "\n")
        let imported = try replica(["import", "--account", "a", "-"], input: lines)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(
            try replica(["status", "--json"]).standardOutput.contains(
                #""vectors":{"items":2,"passages":2,"bytes":776,"backlog":0}"#))

        let search = try replica(["search", "--json", "cat", "sleeping", "on", "a", "carpet"])
        let results = try JSON.parse(search.standardOutput)["results"]?.arrayValue ?? []
        #expect(
            results.first?["uniqueIdentifier"]?.stringValue == "cat"
                && results.first?["matched"]?.stringValue == "semantic", "\(search.standardOutput)")
        #expect(
            !results.contains { $0["uniqueIdentifier"]?.stringValue == "tax" }, "an unrelated item is not close enough")
        #expect(
            try replica(["search", "--json", "--lexical", "cat", "sleeping", "on", "a", "carpet"]).standardOutput
                == "{\"results\":[]}\n")

        let tool = try replica(["tool", "call", #"{"query": "where did the cat sleep?"}"#])
        #expect(
            tool.standardOutput.contains(#""id":"cat""#) && tool.standardOutput.contains(#""matched":"semantic""#),
            "\(tool.standardOutput)")

        let messages = [
            #"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}"#,
            #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
            #"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "a sleeping cat"}}}"#,
        ]
        let mcp = try replica(["mcp"], input: messages.joined(separator: "\n") + "\n")
        #expect(mcp.standardOutput.contains(#"\"id\":\"cat\""#), "\(mcp.standardOutput)")
    }
}
