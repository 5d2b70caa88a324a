import Foundation
import ReplicaTestSupport
import Synchronization
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

/// The enrichment pass: which items are enriched, when, how often, and who is told. Runs on both backends
/// (``TestBackend``).
@Suite struct EnrichmentTests {
    let directory: TemporaryDirectory
    let clock = Fixtures.ManualClock(ISO8601.date(from: "2026-11-23T12:00:00Z")!)
    let summarizer = CountingSummarizer()
    /// The storage of the test's stores, kept for as long as the test (a database is dropped when released).
    let storages = Storages()

    final class Storages: Sendable {
        let kept = Mutex<[TestStore]>([])

        /// A new store on `backend`, kept until the test ends.
        func make(_ backend: TestBackend, configuration: Store.Configuration) async throws -> TestStore {
            let storage = try await backend.makeStore(configuration: configuration)
            kept.withLock { $0.append(storage) }
            return storage
        }
    }

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
            }) {
                throw ReplicaError(.storage, "the summarizer is down")
            }
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

    func makeStore(_ backend: TestBackend) async throws -> Store {
        var configuration = Fixtures.configuration(clock: clock)
        configuration.enrichment.summarizer = summarizer
        configuration.enrichment.me = { _ in ["ada@example.com"] }
        let store = try await storages.make(backend, configuration: configuration).store
        try await store.signIn("alice")
        return store
    }

    static let longText = String(repeating: "The launch moves to Friday because the supplier is late. ", count: 5)

    func mail(
        _ id: String, thread: String? = "thread.1", type: ContentType = .emailMessage, created: TimeInterval = -3600,
        text: String = longText, authors: [Person] = [Person(displayName: "Bob", handles: ["bob@example.com"])],
        options: UpdateListenerOptions = [.summarization, .priority]
    ) -> SearchableItem {
        var attributes = AttributeSet(contentType: type)
        attributes.title = "Launch \(id)"
        attributes.textContent = text
        attributes.contentCreationDate = clock.now.addingTimeInterval(created)
        attributes.authors = authors
        attributes.recipients = [Person(displayName: "Ada", handles: ["ada@example.com"])]
        var item = SearchableItem(
            uniqueIdentifier: ItemIdentifier(id), domainIdentifier: thread.map(DomainIdentifier.init(rawValue:)),
            attributeSet: attributes, expirationDate: .distantFuture)
        item.updateListenerOptions = options
        return item
    }

    @Test(arguments: TestBackend.available)
    func anEligibleMessageGetsASummaryAndAPriorityAndTheDelegateIsTold(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(named: "Mail", account: "alice")
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
        #expect(
            updates.allSatisfy {
                $0.changedAttributes.contains(.textContentSummary) && $0.changedAttributes.contains(.isPriority)
            })
        // The summary is searchable and filterable like any attribute.
        #expect(
            try await index.search(SearchQuery(queryString: #"textContentSummary == "*2 messages*""#)).map(
                \.item.uniqueIdentifier) == ["m2"])
        let status = try await store.enrichmentStatus(of: index)
        #expect(status == EnrichmentStatus(enriched: 2, pending: 0, failing: 0, skipped: [:]))
    }

    @Test(arguments: TestBackend.available)
    func itemsThatMissARuleAreNotEnrichedAndTheReasonIsCounted(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
        // A recording is summarized from its transcript, as Core Spotlight's table says.
        var voicemail = mail("voicemail", type: .voiceAudio)
        voicemail.attributeSet[.transcribedTextContent] = voicemail.attributeSet.textContent.map(AttributeValue.text)
        voicemail.attributeSet.textContent = nil
        try await index.indexItems([
            mail("old", created: -2 * 86_400),
            mail("short", text: "Friday?"),
            mail("nothread", thread: nil),
            mail("anonymous", authors: []),
            mail("note", type: .plainText),
            voicemail,
            mail("unasked", options: []),
        ])
        let report = try await store.enrichPendingItems()
        #expect(
            report.skipped == [
                "summarization.tooOld": 1, "priority.tooOld": 1, "summarization.tooShort": 1,
                "summarization.noDomain": 1,
                "priority.noDomain": 1, "summarization.noAuthors": 1, "priority.noAuthors": 1, "summarization.type": 1,
                "priority.type": 2,
            ])
        // The short message still gets its priority; the recording its summary.
        let items = Dictionary(
            uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0.attributeSet) })
        #expect(items["short"]?.isPriority != nil && items["short"]?.textContentSummary == nil)
        #expect(items["voicemail"]?.textContentSummary != nil && items["voicemail"]?.isPriority == nil)
        for id: ItemIdentifier in ["old", "nothread", "anonymous", "note", "unasked"] {
            #expect(items[id]?.textContentSummary == nil && items[id]?.isPriority == nil, "\(id)")
        }
        let status = try await store.enrichmentStatus(of: index)
        #expect(status.skipped["priority.type"] == 2 && status.pending == 0)
    }

    @Test(arguments: TestBackend.available)
    func anUnchangedItemIsNeverEnrichedTwiceAndAChangedOneIsAgain(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
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

    @Test(arguments: TestBackend.available)
    func anItemRewrittenAfterADayKeepsWhatItGotWhileNew(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
        try await index.indexItems([mail("m1")])
        try await store.enrichPendingItems()
        let day = 86_400.0
        clock.advance(by: 2 * day)
        // Two days on, the owner writes the same message again (its creation date unchanged).
        try await index.indexItems([mail("m1", created: -3600 - 2 * day)])
        let again = try await store.enrichPendingItems()
        #expect(again.unchanged == 1 && again.skipped.isEmpty)
        #expect(try await index.fetchItems(withIdentifiers: ["m1"]).first?.item.attributeSet.textContentSummary != nil)
        #expect(summarizer.calls.withLock { $0.count } == 1)
        #expect(
            try await store.enrichmentStatus(of: index)
                == EnrichmentStatus(enriched: 1, pending: 0, failing: 0, skipped: [:]))
        // A new text is too old to be enriched now, and the old summary does not come back for it.
        try await index.indexItems([
            mail("m1", created: -3600 - 2 * day, text: Self.longText + " The venue changed too.")
        ])
        let changed = try await store.enrichPendingItems()
        #expect(changed.skipped == ["summarization.tooOld": 1, "priority.tooOld": 1])
        #expect(try await index.fetchItems(withIdentifiers: ["m1"]).first?.item.attributeSet.textContentSummary == nil)
        #expect(summarizer.calls.withLock { $0.count } == 1)
    }

    /// `item` as a recording: its text is the transcript, and it has no text content.
    func transcribed(_ item: SearchableItem) -> SearchableItem {
        var item = item
        item.attributeSet[.transcribedTextContent] = item.attributeSet.textContent.map(AttributeValue.text)
        item.attributeSet.textContent = nil
        return item
    }

    /// `item` with its text only as HTML content.
    func htmlOnly(_ item: SearchableItem, _ html: String) -> SearchableItem {
        var item = item
        item.attributeSet.textContent = nil
        item.attributeSet[.htmlContentData] = .data(Data(html.utf8))
        return item
    }

    @Test(arguments: TestBackend.available)
    func mailIsSummarizedFromItsHTMLButOtherMessagesAreNot(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
        let html = "<html><head><style>p { color: red }</style></head><body><p>" + Self.longText + "</p></body></html>"
        // Markup well over 200 characters around a line of text well under it.
        let padded = "<div style=\"" + String(repeating: "margin: 0; ", count: 30) + "\"><p>Friday?</p></div>"
        let htmlMail = htmlOnly(mail("htmlMail", thread: "thread.html", options: [.summarization]), html)
        try await index.indexItems([
            htmlMail,
            htmlOnly(mail("htmlMessage", thread: "thread.message", type: .message, options: [.summarization]), html),
            htmlOnly(mail("paddedMail", thread: "thread.padded", options: [.summarization]), padded),
        ])
        let report = try await store.enrichPendingItems()
        #expect(report.enriched == 1 && report.failed == 0)
        #expect(report.skipped == ["summarization.tooShort": 2], "HTML counts for mail only, and only its text")
        let items = Dictionary(
            uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0.attributeSet) })
        #expect(items["htmlMail"]?.textContentSummary != nil)
        #expect(items["htmlMessage"]?.textContentSummary == nil)
        #expect(items["paddedMail"]?.textContentSummary == nil)
        #expect(summarizer.calls.withLock { $0 } == [["htmlMail"]])
        // The summarizer reads the HTML's text, without its markup or style sheet.
        let read = EnrichmentPlan.text(of: htmlMail)
        #expect(read.contains("the supplier is late") && !read.contains("<p>") && !read.contains("color"))
    }

    @Test(arguments: TestBackend.available)
    func aRecordingIsSummarizedFromItsTranscriptOnly(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
        try await index.indexItems([
            transcribed(mail("transcribed", thread: "voice.1", type: .voiceAudio, options: [.summarization])),
            // As long a text, but as text content: a recording without a transcript has nothing to summarize.
            mail("untranscribed", thread: "voice.2", type: .voiceAudio, options: [.summarization]),
        ])
        let report = try await store.enrichPendingItems()
        #expect(report.enriched == 1 && report.failed == 0)
        #expect(report.skipped == ["summarization.tooShort": 1])
        let items = Dictionary(
            uniqueKeysWithValues: try await index.allItems().map { ($0.uniqueIdentifier, $0.attributeSet) })
        #expect(items["transcribed"]?.textContentSummary != nil)
        #expect(items["untranscribed"]?.textContentSummary == nil)
        #expect(summarizer.calls.withLock { $0 } == [["transcribed"]])
    }

    /// Says a message is a priority when it asks for something today.
    struct TodayClassifier: PriorityClassifier {
        var identifier: String { "test.today-1" }
        func isPriority(_ thread: MessageThread) async throws -> Bool { thread.current?.text.contains("today") == true }
    }

    @Test(arguments: TestBackend.available)
    func enrichedPriorityCanBeFilteredOn(_ backend: TestBackend) async throws {
        var configuration = Fixtures.configuration(clock: clock)
        configuration.enrichment.summarizer = summarizer
        configuration.enrichment.priorityClassifier = TodayClassifier()
        let store = try await storages.make(backend, configuration: configuration).store
        try await store.signIn("alice")
        let index = try await store.index(account: "alice")
        try await index.indexItems([
            mail(
                "urgent", thread: "thread.1", text: "Please sign the contract today. " + Self.longText,
                options: [.priority]),
            mail("calm", thread: "thread.2", options: [.priority]),
            mail("unasked", thread: "thread.3", text: "Sign it today. " + Self.longText, options: []),
        ])
        func matching(_ queryString: String) async throws -> [ItemIdentifier] {
            try await index.search(SearchQuery(queryString: queryString)).map(\.item.uniqueIdentifier).sorted {
                $0.rawValue < $1.rawValue
            }
        }
        #expect(try await matching("isPriority == true").isEmpty, "nothing is a priority before enrichment")
        try await store.enrichPendingItems()
        #expect(try await matching("isPriority == true") == ["urgent"])
        #expect(try await matching("isPriority == 1") == ["urgent"])
        #expect(try await matching("isPriority == false") == ["calm"])
        // With words: the priority among the matches.
        var query = SearchQuery("supplier")
        query.predicate = try QueryPredicate(queryString: "isPriority == true")
        #expect(try await index.search(query).map(\.item.uniqueIdentifier) == ["urgent"])
    }

    @Test(arguments: TestBackend.available)
    func aFailingEnricherIsTriedAgainAfterItsBackoff(_ backend: TestBackend) async throws {
        let store = try await makeStore(backend)
        let index = try await store.index(account: "alice")
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
        #expect(
            try await store.enrichmentStatus(of: index)
                == EnrichmentStatus(enriched: 1, pending: 0, failing: 0, skipped: [:]))
    }

    /// A host's own enricher, out of process: a Python program speaking the documented protocol.
    @Test(arguments: TestBackend.available)
    func anExecEnricherReplacesTheBuiltInsAndRunsOnceForManyRequests(_ backend: TestBackend) async throws {
        let script = directory.path + "/enrich.py"
        let starts = directory.path + "/starts"
        try """
        import json, os, sys
        assert json.loads(sys.stdin.readline()) == {"type": "start", "mode": "enrich"}
        assert os.environ["REPLICA_MODE"] == "enrich"
        with open(sys.argv[1], "a") as f: f.write("started\\n")
        for line in sys.stdin:
            request = json.loads(line)
            if request["type"] == "stop": break
            messages = request["thread"]["messages"]
            print(json.dumps({"type": "log", "level": "info", "message": "working"}), flush=True)
            if request["type"] == "summarize":
                answer = {"type": "summarized", "summary": "%d message(s), last by %s" % (len(messages), messages[-1]["authors"][0])}
            else:
                answer = {"type": "classified", "isPriority": "ada@example.com" in request["thread"]["me"]}
            answer["request"] = request["request"]
            print(json.dumps(answer), flush=True)
        """.write(toFile: script, atomically: true, encoding: .utf8)
        var configuration = Fixtures.configuration(clock: clock)
        let program = ExecEnricher(command: ["python3", script, starts])
        configuration.enrichment.summarizer = program
        configuration.enrichment.priorityClassifier = program
        configuration.enrichment.me = { _ in ["ada@example.com"] }
        let storage = try await storages.make(backend, configuration: configuration)
        let store = storage.store
        try await store.signIn("alice")
        let index = try await store.index(account: "alice")
        try await index.indexItems([mail("m1"), mail("m2")])
        #expect(try await store.enrichPendingItems().enriched == 2)
        let attributes = try #require(try await index.fetchItems(withIdentifiers: ["m2"]).first).item.attributeSet
        #expect(attributes.textContentSummary == "2 message(s), last by Bob")
        #expect(attributes.isPriority == true)
        // Four requests, one program: a model behind it loads once.
        #expect(try String(contentsOfFile: starts, encoding: .utf8) == "started\n")

        // A program that fails leaves the item waiting, with the reason in the status, not the text; the
        // next pass starts it afresh.
        var broken = configuration
        broken.enrichment.summarizer = ExecEnricher(command: [
            "python3", "-c", "import sys; sys.stderr.write('no model here'); sys.exit(3)",
        ])
        let events = Mutex<[String]>([])
        broken.events = { event in events.withLock { $0.append(event.message) } }
        let brokenStore = try storage.open(configuration: broken)
        try await index.indexItems([mail("m1", text: Self.longText + " More.")])
        let report = try await brokenStore.enrichPendingItems()
        #expect(report.failed == 1)
        // What it wrote on standard error may quote the messages: it is in no event or stored error.
        #expect(events.withLock { $0 }.contains { $0.contains("the enrichment program python3 failed") })
        #expect(!events.withLock { $0 }.contains { $0.contains("no model here") })
        let silent = ExecEnricher(
            command: ["python3", "-c", "import sys, time; sys.stdin.readline(); sys.stdin.readline(); time.sleep(30)"],
            timeout: 0.5)
        let thread = MessageThread(domain: "thread.1", messages: [EnrichmentPlan.message(mail("m1"))], me: [])
        await #expect(
            performing: { try await silent.summarize(thread) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("did not answer within") == true
            })
        // A program that stops reading: a request larger than the pipe holds is given up at the deadline.
        let deaf = ExecEnricher(command: ["python3", "-c", "import time; time.sleep(30)"], timeout: 0.5)
        let long = MessageThread(
            domain: "thread.1",
            messages: [EnrichmentPlan.message(mail("m1", text: String(repeating: "word ", count: 40_000)))], me: [])
        await #expect(
            performing: { try await deaf.summarize(long) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("did not read the request within") == true
            })
        // A program that exits after each answer is started again for the next request, at no failure.
        let once = ExecEnricher(command: [
            "python3", "-c",
            """
            import json, sys
            sys.stdin.readline()
            request = json.loads(sys.stdin.readline())
            print(json.dumps({"type": "summarized", "request": request["request"], "summary": "once"}), flush=True)
            """,
        ])
        for _ in 0..<3 { #expect(try await once.summarize(thread) == "once") }
        let wrong = ExecEnricher(command: [
            "python3", "-c",
            "import sys; sys.stdin.readline(); sys.stdin.readline(); print('{\"type\": \"classified\", \"request\": \"e1\"}', flush=True); sys.stdin.read()",
        ])
        await #expect(
            performing: { try await wrong.summarize(thread) },
            throws: { error in
                (error as? ReplicaError)?.message.contains("where the answer to request e1 was due") == true
            })
    }
}
