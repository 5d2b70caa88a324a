import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// Every result is checked with its owner before anyone sees it, and what fails is dropped.
/// Runs on both backends (``TestBackend``).
@Suite struct HydrationTests {
    func make(_ backend: TestBackend) async throws -> ToolFixture {
        try await ToolFixture(backend)
    }

    func note(
        _ id: String, version: Int64, title: String, body: String, deleted: Bool = false, readers: [AccountID]? = nil
    ) -> Record {
        Record(
            account: "a", kind: "note", id: id, version: version, isDeleted: deleted, readers: readers,
            fields: [("title", .string(title)), ("body", .string(body))])
    }

    @Test(arguments: TestBackend.available)
    func aDeletedRecordIsDroppedAndRemovedFromTheIndex(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // The record store has the deletion; the projection has not applied it yet.
        try await fixture.store.records.write([note("plan", version: 2, title: "Launch plan", body: "", deleted: true)])
        #expect(try await fixture.indexed("supplier") == ["note:a:plan"])
        let found = try await fixture.store.search(SearchQuery("supplier"), hydration: fixture.hydration)
        #expect(found.results.isEmpty)
        #expect(
            found.dropped == [DroppedItem(account: "a", identifier: "note:a:plan", reason: "the record was deleted")])
        #expect(try await fixture.indexed("supplier").isEmpty, "what hydration finds gone leaves the index")
    }

    @Test(arguments: TestBackend.available)
    func aRecordTheAccountMayNoLongerReadIsDroppedAndRemoved(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([
            note("plan", version: 2, title: "Launch plan", body: "supplier risk", readers: ["b"])
        ])
        _ = try await ProjectionEngine(store: fixture.store, projections: fixture.projections).catchUp(account: "a")
        let result = await fixture.tool().call(arguments: #"{"query": "supplier"}"#)
        let structured = try StructuredResult(result)
        #expect(structured.ids.isEmpty)
        #expect(structured.first["found"]?.intValue == 0)
        #expect(!result.text.contains("withheld"), "the model is not told that an unreadable item exists")
        #expect(!result.text.contains("Launch plan"), "a withheld item shows nothing of itself")
        #expect(try await fixture.indexed("supplier").isEmpty)
        // Shared with the account again, it is found again.
        try await fixture.store.records.write([
            note("plan", version: 3, title: "Launch plan", body: "supplier risk", readers: ["a", "b"])
        ])
        #expect(
            try StructuredResult(await fixture.tool().call(arguments: #"{"query": "supplier"}"#)).ids == ["note:a:plan"]
        )
    }

    /// Issue 19, 4.1: a query that fetched only some attributes left hydration without the record's kind
    /// and id, and hydration removed every record item it read.
    @Test(arguments: TestBackend.available)
    func aQueryFetchingSomeAttributesKeepsAndNeverRemovesRecordItems(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        for fetched: [AttributeKey] in [[.title], [.textContent], []] {
            var query = SearchQuery("supplier")
            query.fetchAttributes = fetched
            let found = try await fixture.store.search(query, hydration: fixture.hydration)
            #expect(found.dropped.isEmpty, "\(fetched): \(found.dropped)")
            #expect(found.results.map(\.item.uniqueIdentifier.rawValue) == ["note:a:plan"])
            #expect(
                found.results.first?.item.attributeSet.keys == fetched.sorted(),
                "each result carries what was fetched, no more")
            #expect(
                try await fixture.indexed("supplier") == ["note:a:plan"],
                "a read never removes what its owner still has")
        }
        let titles = try await fixture.store.query(#"title == "*""#, fetchAttributes: [.title])
        for try await _ in titles.results {}
        #expect(try await fixture.indexed("supplier") == ["note:a:plan"])
    }

    /// Issue 19, 4.1: builds before the fix removed record items on a read, and nothing brought them back
    /// (the change log says only what changed). The next catch-up compares once and projects them again.
    @Test(arguments: TestBackend.available)
    func anItemMissingWhileItsRecordLivesComesBackAtTheNextCatchUp(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // What the old `query --fetch` did, in an index from before the comparison.
        try await fixture.store.deleteReliably(
            [.identifier("note:a:plan"), .identifier("note:a:budget")], account: "a")
        let index = try await fixture.store.index(account: "a")
        try await Blocking.run { try index.writeNow { try $0.setMeta(ProjectionEngine.missingItemsCheckedKey, nil) } }
        #expect(try await fixture.indexed("supplier").isEmpty)
        let engine = ProjectionEngine(store: fixture.store, projections: fixture.projections)
        let report = try await engine.catchUp(account: "a")
        #expect(report.indexed == 2, "\(report)")
        #expect(try await fixture.indexed("supplier") == ["note:a:plan"])
        #expect(
            try await fixture.store.search(SearchQuery("supplier"), hydration: fixture.hydration).results.map(
                \.item.uniqueIdentifier) == ["note:a:plan"])
        // Compared once: later catch-ups follow the change log alone.
        #expect(try await engine.catchUp(account: "a") == CatchUpReport())
    }

    /// An item hydration removes is left to the projection engine: its record is projected again at the
    /// next catch-up, so one removed by mistake (its record written again since it was read) comes back.
    @Test(arguments: TestBackend.available)
    func aRecordWhoseItemHydrationRemovesIsProjectedAgainAtTheNextCatchUp(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([
            note("plan", version: 2, title: "Launch plan", body: "supplier risk", deleted: true)
        ])
        let records = try #require(try await fixture.store.recordStorage(for: "a", creating: false))
        let before = try await Blocking.run { try records.lastSequence() }
        let found = try await fixture.store.search(SearchQuery("supplier"), hydration: fixture.hydration)
        #expect(found.dropped.map(\.reason) == ["the record was deleted"])
        let changes = try await Blocking.run {
            try records.changes(after: before, limit: 10).map { "\($0.0.kind):\($0.0.id)" }
        }
        #expect(changes == ["note:plan"])
        let report = try await ProjectionEngine(store: fixture.store, projections: fixture.projections).catchUp(
            account: "a")
        #expect(report.changesApplied == 2, "the deletion and the record hydration handed back: \(report)")
        #expect(try await fixture.indexed("supplier").isEmpty)
    }

    /// A record whose readers leave out its account is kept out of the account's index, as a deleted one is:
    /// nothing of it (words, title) is there for any face to show.
    @Test(arguments: TestBackend.available)
    func aRecordItsAccountMayNotReadIsNotIndexed(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([
            note("secret", version: 1, title: "Zanzibar hidden plan", body: "quokkamystery", readers: ["b"])
        ])
        _ = try await ProjectionEngine(store: fixture.store, projections: fixture.projections).catchUp(account: "a")
        #expect(try await fixture.indexed("quokkamystery").isEmpty)
        try await fixture.store.records.write([
            note("secret", version: 2, title: "Zanzibar hidden plan", body: "quokkamystery", readers: ["a", "b"])
        ])
        _ = try await ProjectionEngine(store: fixture.store, projections: fixture.projections).catchUp(account: "a")
        #expect(try await fixture.indexed("quokkamystery") == ["note:a:secret"])
    }

    /// Issue 19, 4.3: `get`, `suggest` and `recent` showed what hydration withholds from a search. The
    /// index lags here (the record became unreadable after it was indexed), as it can for any owner.
    @Test(arguments: TestBackend.available)
    func getSuggestionsAndRecentShowOnlyWhatTheOwnerLetsTheAccountRead(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let engine = ProjectionEngine(store: fixture.store, projections: fixture.projections)
        var version: Int64 = 0
        /// The secret note indexed while readable, then made unreadable without the projection catching up.
        func indexThenHide() async throws {
            version += 1
            try await fixture.store.records.write([
                note("secret", version: version, title: "Zanzibar hidden plan", body: "quokkamystery")
            ])
            _ = try await engine.catchUp(account: "a")
            #expect(try await fixture.indexed("quokkamystery") == ["note:a:secret"])
            version += 1
            try await fixture.store.records.write([
                note("secret", version: version, title: "Zanzibar hidden plan", body: "quokkamystery", readers: ["b"])
            ])
        }
        try await fixture.store.index(account: "a").donateUserActivities([
            UserActivity(
                activityType: "view", persistentIdentifier: "v1", title: "viewed",
                relatedUniqueIdentifier: "note:a:secret",
                isEligibleForPrediction: true),
            UserActivity(
                activityType: "view", persistentIdentifier: "v2", title: "viewed",
                relatedUniqueIdentifier: "note:a:plan",
                isEligibleForPrediction: true),
        ])
        try await indexThenHide()
        #expect(try await fixture.store.suggestions(for: "quokka", hydration: fixture.hydration).isEmpty)
        try await indexThenHide()
        #expect(try await fixture.store.suggestions(for: "zanz", hydration: fixture.hydration).isEmpty)
        #expect(
            try await fixture.store.suggestions(for: "suppl", hydration: fixture.hydration) == ["supplier"],
            "what may be read is still suggested")
        try await indexThenHide()
        #expect(
            try await fixture.store.fetchItems(
                withIdentifiers: ["note:a:secret", "note:a:plan"], account: "a", hydration: fixture.hydration
            )
            .map(\.item.uniqueIdentifier) == ["note:a:plan"])
        try await indexThenHide()
        let recent = try await fixture.store.recentActivities(accounts: ["a"], hydration: fixture.hydration)
        #expect(recent.map(\.activity.identifier) == ["note:a:plan"])
        #expect(!recent.contains { $0.activity.title?.contains("Zanzibar") == true })
        // Without hydration settings, the record store is asked all the same.
        try await indexThenHide()
        #expect(try await fixture.store.suggestions(for: "quokka").isEmpty)
        try await indexThenHide()
        #expect(try await fixture.store.fetchItems(withIdentifiers: ["note:a:secret"], account: "a").isEmpty)
        try await indexThenHide()
        #expect(try await fixture.store.recentActivities().map(\.activity.identifier) == ["note:a:plan"])
    }

    @Test(arguments: TestBackend.available)
    func aStaleItemIsWithheldUntilTheProjectionCatchesUp(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([
            note("plan", version: 2, title: "Launch plan, revised", body: "supplier risk")
        ])
        let stale = try await fixture.store.search(SearchQuery("supplier"), hydration: fixture.hydration)
        #expect(stale.results.isEmpty)
        #expect(stale.dropped.map(\.reason) == ["the index holds version 1 and the record is at 2"])
        #expect(
            try await fixture.indexed("supplier") == ["note:a:plan"],
            "a stale item is not removed: its record still exists")
        _ = try await ProjectionEngine(store: fixture.store, projections: fixture.projections).catchUp(account: "a")
        let current = try await fixture.store.search(SearchQuery("supplier"), hydration: fixture.hydration)
        #expect(current.results.map(\.title) == ["Launch plan, revised"])
        #expect(current.results.first?.origin.version == "2")
    }

    @Test(arguments: TestBackend.available)
    func theToolCatchesUpWithTheChangeLogBeforeAnswering(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.store.records.write([
            Record(
                account: "a", kind: "expense", id: "e4", version: 1,
                fields: [("title", "Launch taxi"), ("body", "launch taxi"), ("amount", 100), ("category", "travel")])
        ])
        let result = await fixture.tool().call(
            arguments: #"""
                {"query": "launch", "filters": {"where": [{"attribute": "amount", "op": "exists"}]},
                 "stages": [{"stage": "statistic", "function": "sum", "attribute": "amount"}]}
                """#)
        #expect(try StructuredResult(result).first["statistic"]?["value"]?.doubleValue == 1_000)
    }

    @Test(arguments: TestBackend.available)
    func hydrationReturnsTheFullTextTheIndexDoesNotKeep(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let plain = await fixture.tool().call(arguments: #"{"query": "supplier"}"#)
        #expect(!plain.text.contains("the long part of the body is here"))
        let full = await fixture.tool(fetch: [.textContent]).call(arguments: #"{"query": "supplier"}"#)
        let quoted = try StructuredResult(full).first["results"]?.arrayValue?.first?["quoted"]
        #expect(
            quoted?["textContent"]?.stringValue?.hasSuffix(
                "filler words go on and on. the long part of the body is here") == true)
    }

    // MARK: Items a host indexed itself

    /// Answers as told: current (with a new title), gone, or nothing, by identifier.
    struct AppHydration: HydrationDelegate {
        let asked = Recorder<[ItemIdentifier]>()

        func currentItems(
            _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
            includingContent: Bool
        ) async throws -> [ItemIdentifier: SourceAnswer] {
            asked.append(identifiers)
            var answers: [ItemIdentifier: SourceAnswer] = [:]
            for identifier in identifiers {
                switch identifier.rawValue {
                case "app:current":
                    answers[identifier] = .current(
                        Fixtures.item("app:current", title: "Orchid, retitled"), version: nil)
                case "app:gone": answers[identifier] = .gone(reason: "deleted in the app")
                default: break
                }
            }
            return answers
        }
    }

    /// Never answers.
    struct SilentHydration: HydrationDelegate {
        func currentItems(
            _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
            includingContent: Bool
        ) async throws -> [ItemIdentifier: SourceAnswer] {
            try await Task.sleep(for: .seconds(3_600))
            return [:]
        }
    }

    func orchids(_ tool: SearchTool) async throws -> [String] {
        try StructuredResult(await tool.call(arguments: #"{"query": "orchid"}"#)).titles.sorted()
    }

    @Test(arguments: TestBackend.available)
    func theHostsDelegateAnswersForItsItems(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.indexAppItems()
        let delegate = AppHydration()
        #expect(try await orchids(fixture.tool(delegate: delegate)) == ["Orchid, retitled"])
        #expect(delegate.asked.all.count == 1, "one question for all of an owner's items")
        // Gone is removed from the index; unanswered is withheld but kept.
        #expect(try await fixture.indexed("orchid").sorted() == ["app:current", "app:unanswered"])
    }

    @Test(arguments: TestBackend.available)
    func withoutADelegateItemsStandAsStored(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.indexAppItems()
        #expect(
            try await orchids(fixture.tool()) == ["Orchid app:current", "Orchid app:gone", "Orchid app:unanswered"])
    }

    @Test(arguments: TestBackend.available)
    func anOwnerThatDoesNotAnswerInTimeMeansTheItemIsDropped(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        try await fixture.indexAppItems()
        let result = await fixture.tool(delegate: SilentHydration(), timeout: .milliseconds(50)).call(
            arguments: #"{"query": "orchid"}"#)
        let structured = try StructuredResult(result)
        #expect(structured.ids.isEmpty)
        #expect(structured.first["found"]?.intValue == 0)
        #expect(!result.text.contains("withheld"))
        #expect(try await fixture.indexed("orchid").count == 3, "not answering is no reason to remove")
    }

    @Test(arguments: TestBackend.available)
    func droppedItemsAreReplacedByTheNextBest(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // Twelve app items; the delegate says every second one is gone. A limit of 5 still fills up.
        try await fixture.store.index(account: "a").indexItems(
            (1...12).map { Fixtures.item("app:\($0)", title: "Fern \($0)", text: "fern") })
        struct EveryOther: HydrationDelegate {
            func currentItems(
                _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
                includingContent: Bool
            ) async throws -> [ItemIdentifier: SourceAnswer] {
                Dictionary(
                    uniqueKeysWithValues: identifiers.map { identifier in
                        let number = Int(identifier.rawValue.dropFirst(4))!
                        return (
                            identifier, number.isMultiple(of: 2) ? .gone(reason: "gone") : .current(nil, version: nil)
                        )
                    })
            }
        }
        let found = try await fixture.store.search(
            SearchQuery("fern", limit: 5), hydration: Hydration(delegate: EveryOther(), timeout: ToolFixture.ownersTime)
        )
        #expect(found.results.count == 5)
        #expect(found.results.allSatisfy { Int($0.item.uniqueIdentifier.rawValue.dropFirst(4))! % 2 == 1 })
    }

    @Test(arguments: TestBackend.available)
    func aCatchUpThatFailsIsReportedToTheHostNotSwallowed(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let events = Recorder<StoreEvent>()
        var configuration = Fixtures.configuration(clock: fixture.clock)
        configuration.events = { events.append($0) }
        let store = try fixture.storage.open(configuration: configuration)
        // A followed table whose database is gone: following it fails at every catch-up.
        let missing = FollowedTable(
            database: fixture.directory.appending("gone.sqlite"), table: "notes", kind: "note",
            account: .fixed("a"), idColumn: "id", versionColumn: "version")
        var tool = SearchTool.Configuration(sources: [.index(IndexSource())])
        tool.hydration = Hydration(
            projections: fixture.projections, followedTables: [missing], timeout: ToolFixture.ownersTime)
        let result = await SearchTool(store: store, configuration: tool).call(arguments: #"{"query": "supplier"}"#)
        #expect(try StructuredResult(result).ids == ["note:a:plan"], "the search still answers")
        let failures = events.all.filter { $0.kind == .catchUpFailed }
        #expect(failures.map(\.account) == ["a"], "\(events.all.map(\.message))")
        #expect(failures.first?.message.contains("could not bring account 'a' up to date") == true)
    }

    // MARK: Nothing about what the account may not read

    /// Answers for the even-numbered items only: the odd ones are not the account's to read.
    struct EvenOnly: HydrationDelegate {
        func currentItems(
            _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
            includingContent: Bool
        ) async throws -> [ItemIdentifier: SourceAnswer] {
            Dictionary(
                uniqueKeysWithValues: identifiers.compactMap { identifier in
                    Int(identifier.rawValue.dropFirst(5)).map { $0.isMultiple(of: 2) } == true
                        ? (identifier, .current(nil, version: nil)) : nil
                })
        }
    }

    @Test(arguments: TestBackend.available)
    func countsGroupsStatisticsLimitsAndRepliesSeeOnlyReadableItems(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        // Twelve ferns: six readable (even), six not. Odd ones are bigger, and of a type of their own.
        try await fixture.store.index(account: "a").indexItems(
            (1...12).map { number in
                var attributes = AttributeSet(contentType: number.isMultiple(of: 2) ? .plainText : .html)
                attributes.title = "Fern \(number)"
                attributes.textContent = "fern"
                attributes[ToolFixture.amount] = .number(number.isMultiple(of: 2) ? 1 : 1_000)
                return SearchableItem(
                    uniqueIdentifier: ItemIdentifier("fern:\(number)"), attributeSet: attributes,
                    expirationDate: .distantFuture)
            })
        let tool = fixture.tool(delegate: EvenOnly())
        let replies = Recorder<SearchReply>()
        let watcher = Task { [stream = tool.replies] in for await reply in stream { replies.append(reply) } }
        defer { watcher.cancel() }

        func call(_ arguments: String) async throws -> StructuredResult {
            let result = await tool.call(arguments: arguments)
            #expect(
                !result.text.contains("withheld") && !result.text.contains("Fern 1\"")
                    && !result.text.contains("fern:1\""))
            return try StructuredResult(result)
        }
        // Exactly six readable: the limit of six is not "reached", though twelve matched in the index.
        let six = try await call(#"{"query": "fern", "limit": 6}"#)
        #expect(six.first["found"]?.intValue == 6)
        #expect(six.first["limitReached"] == nil)
        #expect(six.ids.allSatisfy { Int($0.dropFirst(5))!.isMultiple(of: 2) })
        let five = try await call(#"{"query": "fern", "limit": 5}"#)
        #expect(
            five.first["limitReached"]?.boolValue == true, "with a seventh readable item the limit would be reached")

        #expect(try await call(#"{"query": "fern", "stages": [{"stage": "count"}]}"#).first["count"]?.intValue == 6)
        let groups =
            try await call(#"{"query": "fern", "stages": [{"stage": "group", "by": "contentType"}]}"#).first["groups"]?
            .arrayValue ?? []
        #expect(groups.map { $0["quotedKey"]?.stringValue } == ["public.plain-text"])
        #expect(groups.first?["count"]?.intValue == 6)
        let sum = try await call(
            #"{"query": "fern", "stages": [{"stage": "statistic", "function": "sum", "attribute": "amount"}]}"#)
        #expect(sum.first["statistic"]?["value"]?.doubleValue == 6)

        // The host's stream carries only what the model was shown.
        let seen = await eventually { replies.all.count >= 5 }
        #expect(seen)
        for reply in replies.all {
            guard case .data(let data) = reply.content else { continue }
            let counted: Int? =
                switch data {
                case .items(let items): items.count
                case .count(let count): count
                default: nil
                }
            #expect((counted ?? 0) <= 6, "\(reply.label): \(data)")
            if case .items(let items) = data {
                #expect(items.allSatisfy { Int($0.item.uniqueIdentifier.rawValue.dropFirst(5))!.isMultiple(of: 2) })
            }
        }
    }

    /// Several accounts at once: each account's owner decides for its own items; what one account may
    /// not read never counts, whatever the other holds.
    struct OnlyAccountA: HydrationDelegate {
        func currentItems(
            _ identifiers: [ItemIdentifier], account: AccountID, indexName: String,
            includingContent: Bool
        ) async throws -> [ItemIdentifier: SourceAnswer] {
            guard account == "a" else { return [:] }
            return Dictionary(uniqueKeysWithValues: identifiers.map { ($0, .current(nil, version: nil)) })
        }
    }

    @Test(arguments: TestBackend.available)
    func withSeveralAccountsOnlyWhatEachMayReadCounts(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        for account: AccountID in ["a", "b"] {
            try await fixture.store.index(account: account).indexItems(
                (1...4).map { number in
                    Fixtures.item("moss:\(account):\(number)", title: "Moss \(number)", text: "moss")
                })
        }
        let tool = fixture.tool(delegate: OnlyAccountA())
        let listed = try StructuredResult(await tool.call(arguments: #"{"query": "moss", "limit": 20}"#))
        #expect(listed.first["found"]?.intValue == 4)
        #expect(listed.ids.allSatisfy { $0.hasPrefix("moss:a:") }, "\(listed.ids)")
        let counted = try StructuredResult(
            await tool.call(arguments: #"{"query": "moss", "stages": [{"stage": "count"}]}"#))
        #expect(counted.first["count"]?.intValue == 4)
        #expect(!(await tool.call(arguments: #"{"query": "moss"}"#)).text.contains("moss:b:"))
    }
}

extension ToolFixture {
    var hydration: Hydration { Hydration(projections: projections, timeout: Self.ownersTime) }

    func indexAppItems() async throws {
        try await store.index(account: "a").indexItems(
            ["app:current", "app:gone", "app:unanswered"].map {
                Fixtures.item($0, title: "Orchid \($0)", text: "orchid")
            })
    }

    /// What the index holds for `words`, unchecked.
    func indexed(_ words: String) async throws -> [String] {
        try await store.search(SearchQuery(words)).map(\.item.uniqueIdentifier.rawValue)
    }
}
