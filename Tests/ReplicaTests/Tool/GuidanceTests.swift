import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// What the model is shown at each guidance level and format, and what it may then send.
/// Runs on both backends (``TestBackend``); the tool's schema and description, which no search goes
/// into, on SQLite only.
@Suite struct GuidanceTests {
    static let guides: [Guide] =
        [.complete, .dynamic(GuidanceProfile()), .dynamic(.all)]
        + ContentDomain.Kind.allCases.map { .focused(ContentDomain.named($0.rawValue)!) }

    @Test(
        arguments: TestBackend.available,
        guides.flatMap { guide in [FormatLevel.structured, .compact].map { (guide, $0) } })
    func theSimplestCallWorksAtEveryLevelAndFormat(
        _ backend: TestBackend, _ combination: (guide: Guide, format: FormatLevel)
    ) async throws {
        let fixture = try await ToolFixture(backend)
        let format = combination.format
        var guide = combination.guide
        guide.format = format
        let result = await fixture.tool(guide).call(arguments: #"{"query": "launch"}"#)
        #expect(!result.isError, "\(result.text)")
        // A focused guide keeps to its domain's types; the others see every match.
        let expected: Int
        switch guide.level {
        case .focused(let domain) where domain.kind == .communications: expected = 2
        case .focused(let domain) where domain.kind == .documents: expected = 5  // notes and expenses are plain text
        case .focused(let domain) where domain.kind != .items: expected = 0
        default: expected = 7
        }
        switch format {
        case .structured:
            #expect(try StructuredResult(result).ids.count == expected)
        case .compact:
            let lines = result.text.split(separator: "\n")
            try #require(lines.count > 1, "\(result.text)")
            #expect(lines[1] == "\"launch\" found \(expected)")
            #expect(lines.count == 2 + expected)
        }
    }

    func schema(_ guide: Guide, me: ResolvedContact? = nil, customStages: [any CustomStage] = []) async throws -> (
        text: String, json: JSON
    ) {
        let tool = try await ToolFixture(.sqlite).tool(guide, me: me, customStages: customStages)
        let text = tool.definitionJSON.serialized()
        return (text, try JSON.parse(text))
    }

    @Test func theSchemaShrinksToWhatTheGuidanceAllows() async throws {
        let complete = try await schema(.complete)
        let textOnly = try await schema(.dynamic(GuidanceProfile(textMatch: true)))
        let datesOnly = try await schema(.dynamic(GuidanceProfile(dates: true)))
        let focused = try await schema(.focused(.communications))
        #expect(focused.text.utf8.count < textOnly.text.utf8.count)
        #expect(textOnly.text.utf8.count < complete.text.utf8.count)
        // The budgets the search tool is designed to: a small model's context is the limit.
        #expect(complete.text.utf8.count / 4 < 1_500)
        #expect(focused.text.utf8.count / 4 < 400)

        let completeFilters = complete.json["inputSchema"]?["properties"]?["filters"]?["properties"]?.objectValue?.map(
            \.0)
        #expect(completeFilters == ["types", "created", "modified", "authors", "recipients", "where"])
        #expect(
            datesOnly.json["inputSchema"]?["properties"]?["filters"]?["properties"]?.objectValue?.map(\.0) == [
                "created", "modified",
            ])
        #expect(complete.json["inputSchema"]?["properties"]?["queries"] != nil)
        #expect(
            textOnly.json["inputSchema"]?["properties"]?["queries"] == nil,
            "several queries at once is for complete guidance")
        let operators = textOnly.json["inputSchema"]?["$defs"]?["condition"]?["properties"]?["op"]?["enum"]?.arrayValue?
            .compactMap(\.stringValue)
        #expect(
            operators == ["=", "!=", "exists", "contains", "startsWith"], "no numeric comparisons without numericMatch")

        let fields = focused.json["inputSchema"]?["properties"]?.objectValue?.map(\.0)
        #expect(fields == ["query", "from", "received", "sent", "to", "topic", "limit"])
        #expect(focused.json["inputSchema"]?["properties"]?["stages"] == nil)
    }

    @Test(arguments: TestBackend.available)
    func aDynamicWhitelistNamesTheOnlyAttributesAndRefusesOthers(_ backend: TestBackend) async throws {
        let guide = Guide.dynamic(GuidanceProfile(numericMatch: true, attributes: [ToolFixture.amount, .title]))
        let (_, json) = try await schema(guide)
        let names = json["inputSchema"]?["$defs"]?["condition"]?["properties"]?["attribute"]?["enum"]?.arrayValue?
            .compactMap(\.stringValue)
        #expect(names == ["amount", "title"])

        let fixture = try await ToolFixture(backend)  // kept: its folder goes with it
        let tool = fixture.tool(guide)
        let allowed = await tool.call(
            arguments: #"{"query": "launch", "filters": {"where": [{"attribute": "amount", "op": ">", "value": 200}]}}"#
        )
        #expect(try StructuredResult(allowed).titles.sorted() == ["Launch flights", "Launch hotel"], "\(allowed.text)")
        let refused = await tool.call(
            arguments: #"{"query": "launch", "stages": [{"stage": "group", "by": "category"}]}"#)
        #expect(refused.isError)
        #expect(
            refused.text
                == "The search was not run: stage 1: 'category' is not available; the attributes are amount, title.")
        let noDates = await tool.call(arguments: #"{"query": "launch", "filters": {"created": {"after": "-7d"}}}"#)
        #expect(noDates.text == "The search was not run: unknown filter 'created'; the filters are where.")
    }

    @Test(arguments: TestBackend.available)
    func aFocusedGuideMapsItsFieldsAndRefusesTheRest(_ backend: TestBackend) async throws {
        let fixture = try await ToolFixture(backend)
        let tool = fixture.tool(.focused(.communications), me: ToolFixture.ada)
        let fromMe = await tool.call(arguments: #"{"query": "launch", "from": "me"}"#)
        #expect(try StructuredResult(fromMe).ids == ["message:a:m1"])
        let toMe = await tool.call(arguments: #"{"to": "me", "received": {"after": "-30d"}}"#)
        #expect(try StructuredResult(toMe).ids == ["message:a:m2"])
        let topic = await tool.call(arguments: #"{"topic": "party"}"#)
        #expect(try StructuredResult(topic).ids == ["message:a:m1"], "topic matches the title, not the body")
        let stages = await tool.call(arguments: #"{"query": "launch", "stages": [{"stage": "count"}]}"#)
        #expect(
            stages.text
                == "The search was not run: unknown argument 'stages'; the arguments are from, limit, query, received, sent, to, topic."
        )
    }

    @Test func theDescriptionNamesTheUserOnlyWhenPeopleCanBeSearched() async throws {
        let withPeople = try await schema(.complete, me: ToolFixture.ada)
        #expect(
            withPeople.json["description"]?.stringValue?.contains(
                "\"me\" in people fields is the user: Ada Lovelace, ada@example.com.") == true)
        let withoutPeople = try await schema(.dynamic(GuidanceProfile(textMatch: true)), me: ToolFixture.ada)
        #expect(withoutPeople.json["description"]?.stringValue?.contains("Ada") == false)
    }

    @Test func focusedCommunicationsGuidanceMentionsSummariesAndPriority() async throws {
        let fixture = try await ToolFixture(.sqlite)
        func description(_ guide: Guide) -> String {
            fixture.tool(guide).definitionJSON["description"]?.stringValue ?? ""
        }
        let communications = description(.focused(.communications))
        #expect(communications.contains("summary") && communications.contains("priority"), "\(communications)")
        // Only messages are enriched: the other domains' descriptions stay as small as they were.
        for kind in ContentDomain.Kind.allCases where kind != .communications {
            let other = description(.focused(ContentDomain.named(kind.rawValue)!))
            #expect(!other.contains("summary") && !other.contains("priority"), "\(kind): \(other)")
        }
    }

    @Test(arguments: TestBackend.available)
    func compactPagesAreAtMostHalfTheStructuredOnes(_ backend: TestBackend) async throws {
        let fixture = try await ToolFixture(backend)
        let arguments = #"{"query": "launch"}"#
        let structured = await fixture.tool(Guide(level: .complete, format: .structured)).call(arguments: arguments)
        let compact = await fixture.tool(Guide(level: .complete, format: .compact)).call(arguments: arguments)
        #expect(
            compact.text.utf8.count * 2 <= structured.text.utf8.count,
            "compact \(compact.text.utf8.count) bytes, structured \(structured.text.utf8.count)")
        // Both carry every result's identifier and provenance.
        for id in try StructuredResult(structured).ids {
            #expect(compact.text.contains(id + " records@1 i2027-01-15"))
        }
    }
}
