import Foundation
import Testing
import Synchronization
@testable import Replica
@testable import ReplicaIndex
@testable import ReplicaCore
import ReplicaTestSupport

/// The enrichment pass: which items are enriched, when, how often, and who is told.
@Suite struct EnrichmentTests {
    let directory: TemporaryDirectory
    let clock = Fixtures.ManualClock(ISO8601.date(from: "2026-11-23T12:00:00Z")!)
    let summarizer = CountingSummarizer()

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// A summarizer that records what it was asked and answers with the thread's length: the pass, not
    /// the summary, is under test here (the built-in summarizer has tests of its own).
    final class CountingSummarizer: Summarizer, Sendable {
        let calls = Mutex<[[ItemIdentifier]]>([])
        let failures = Mutex(0)
        var identifier: String { "test.counting-1" }

        func summarize(_ thread: MessageThread) async throws -> String {
            if failures.withLock({ count in
                guard count > 0 else { return false }
                count -= 1
                return true
            }) { throw ReplicaError(.storage, "the summarizer is down") }
            calls.withLock { $0.append(thread.messages.map(\.identifier)) }
            return "A thread of \(thread.messages.count) messages about the launch."
        }
    }

    final class Listener: IndexDelegate, Sendable {
        let updates = Mutex<[ItemUpdate]>([])
        func reindexAllItems(in index: SearchableIndex) async throws {}
        func reindexItems(withIdentifiers identifiers: [ItemIdentifier], in index: SearchableIndex) async throws {}
        func searchableItemsDidUpdate(_ updates: [ItemUpdate], in index: SearchableIndex) async {
            self.updates.withLock { $0 += updates }
        }
    }

    func makeStore() throws -> Store {
        var configuration = Fixtures.configuration(clock: clock)
        configuration.enrichment.summarizer = summarizer
        configuration.enrichment.me = { _ in ["ada@example.com"] }
        let store = try Store(directory: directory.url, configuration: configuration)
        try store.signIn("alice")
        return store
    }

    static let longText = String(repeating: "The launch moves to Friday because the supplier is late. ", count: 5)

    func mail(_ id: String, thread: String? = "thread.1", type: ContentType = .emailMessage, created: TimeInterval = -3600,
              text: String = longText, authors: [Person] = [Person(displayName: "Bob", handles: ["bob@example.com"])],
              options: UpdateListenerOptions = [.summarization, .priority]) -> SearchableItem {
        var attributes = AttributeSet(contentType: type)
        attributes.title = "Launch \(id)"
        attributes.textContent = text
        attributes.contentCreationDate = clock.now.addingTimeInterval(created)
        attributes.authors = authors
        attributes.recipients = [Person(displayName: "Ada", handles: ["ada@example.com"])]
        var item = SearchableItem(uniqueIdentifier: ItemIdentifier(id), domainIdentifier: thread.map(DomainIdentifier.init(rawValue:)),
                                  attributeSet: attributes, expirationDate: .distantFuture)
        item.updateListenerOptions = options
        return item
    }

    @Test func anEligibleMessageGetsASummaryAndAPriorityAndTheDelegateIsTold() async throws {
        let store = try makeStore()
        let index = try store.index(named: "Mail", account: "alice")
        let listener = Listener()
        try await index.setDelegate(listener)
        try await index.indexItems([mail("m1", created: -7200), mail("m2")])
        // Searchable by its words before any enrichment.
        #expect(try await index.search(SearchQuery("supplier")).count == 2)

        let report = try await store.enrichPendingItems()
        #expect(report.enriched == 2 && report.failed == 0 && report.skipped.isEmpty)
        let stored = try await index.fetchItems(withIdentifiers: ["m2"]).first
        #expect(stored?.item.attributeSet.textContentSummary == "A thread of 2 messages about the launch.")
        #expect(stored?.item.attributeSet.isPriority != nil)
        #expect(stored?.origin.owner == .api, "enrichment writes as the item's own owner")
        // Each message is summarized with the thread up to it, itself last.
        #expect(Set(summarizer.calls.withLock { $0 }) == [["m1"], ["m1", "m2"]])
        let updates = listener.updates.withLock { $0 }
        #expect(Set(updates.map(\.item.uniqueIdentifier)) == ["m1", "m2"])
        #expect(updates.allSatisfy { $0.changedAttributes.contains(.textContentSummary) && $0.changedAttributes.contains(.isPriority) })
        // The summary is searchable and filterable like any attribute.
        #expect(try await index.search(SearchQuery(queryString: #"textContentSummary == "*2 messages*""#)).map(\.item.uniqueIdentifier) == ["m2"])
        let status = try await store.enrichmentStatus(of: index)
        #expect(status == EnrichmentStatus(enriched: 2, pending: 0, failing: 0, skipped: [:]))
    }

    @Test func itemsThatMissARuleAreNotEnrichedAndTheReasonIsCounted() async throws {
        let store = try makeStore()
        let index = try store.index(account: "alice")
        try await index.indexItems([
            mail("old", created: -2 * 86_400),
            mail("short", text: "Friday?"),
            mail("nothread", thread: nil),
            mail("anonymous", authors: []),
            mail("note", type: .plainText),
            mail("voicemail", type: .voiceAudio),
            mail("unasked", options: []),
        ])
        let report = try await store.enrichPendingItems()
        #expect(report.skipped == [
            "summarization.tooOld": 1, "priority.tooOld": 1, "summarization.tooShort": 1, "summarization.noDomain": 1,
            "priority.noDomain": 1, "summarization.noAuthors": 1, "priority.noAuthors": 1, "summarization.type": 1,
            "priority.type": 2,
        ])
        // The short message still gets its priority; the recording its summary.
        let items = Dictionary(uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0.attributeSet) })
        #expect(items["short"]?.isPriority != nil && items["short"]?.textContentSummary == nil)
        #expect(items["voicemail"]?.textContentSummary != nil && items["voicemail"]?.isPriority == nil)
        for id: ItemIdentifier in ["old", "nothread", "anonymous", "note", "unasked"] {
            #expect(items[id]?.textContentSummary == nil && items[id]?.isPriority == nil, "\(id)")
        }
        let status = try await store.enrichmentStatus(of: index)
        #expect(status.skipped["priority.type"] == 2 && status.pending == 0)
    }

    @Test func anUnchangedItemIsNeverEnrichedTwiceAndAChangedOneIsAgain() async throws {
        let store = try makeStore()
        let index = try store.index(account: "alice")
        try await index.indexItems([mail("m1")])
        try await store.enrichPendingItems()
        #expect(summarizer.calls.withLock { $0.count } == 1)

        // Nothing new: nothing is asked.
        #expect(try await store.enrichPendingItems().enriched == 0)
        // The owner writes the same item again (without the summary): it is put back, not asked again.
        try await index.indexItems([mail("m1")])
        let again = try await store.enrichPendingItems()
        #expect(again.enriched == 0 && again.unchanged == 1)
        #expect(summarizer.calls.withLock { $0.count } == 1)
        #expect(try await index.fetchItems(withIdentifiers: ["m1"]).first?.item.attributeSet.textContentSummary != nil)

        // A text change enriches it again.
        try await index.indexItems([mail("m1", text: Self.longText + " The venue changed too.")])
        #expect(try await store.enrichPendingItems().enriched == 1)
        #expect(summarizer.calls.withLock { $0.count } == 2)
    }

    @Test func aFailingEnricherIsTriedAgainAfterItsBackoff() async throws {
        let store = try makeStore()
        let index = try store.index(account: "alice")
        summarizer.failures.withLock { $0 = 1 }
        try await index.indexItems([mail("m1")])
        let first = try await store.enrichPendingItems()
        #expect(first.failed == 1 && first.enriched == 0)
        #expect(try await store.enrichmentStatus(of: index).failing == 1)
        // Not before its time.
        #expect(try await store.enrichPendingItems().failed == 0)
        #expect(summarizer.calls.withLock { $0.count } == 0)
        clock.advance(by: store.configuration.enrichment.backoff.delay(afterFailures: 1))
        #expect(try await store.enrichPendingItems().enriched == 1)
        #expect(try await store.enrichmentStatus(of: index) == EnrichmentStatus(enriched: 1, pending: 0, failing: 0, skipped: [:]))
    }

    /// A host's own enricher, out of process: a Python program speaking the documented protocol.
    @Test func anExecEnricherReplacesTheBuiltIns() async throws {
        let script = directory.path + "/enrich.py"
        try """
            import json, sys
            request = json.loads(sys.stdin.readline())
            messages = request["thread"]["messages"]
            if request["request"] == "summarize":
                print(json.dumps({"summary": "%d message(s), last by %s" % (len(messages), messages[-1]["authors"][0])}))
            else:
                print(json.dumps({"isPriority": "ada@example.com" in request["thread"]["me"]}))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        var configuration = Fixtures.configuration(clock: clock)
        configuration.enrichment.summarizer = ExecEnricher(command: ["python3", script])
        configuration.enrichment.priorityClassifier = ExecEnricher(command: ["python3", script])
        configuration.enrichment.me = { _ in ["ada@example.com"] }
        let store = try Store(directory: directory.url, configuration: configuration)
        try await store.signIn("alice")
        let index = try store.index(account: "alice")
        try await index.indexItems([mail("m1")])
        #expect(try await store.enrichPendingItems().enriched == 1)
        let attributes = try #require(try await index.fetchItems(withIdentifiers: ["m1"]).first).item.attributeSet
        #expect(attributes.textContentSummary == "1 message(s), last by Bob")
        #expect(attributes.isPriority == true)

        // A program that fails leaves the item waiting, with the reason in the status, not the text.
        var broken = configuration
        broken.enrichment.summarizer = ExecEnricher(command: ["python3", "-c", "import sys; sys.exit(3)"])
        let brokenStore = try Store(directory: directory.url, configuration: broken)
        try await index.indexItems([mail("m1", text: Self.longText + " More.")])
        let report = try await brokenStore.enrichPendingItems()
        #expect(report.failed == 1)
    }
}
