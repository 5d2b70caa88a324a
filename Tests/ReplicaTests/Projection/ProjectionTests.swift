import Foundation
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct ProjectionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [
        ("{kind}:{account}:{id}", "note:alice:7"),
        ("msg/{account}/{id}", "msg/alice/7"),
        ("{id}-{id}", "7-7"),
        ("{kind}{{id}}", "note{7}"),
        ("{other}:{id", "{other}:{id"),
        ("plain", "plain"),
    ])
    func identifierTemplatesAreFilledInOnePass(template: String, expected: String) {
        let projection = Projection(kind: "note", identifierTemplate: template)
        #expect(projection.identifier(account: "alice", id: "7").rawValue == expected)
    }

    @Test func aPlaceholderInsideAValueIsNotFilledInAgain() {
        #expect(
            Projection(kind: "note", identifierTemplate: "{account}/{id}").identifier(account: "{id}", id: "7").rawValue
                == "{id}/7")
    }

    @Test func theDefaultProjectionMapsTheDocumentedFields() throws {
        let record = Record(
            account: "a", kind: "note", id: "7", version: 2, modified: Date(timeIntervalSince1970: 1_700_000_000),
            fields: [
                ("title", "Launch"), ("body", "The body"), ("summary", "Short"), ("keywords", "one"),
                ("authors", ["Ada", "Grace"]), ("recipients", "Bob"), ("created", "2026-01-02T03:04:05Z"), ("other", 5),
            ])
        let item = try Projection.default(for: "note").item(for: record, now: now)
        let attributes = item.attributeSet
        #expect(item.uniqueIdentifier == "note:a:7")
        #expect(item.domainIdentifier == "account.a.note")
        #expect(attributes.title == "Launch")
        #expect(attributes.textContent == "The body")
        #expect(attributes.contentDescription == "Short")
        #expect(attributes.keywords == ["one"])
        #expect(attributes.authorNames == ["Ada", "Grace"])
        #expect(attributes.recipientNames == ["Bob"])
        #expect(attributes.contentCreationDate == ISO8601.date(from: "2026-01-02T03:04:05Z"))
        #expect(attributes.contentModificationDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(attributes.contentType == .plainText)
        #expect(item.expirationDate == .distantFuture)
        #expect(attributes[AttributeKey("other")] == nil)
        #expect(
            try Projection.default(for: "note").item(
                for: Record(account: "a", kind: "note", id: "1", version: 1, fields: [("text", "t"), ("body", "b")]),
                now: now
            ).attributeSet.textContent == "t")
        #expect(Projection.default(for: "message").contentType == .message)
    }

    @Test func aDeclaredProjectionTakesTheFirstFieldPresentAndItsLifetime() throws {
        var projection = Projection(
            kind: "message", version: 3, contentType: .emailMessage,
            attributes: [
                (.subject, ["subject", "title"]), (.textContent, ["body"]), (.authorNames, ["from"]),
                (.rating, ["stars"]),
            ], lifetime: 30 * 86_400, identifierTemplate: "msg/{account}/{id}")
        let modified = Date(timeIntervalSince1970: 1_790_000_000)
        let record = Record(
            account: "a", kind: "message", id: "m", version: 1, modified: modified,
            fields: [("title", "Hello"), ("body", "Hi"), ("from", "Ada"), ("stars", 4)])
        let item = try projection.item(for: record, now: now)
        #expect(item.uniqueIdentifier == "msg/a/m")
        #expect(item.attributeSet.subject == "Hello")
        #expect(item.attributeSet.rating == 4)
        #expect(item.attributeSet.contentType == .emailMessage)
        #expect(item.expirationDate == modified.addingTimeInterval(30 * 86_400))
        projection.lifetime = nil
        #expect(try projection.item(for: record, now: now).expirationDate == .distantFuture)
    }

    @Test(arguments: [
        (
            ("title", JSON.number(42)),
            "field 'title' is a number, but projection 'note' v1 makes it the attribute 'title', which needs a string"
        ),
        (("keywords", JSON.array([1, 2])), "field 'keywords' is an array"),
        (("created", JSON.string("last week")), "field 'created' is a string"),
        (("authors", JSON.object([("x", 1)])), "field 'authors' is an object"),
    ])
    func aFieldOfTheWrongTypeIsNamedWithoutItsContent(field: (String, JSON), message: String) {
        let record = Record(account: "a", kind: "note", id: "1", version: 1, fields: [field, ("body", "secret words")])
        #expect(
            performing: { try Projection.default(for: "note").item(for: record, now: now) },
            throws: { error in
                let error = error as? ReplicaError
                return error?.code == .invalidItem && error?.message.contains(message) == true
                    && error?.message.contains("secret") == false
            })
    }

    @Test func theConfigurationFileDeclaresProjectionsAndFollowedTables() throws {
        let configuration = try ConfigurationFile.parse(
            """
            {
              // records go to the Notes index
              "index": "Notes",
              "projections": {
                "message": { "version": 2, "contentType": "public.email-message", "expiresAfter": "30d",
                             "attributes": { "subject": "subject", "textContent": ["body", "text"] } },
                "task": { "expiresAfter": 3600 }
              },
              "follow": [ { "database": "app.sqlite", "table": "notes", "kind": "note", "account": {"column": "owner"},
                            "version": "revision", "deleted": "gone", "fields": ["title", "body"] } ]
            }
            """, relativeTo: URL(fileURLWithPath: "/srv/app"))
        #expect(configuration.projections.indexName == "Notes")
        let message = configuration.projections.projection(for: "message")
        #expect(message.version == 2)
        #expect(message.lifetime.map(Int.init) == 30 * 86_400)
        #expect(message.attributes.map(\.0) == [.subject, .textContent])
        #expect(
            configuration.projections.projection(for: "task").attributes.map(\.0)
                == Projection.default(for: "task").attributes.map(\.0))
        #expect(configuration.projections.projection(for: "task").lifetime.map(Int.init) == 3600)
        #expect(configuration.projections.projection(for: "other").version == 1)
        let table = try #require(configuration.followedTables.first)
        #expect(table.database.path == "/srv/app/app.sqlite")
        #expect(table.account == .column("owner"))
        #expect(table.versionColumn == "revision")
        #expect(table.deletedColumn == "gone")
    }

    @Test func theCommentedDefaultConfigurationIsValid() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/config.json")
        let configuration = try ConfigurationFile.load(from: file)
        #expect(configuration.projections.indexName == "default")
        #expect(configuration.followedTables.isEmpty)
    }

    @Test(arguments: [
        ("{\"projections\": {\"note\": {\"version\": 0}}}", "'version' must be a whole number from 1"),
        ("{\"projections\": {\"note\": {\"expiresAfter\": \"soon\"}}}", "must be a duration"),
        ("{\"projections\": {\"note\": {\"colour\": 1}}}", "unknown setting 'colour'"),
        ("{\"projection\": {}}", "unknown setting 'projection'"),
        (
            "{\"follow\": [{\"table\": \"t\"}]}",
            "'database' (the app's SQLite file, or a postgresql:// URL) is required"
        ),
        ("{\n\"index\": \"x\",\n nope }", "not valid JSON on line 3"),
    ])
    func aBadConfigurationSaysWhereAndWhat(text: String, message: String) {
        #expect(
            performing: { try ConfigurationFile.parse(text) },
            throws: { error in
                let error = error as? ReplicaError
                return error?.code == .invalidConfiguration && error?.message.contains(message) == true
            })
    }

    @Test func backoffDoublesUpToItsMaximum() {
        let backoff = Backoff(initial: 2, maximum: 60)
        #expect((0...7).map { backoff.delay(afterFailures: $0) } == [0, 2, 4, 8, 16, 32, 60, 60])
        #expect(backoff.delay(afterFailures: 10_000) == 60)
        #expect(
            backoff.nextAttempt(afterFailures: 2, now: Date(timeIntervalSince1970: 100))
                == Date(timeIntervalSince1970: 104))
    }
}
