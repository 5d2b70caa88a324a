import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// The stages a model composes, what they make, and the errors it gets when they do not fit.
/// Runs on both backends (``TestBackend``).
@Suite struct PipelineTests {
    func make(_ backend: TestBackend) async throws -> ToolFixture {
        try await ToolFixture(backend)
    }

    func titles(_ json: JSON) -> [String] {
        (json["results"]?.arrayValue ?? []).compactMap { $0["quoted"]?["title"]?.stringValue }
    }

    @Test(arguments: TestBackend.available)
    func filterKeepsWhatMatchesEveryCondition(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let json = try await tool.run(
            #"[{"stage": "filter", "where": [{"attribute": "amount", "op": ">=", "value": 300}, {"attribute": "category", "op": "=", "value": "TRAVEL"}]}]"#
        )
        #expect(titles(json).sorted() == ["Launch flights", "Launch hotel"])
        let text = try await tool.run(
            #"[{"stage": "filter", "where": [{"attribute": "title", "op": "contains", "value": "dinn"}]}]"#)
        #expect(titles(text) == ["Launch dinner"])
    }

    @Test(arguments: TestBackend.available)
    func sortOrdersByAnAttributeOrRelevanceAndCanCut(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        #expect(
            titles(try await tool.run(#"[{"stage": "sort", "by": "amount", "order": "asc"}]"#)) == [
                "Launch dinner", "Launch hotel", "Launch flights",
            ])
        #expect(titles(try await tool.run(#"[{"stage": "sort", "by": "amount", "limit": 1}]"#)) == ["Launch flights"])
        #expect(
            titles(try await tool.run(#"[{"stage": "sort", "by": "contentModificationDate"}]"#)) == [
                "Launch dinner", "Launch flights", "Launch hotel",
            ])
        let byRelevance = try await tool.run(#"[{"stage": "sort", "by": "relevance"}]"#)
        #expect(titles(byRelevance).count == 3)
    }

    @Test(arguments: TestBackend.available)
    func scoreWeighsRecencyAndPriority(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let query =
            #""query": "launch", "filters": {"types": ["public.plain-text"], "where": [{"attribute": "priority", "op": "exists"}]}"#
        // The plan is a day old with priority 0.9; the budget is 40 days old with priority 0.1.
        let recency = try await tool.run(#"[{"stage": "score", "recency": 5}]"#, query: query)
        #expect(titles(recency) == ["Launch plan", "Budget review"])
        let scores = (recency["results"]?.arrayValue ?? []).compactMap { $0["stageScore"]?.doubleValue }
        #expect(scores.count == 2 && scores[0] > scores[1])
        let priority = try await tool.run(
            #"[{"stage": "score", "priority": 10}, {"stage": "sort", "by": "relevance", "order": "asc"}]"#, query: query
        )
        #expect(titles(priority) == ["Budget review", "Launch plan"])
    }

    /// Each result's identifier and stage score, in order.
    func scored(_ json: JSON) -> [(id: String, score: Double)] {
        (json["results"]?.arrayValue ?? []).compactMap { result in
            guard let id = result["id"]?.stringValue, let score = result["stageScore"]?.doubleValue else { return nil }
            return (id, score)
        }
    }

    @Test(arguments: TestBackend.available)
    func scorePriorityWeighsTheStandardIsPriorityFlag(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        try await fixture.indexWombats()
        let query = #""query": "wombat""#
        let unweighted = scored(try await tool.run(#"[{"stage": "score", "priority": 0}]"#, query: query))
        #expect(Set(unweighted.map { $0.id }) == ["app:flagged", "app:unflagged"])
        #expect(
            unweighted.count == 2 && unweighted[0].score == unweighted[1].score,
            "without the weight the flag counts for nothing: \(unweighted)")
        let weighted = scored(try await tool.run(#"[{"stage": "score", "priority": 3}]"#, query: query))
        #expect(weighted.map { $0.id } == ["app:flagged", "app:unflagged"])
        #expect(
            weighted.count == 2 && abs(weighted[0].score - weighted[1].score - 3) < 0.001,
            "the flag counts as 1 × the weight: \(weighted)")
    }

    @Test(arguments: TestBackend.available)
    func aFilterOnIsPriorityKeepsOnlyFlaggedItems(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        try await fixture.indexWombats()
        // A model may write the flag as JSON true or as the string "true".
        for value in ["true", #""true""#] {
            let json = try await tool.run(
                #"[{"stage": "filter", "where": [{"attribute": "isPriority", "op": "=", "value": \#(value)}]}]"#,
                query: #""query": "wombat""#)
            #expect(
                (json["results"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue } == ["app:flagged"],
                "value \(value)")
        }
    }

    @Test(arguments: TestBackend.available)
    func scoreEngagementWeighsTheAccountsViewsOfAnItem(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let index = try await fixture.store.index(account: "a")
        // The unseen item is the better match (the word is in its title too); the other was viewed once, just now.
        try await index.indexItems([
            Fixtures.item("app:seen", title: "Field notes", text: "a quokka near the path"),
            Fixtures.item("app:unseen", title: "Quokka sighting", text: "a quokka near the path"),
        ])
        try await index.donateUserActivities([
            UserActivity(
                activityType: "com.example.view", persistentIdentifier: "view:seen",
                relatedUniqueIdentifier: "app:seen")
        ])
        let query = #""query": "quokka""#
        let unweighted = scored(try await tool.run(#"[{"stage": "score", "engagement": 0}]"#, query: query))
        #expect(unweighted.map { $0.id } == ["app:unseen", "app:seen"], "without the weight the better match leads")
        let weighted = scored(try await tool.run(#"[{"stage": "score", "engagement": 10}]"#, query: query))
        #expect(weighted.map { $0.id } == ["app:seen", "app:unseen"])
        // One view just now is engagement 0.25, counted ten times; the item nobody viewed scores as before.
        let engagement = Engagement.value(lastViewed: fixture.clock.now, views: 1, now: fixture.clock.now)
        let before = Dictionary(uniqueKeysWithValues: unweighted.map { ($0.id, $0.score) })
        let after = Dictionary(uniqueKeysWithValues: weighted.map { ($0.id, $0.score) })
        #expect(
            abs((after["app:seen"] ?? 0) - (before["app:seen"] ?? 0) - 10 * engagement) < 0.001, "\(before) → \(after)")
        #expect(after["app:unseen"] != nil && after["app:unseen"] == before["app:unseen"])
    }

    @Test(arguments: TestBackend.available)
    func groupCountTableAndStatisticSummarize(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let groups = try await tool.run(#"[{"stage": "group", "by": "category"}]"#)["groups"]?.arrayValue ?? []
        #expect(groups.map { $0["quotedKey"]?.stringValue ?? "" } == ["travel", "food"])
        #expect(groups.map { $0["count"]?.intValue ?? 0 } == [2, 1])

        #expect(try await tool.run(#"[{"stage": "count"}]"#)["count"]?.intValue == 3)
        #expect(
            try await tool.run(#"[{"stage": "group", "by": "category"}, {"stage": "count"}]"#)["count"]?.intValue == 3)

        let table = try await tool.run(
            #"[{"stage": "sort", "by": "amount"}, {"stage": "table", "columns": ["title", "amount", "category"]}]"#)[
                "table"]
        #expect(table?["columns"] == ["title", "amount", "category"])
        #expect(
            table?["quotedRows"] == [
                ["Launch flights", 480, "travel"], ["Launch hotel", 300, "travel"], ["Launch dinner", 120, "food"],
            ])
        let grouped = try await tool.run(
            #"[{"stage": "group", "by": "category"}, {"stage": "table", "columns": ["title"]}]"#)["table"]
        #expect(grouped?["quotedRows"] == [["travel", 2], ["food", 1]])

        for (function, value) in [("sum", 900.0), ("average", 300), ("min", 120), ("max", 480), ("count", 3)] {
            let statistic = try await tool.run(
                #"[{"stage": "statistic", "function": "\#(function)", "attribute": "amount"}]"#)["statistic"]
            #expect(statistic?["value"]?.doubleValue == value, "\(function)")
            #expect(statistic?["name"]?.stringValue == "\(function) amount")
        }
        let latest = try await tool.run(
            #"[{"stage": "statistic", "function": "max", "attribute": "contentModificationDate"}]"#)["statistic"]?[
                "value"]
        #expect(
            latest?.stringValue == ToolFixture.daysAgo(5, from: fixture.clock.now), "a statistic over dates is a date")
    }

    /// Issue 19, 4.8: `count title` said 0 over titled items; `sum title` said 0 and `sum contentModificationDate`
    /// a date in 2482.
    @Test(arguments: TestBackend.available)
    func statisticCountsTheItemsThatHaveTheAttributeOfAnyKind(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        for attribute in ["title", "category", "amount", "contentModificationDate", "contentType", "score"] {
            let statistic = try await tool.run(
                #"[{"stage": "statistic", "function": "count", "attribute": "\#(attribute)"}]"#)["statistic"]
            #expect(statistic?["value"]?.doubleValue == 3, "count of \(attribute)")
        }
        let none = try await tool.run(#"[{"stage": "statistic", "function": "count", "attribute": "authorNames"}]"#)[
            "statistic"]
        #expect(none?["value"]?.doubleValue == 0, "no expense has an author")
        let earliest = try await tool.run(
            #"[{"stage": "statistic", "function": "min", "attribute": "contentModificationDate"}]"#)["statistic"]?[
                "value"]
        #expect(earliest?.stringValue == ToolFixture.daysAgo(7, from: fixture.clock.now))
    }

    @Test(
        arguments: TestBackend.available,
        [
            ("sum", "title", "'sum' cannot use 'title', which holds text"),
            ("sum", "contentModificationDate", "'sum' cannot use 'contentModificationDate', which holds dates"),
            ("average", "authorNames", "'average' cannot use 'authorNames', which holds text"),
            ("max", "authors", "'max' cannot use 'authors', which holds people"),
            ("min", "account", "'min' cannot use 'account', which holds text"),
        ])
    func statisticRefusesWhatItCannotCompute(
        _ backend: TestBackend, _ refused: (function: String, attribute: String, message: String)
    ) async throws {
        let (function, attribute, message) = refused
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let result = await tool.call(
            arguments:
                #"{"query": "launch", "stages": [{"stage": "statistic", "function": "\#(function)", "attribute": "\#(attribute)"}]}"#
        )
        #expect(result.isError)
        #expect(result.text.contains("stage 1: " + message + "; sum takes numbers"), "\(result.text)")
        #expect(
            result.text.contains("average, min and max take numbers or dates; count takes any attribute"),
            "\(result.text)")
    }

    /// A custom attribute's kind is known only from the values the items hold.
    @Test(arguments: TestBackend.available)
    func statisticRefusesACustomAttributeThatHoldsText(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let result = await tool.call(
            arguments:
                #"{"query": "launch", "filters": {"types": ["public.plain-text"], "where": [{"attribute": "amount", "op": "exists"}]}, "stages": [{"stage": "statistic", "function": "sum", "attribute": "category"}]}"#
        )
        #expect(result.isError)
        #expect(result.text.contains("'sum' cannot use 'category', which holds text"), "\(result.text)")
        #expect(
            !result.text.contains("travel") && !result.text.contains("food"), "the values themselves are not quoted")
    }

    @Test(arguments: TestBackend.available)
    func textRendersAnyInputDeterministically(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let items = try await tool.run(#"[{"stage": "sort", "by": "amount"}, {"stage": "text"}]"#)["quotedText"]?
            .stringValue
        #expect(items == "1. Launch flights (2027-01-09)\n2. Launch hotel (2027-01-08)\n3. Launch dinner (2027-01-10)")
        let count = try await tool.run(#"[{"stage": "count"}, {"stage": "text"}]"#)["quotedText"]?.stringValue
        #expect(count == "3 items")
        let groups = try await tool.run(#"[{"stage": "group", "by": "category"}, {"stage": "text"}]"#)["quotedText"]?
            .stringValue
        #expect(groups == "travel: 2 items\nfood: 1 item")
        let again = try await tool.run(#"[{"stage": "sort", "by": "amount"}, {"stage": "text"}]"#)["quotedText"]?
            .stringValue
        #expect(again == items)
    }

    /// A host's stage: how many items cost more than a threshold the model gives.
    struct Expensive: CustomStage {
        let name = "expensive"
        let description = "Counts the items whose amount is above 'over'."
        let inputTypes: [PipelineDataType] = [.items, .scoredItems]
        let outputType: PipelineDataType = .count
        var argumentProperties: JSON? { .object([("over", .object([("type", "number")]))]) }

        func execute(_ input: PipelineData, arguments: JSON) async throws -> PipelineData {
            let threshold = arguments["over"]?.doubleValue ?? 0
            return .count(
                input.results.filter { ($0.item.attributeSet[ToolFixture.amount]?.numberValue ?? 0) > threshold }.count)
        }
    }

    /// A stage that claims one type and makes another.
    struct Liar: CustomStage {
        let name = "liar"
        let description = "Says it makes text."
        let inputTypes: [PipelineDataType] = [.items]
        let outputType: PipelineDataType = .text
        func execute(_ input: PipelineData, arguments: JSON) async throws -> PipelineData { .count(0) }
    }

    @Test(arguments: TestBackend.available)
    func aCustomStageIsOfferedByNameAndRunsWithItsArguments(_ backend: TestBackend) async throws {
        let fixture = try await make(backend)
        let tool = fixture.tool(customStages: [Expensive(), Liar()])
        let schema = tool.definitionJSON.serialized()
        #expect(
            schema.contains(
                #""enum":["filter","sort","score","group","count","table","statistic","text","expensive","liar"]"#))
        #expect(schema.contains("expensive(items|scoredItems→count): Counts the items whose amount is above 'over'."))
        #expect(schema.contains(#""over":{"type":"number"}"#))
        let result = await tool.call(
            arguments: #"{"query": "launch", "stages": [{"stage": "expensive", "over": 200}]}"#)
        #expect(try StructuredResult(result).first["count"]?.intValue == 2)
        let typed = await tool.call(
            arguments: #"{"query": "launch", "stages": [{"stage": "count"}, {"stage": "expensive"}]}"#)
        #expect(
            typed.text
                == "The search was not run: stage 2 (expensive) cannot follow stage 1 (count), which makes count; expensive takes items or scoredItems."
        )
        let liar = await tool.call(arguments: #"{"query": "launch", "stages": [{"stage": "liar"}]}"#)
        #expect(liar.isError)
        #expect(
            liar.text == "The search was not run: stage 1 (liar) failed: stage 'liar' made count but declares text.")
    }

    @Test(
        arguments: TestBackend.available,
        [
            (
                #"{"query": "launch", "stages": [{"stage": "summarize"}]}"#,
                "stage 1: unknown stage 'summarize'; the stages are filter, sort, score, group, count, table, statistic, text"
            ),
            (
                #"{"query": "launch", "stages": [{"stage": "count"}, {"stage": "sort", "by": "amount"}]}"#,
                "stage 2 (sort) cannot follow stage 1 (count), which makes count; sort takes items or scoredItems"
            ),
            (
                #"{"query": "launch", "stages": [{"stage": "sort", "by": "amount", "order": "up"}]}"#,
                #"stage 1: 'order' must be "asc" or "desc""#
            ),
            (#"{"query": "launch", "limit": 1000000}"#, "'limit' must be a whole number from 1 to 100"),
            (
                #"{"query": "launch", "filters": {"modified": {"after": "the day after the launch"}}}"#,
                "'filters.modified.after' is not a date; use 2026-11-20, 2026-11-20T10:00:00Z, today, yesterday or -7d"
            ),
            (
                #"{"query": "launch", "filters": {"types": ["emails"]}}"#,
                "'emails' is neither a type identifier such as public.text nor a content domain (items, documents, communications, calendar, visualMedia, audio)"
            ),
            (
                #"{"query": "launch", "filters": {"authors": ["me"]}}"#,
                "'me' cannot be resolved: no identity is known; name the person"
            ),
            (#"{"query": 42}"#, "'query' must be a string of words"),
            (
                #"{"qeury": "launch"}"#,
                "unknown argument 'qeury'; the arguments are allWords, filters, label, limit, query, stages"
            ),
            (#"["launch"]"#, #"the arguments must be a JSON object such as {"query": "some words"}"#),
            (#"{"query": "launch""#, "the arguments are not valid JSON (unterminated object at column 19)"),
            (
                #"{"query": "launch", "stages": [{"stage": "statistic", "function": "median", "attribute": "amount"}]}"#,
                "stage 1: 'statistic' needs 'function': one of min, max, sum, average, count"
            ),
            (
                #"{"query": "launch", "stages": [{"stage": "group", "by": "replica.recordID"}]}"#,
                "stage 1: 'replica.recordID' is not an attribute you can use"
            ),
            (
                #"{"query": "\"\"\""}"#,
                "the query has no words to search for: type at least one word with a letter or a digit"
            ),
        ])
    func badArgumentsGetASentenceThatSaysWhatToFix(
        _ backend: TestBackend, _ refused: (arguments: String, message: String)
    ) async throws {
        let (arguments, message) = refused
        let fixture = try await make(backend)
        let tool = fixture.tool()
        let replies = Recorder<SearchReply>()
        let watcher = Task { [stream = tool.replies] in for await reply in stream { replies.append(reply) } }
        defer { watcher.cancel() }
        let result = await tool.call(arguments: arguments)
        #expect(result.isError)
        #expect(result.text == "The search was not run: \(message).")
        // The host sees the same error in the replies stream.
        let seen = await eventually { replies.all.count == 1 }
        #expect(seen)
        guard case .error(let reported)? = replies.all.first?.content else {
            Issue.record("no error reply")
            return
        }
        #expect(reported == message)
        #expect(replies.all.first?.status == .complete)
    }
}

extension SearchTool {
    /// Runs `stages` (JSON) over the expenses matching "launch" and returns the one query's result.
    func run(
        _ stages: String,
        query: String =
            #""query": "launch", "filters": {"types": ["public.plain-text"], "where": [{"attribute": "amount", "op": "exists"}]}"#
    ) async throws -> JSON {
        let result = await call(arguments: "{\(query), \"stages\": \(stages)}")
        return try StructuredResult(result).first
    }
}

extension ToolFixture {
    /// Two items alike in every way but the standard `isPriority` flag.
    func indexWombats() async throws {
        func wombat(_ id: String, isPriority: Bool) -> SearchableItem {
            var item = Fixtures.item(id, title: "Wombat burrow", text: "a wombat burrow under the shed")
            item.attributeSet.isPriority = isPriority
            return item
        }
        try await store.index(account: "a").indexItems([
            wombat("app:flagged", isPriority: true), wombat("app:unflagged", isPriority: false),
        ])
    }
}
