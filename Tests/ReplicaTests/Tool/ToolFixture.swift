import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// A store holding notes, messages and expenses as records, projected into account `a`'s index, and
/// helpers to run the search tool over it; on either backend (``TestBackend``).
struct ToolFixture {
    let clock = Fixtures.ManualClock(Date(timeIntervalSince1970: 1_800_000_000))  // 2027-01-15T08:00:00Z
    /// The store and what it keeps its data in (dropped with the fixture).
    let storage: TestStore
    var store: Store { storage.store }
    var directory: TemporaryDirectory { storage.directory }
    let projections: ProjectionSet

    static let amount = AttributeKey("amount")
    static let category = AttributeKey("category")
    static let priority = AttributeKey("priority")

    init(_ backend: TestBackend) async throws {
        storage = try await backend.makeStore(configuration: Fixtures.configuration(clock: clock))
        let store = storage.store
        for account: AccountID in ["a", "b"] { try await store.signIn(account) }
        var message = Projection.default(for: "message")
        message.attributes += [(.authorEmailAddresses, ["fromAddress"]), (.recipientEmailAddresses, ["toAddress"])]
        message.attributes = message.attributes.map { key, fields in
            key == .authorNames ? (key, ["from"]) : key == .recipientNames ? (key, ["to"]) : (key, fields)
        }
        var note = Projection.default(for: "note")
        note.attributes.append((Self.priority, ["priority"]))
        let expense = Projection(
            kind: "expense",
            attributes: [
                (.title, ["title"]), (.textContent, ["body"]), (Self.amount, ["amount"]), (Self.category, ["category"]),
                (.contentModificationDate, ["modified"]),
            ])
        projections = ProjectionSet([message, note, expense], indexName: Store.defaultIndexName)
        try await store.records.write(Self.records(now: clock.now))
        _ = try await ProjectionEngine(store: store, projections: projections).catchUp(account: "a")
    }

    static func daysAgo(_ days: Double, from now: Date) -> String {
        ISO8601.string(from: now.addingTimeInterval(-days * 86_400))
    }

    static func records(now: Date) -> [Record] {
        func record(_ kind: String, _ id: String, _ fields: [(String, JSON)]) -> Record {
            Record(account: "a", kind: kind, id: id, version: 1, fields: fields)
        }
        return [
            record(
                "note", "plan",
                [
                    ("title", "Launch plan"),
                    (
                        "body",
                        .string(
                            "supplier risk for the launch. "
                                + String(repeating: "filler words go on and on. ", count: 30)
                                + "the long part of the body is here")
                    ),
                    ("modified", .string(daysAgo(1, from: now))), ("priority", 0.9),
                ]),
            record(
                "note", "budget",
                [
                    ("title", "Budget review"), ("body", "launch numbers and costs"),
                    ("modified", .string(daysAgo(40, from: now))), ("priority", 0.1),
                ]),
            record(
                "message", "m1",
                [
                    ("title", "Launch party"), ("text", "launch party on friday"), ("from", "Ada Lovelace"),
                    ("fromAddress", "ada@example.com"), ("to", "Grace Hopper"), ("toAddress", "grace@example.com"),
                    ("modified", .string(daysAgo(2, from: now))),
                ]),
            record(
                "message", "m2",
                [
                    ("title", "Re: launch"), ("text", "launch party is late"), ("from", "Grace Hopper"),
                    ("fromAddress", "grace@example.com"), ("to", "Ada Lovelace"), ("toAddress", "ada@example.com"),
                    ("modified", .string(daysAgo(3, from: now))),
                ]),
            record(
                "expense", "e1",
                [
                    ("title", "Launch dinner"), ("body", "launch dinner"), ("amount", 120), ("category", "food"),
                    ("modified", .string(daysAgo(5, from: now))),
                ]),
            record(
                "expense", "e2",
                [
                    ("title", "Launch flights"), ("body", "launch flights"), ("amount", 480), ("category", "travel"),
                    ("modified", .string(daysAgo(6, from: now))),
                ]),
            record(
                "expense", "e3",
                [
                    ("title", "Launch hotel"), ("body", "launch hotel"), ("amount", 300), ("category", "travel"),
                    ("modified", .string(daysAgo(7, from: now))),
                ]),
        ]
    }

    /// The account's owner, for "me".
    static let ada = ResolvedContact(displayName: "Ada Lovelace", emailAddresses: ["ada@example.com"])

    /// How long an owner has to answer in these tests, whose owners are local and answer in milliseconds:
    /// on a loaded machine running every suite at once, a record store took longer than the product's
    /// five seconds, and its items were dropped as unanswered. A test of the timeout gives its own.
    static let ownersTime: Duration = .seconds(120)

    func tool(
        _ guide: Guide = .complete, me: ResolvedContact? = nil, customStages: [any CustomStage] = [],
        fetch: [AttributeKey] = [], delegate: (any HydrationDelegate)? = nil, timeout: Duration = ownersTime
    ) -> SearchTool {
        var configuration = SearchTool.Configuration(
            sources: [.index(IndexSource(fetchAttributes: fetch))], guide: guide,
            contactResolver: me.map(FixedContactResolver.init), customStages: customStages)
        configuration.hydration = Hydration(projections: projections, delegate: delegate, timeout: timeout)
        return SearchTool(store: store, configuration: configuration)
    }
}

/// What a structured tool result says, read back.
struct StructuredResult {
    let json: JSON

    init(_ result: ToolResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(!result.isError, "\(result.text)", sourceLocation: sourceLocation)
        json = try JSON.parse(result.text)
    }

    var queries: [JSON] { json["queries"]?.arrayValue ?? [] }
    var first: JSON { queries.first ?? .null }

    /// The identifiers of the first query's results, in order.
    var ids: [String] { (first["results"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue } }
    var titles: [String] { (first["results"]?.arrayValue ?? []).compactMap { $0["quoted"]?["title"]?.stringValue } }
}
