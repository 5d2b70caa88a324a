import Foundation
import ReplicaTestSupport
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct AttributeSetTests {
    @Test func readsSystemAndCustomKeysFromJSON() throws {
        let attributes = try AttributeSet(
            json: JSON.parse(
                """
                {"title": "T", "keywords": ["a", "b"], "contentModificationDate": "2026-11-20T10:00:00Z",
                 "rating": 4, "authors": [{"displayName": "Ada", "handles": ["ada@example.com"]}, "Grace"],
                 "com.example.chef": "Ada", "com.example.when": {"date": "2026-01-01"}, "thumbnailData": "AQID"}
                """))
        #expect(attributes.title == "T")
        #expect(attributes.keywords == ["a", "b"])
        #expect(attributes.contentModificationDate == ISO8601.date(from: "2026-11-20T10:00:00Z"))
        #expect(attributes.rating == 4)
        #expect(
            attributes.authors == [
                Person(displayName: "Ada", handles: ["ada@example.com"]), Person(displayName: "Grace"),
            ])
        #expect(attributes[AttributeKey("com.example.chef")] == .text("Ada"))
        #expect(attributes[AttributeKey("com.example.when")] == .date(ISO8601.date(from: "2026-01-01")!))
        #expect(attributes.thumbnailData == Data([1, 2, 3]))
        #expect(attributes.authorStrings == ["Ada", "ada@example.com", "Grace"])
        // What is written reads back the same.
        #expect(try AttributeSet(json: JSON.parse(attributes.json().serialized())) == attributes)
    }

    @Test(arguments: [
        (#"{"title": 42}"#, "'title' must be a string"),
        (#"{"keywords": "one"}"#, "'keywords' must be an array of strings"),
        (#"{"contentModificationDate": "last week"}"#, "'contentModificationDate' must be an ISO 8601 date"),
        (#"{"rating": "high"}"#, "'rating' must be a number"),
        (#"{"com.example.x": {"nested": true}}"#, "custom attribute 'com.example.x'"),
        (#"["not", "an", "object"]"#, "must be an object"),
    ])
    func namesTheAttributeOfTheWrongType(json: String, message: String) {
        #expect {
            try AttributeSet(json: JSON.parse(json))
        } throws: { error in
            let error = error as? ReplicaError
            return error?.code == .invalidItem && error?.message.contains(message) == true
        }
    }

    @Test func mergingReplacesGivenValuesAndAppliesRemovals() {
        var stored = AttributeSet(contentType: .plainText)
        stored.title = "Old"
        stored.keywords = ["k"]
        stored.textContent = "body"
        var update = AttributeSet()
        update.title = "New"
        update.keywords = nil
        let merged = stored.merging(update)
        #expect(merged.title == "New")
        #expect(merged.keywords == nil)
        #expect(merged.textContent == "body")
        #expect(merged.contentType == .plainText)
    }

    @Test func contentTypesFormAHierarchy() {
        for type: ContentType in [.plainText, .markdown, .html, .emailMessage, "public.python-script", .utf8PlainText] {
            #expect(type.conforms(to: .text), "\(type)")
            #expect(type.conforms(to: .item), "\(type)")
        }
        #expect(!ContentType.image.conforms(to: .text))
        #expect(ContentType.emailMessage.conforms(to: .message))
        #expect(ContentType("com.example.recipe").tree == ["com.example.recipe", "public.item"])
        var attributes = AttributeSet(contentType: "com.example.recipe")
        attributes[.contentTypeTree] = .texts(["com.example.recipe", "public.text"])
        #expect(attributes.contentTypeTree == ["com.example.recipe", "public.text"])
    }

    @Test func anItemLineNeedsAnIdentifierAndValidFields() throws {
        let item = try SearchableItem(
            json: JSON.parse(
                #"{"uniqueIdentifier": "n1", "domainIdentifier": "account.a.notes", "expirationDate": "2027-01-01T00:00:00Z", "isUpdate": true, "attributes": {"title": "T"}}"#
            ))
        #expect(item.uniqueIdentifier == "n1")
        #expect(item.domainIdentifier == "account.a.notes")
        #expect(item.expirationDate == ISO8601.date(from: "2027-01-01T00:00:00Z"))
        #expect(item.isUpdate)
        for (line, message) in [
            (#"{"attributes": {}}"#, "no uniqueIdentifier"),
            (#"{"uniqueIdentifier": ""}"#, "empty uniqueIdentifier"),
            (#"{"uniqueIdentifier": "x", "expirationDate": "soon"}"#, "expirationDate must be"),
            (#"{"uniqueIdentifier": "x", "domainIdentifier": "a..b"}"#, "domainIdentifier must be"),
            (#"{"uniqueIdentifier": "x", "isUpdate": "yes"}"#, "isUpdate must be"),
        ] {
            #expect(
                performing: { try SearchableItem(json: JSON.parse(line)) },
                throws: { error in
                    (error as? ReplicaError)?.message.contains(message) == true
                })
        }
    }

    @Test func refusesAnOversizedItem() {
        let huge = Fixtures.item("big", text: String(repeating: "x", count: SearchableItem.maximumByteCount + 1))
        #expect(
            performing: { try huge.validate() },
            throws: { error in
                (error as? ReplicaError)?.message.contains("the limit is") == true
            })
    }
}
