import Foundation
import Testing

@testable import Replica

/// The built-in summarizer: which sentences it picks, in what order, within which limits.
@Suite struct ExtractiveSummarizerTests {
    func thread(_ texts: [String], subject: String? = nil) -> MessageThread {
        let messages = texts.enumerated().map { index, text in
            ThreadMessage(
                identifier: ItemIdentifier("mail:\(index)"),
                authors: [index % 2 == 0 ? "bob@example.com" : "ada@example.com"],
                subject: subject, text: text)
        }
        return MessageThread(domain: "thread.1", messages: messages)
    }

    let migration = [
        """
        Hi Ada,
        The staging database migration failed again last night. The migration script times out on the
        orders table after twenty minutes.
        Thanks!
        Bob
        """,
        """
        Hi Bob,
        I looked at the migration logs this morning. The orders table migration needs an index before the
        script runs, so I will add the index and rerun the migration today.
        Cheers,
        Ada
        """,
    ]

    @Test func picksTheMainTopicOverGreetingsAndThanks() async throws {
        let summary = try await ExtractiveSummarizer().summarize(thread(migration))
        #expect(summary.contains("migration"))
        for filler in ["Hi Bob", "Hi Ada", "Thanks!", "Cheers", "Ada.", "Bob."] {
            #expect(!summary.contains(filler), "\(filler) in \(summary)")
        }
        #expect(
            summary == """
                I looked at the migration logs this morning. The orders table migration needs an index before the \
                script runs, so I will add the index and rerun the migration today.
                """)
    }

    @Test func keepsTheThreadsOrder() async throws {
        let texts = [
            "The printer on the third floor jams on every duplex job.",
            """
            Facilities says the printer jams because the duplex unit of the printer is worn out and the \
            printer needs a new duplex unit.
            """,
        ]
        let summarizer = ExtractiveSummarizer(maximumSentences: 2, maximumCharacters: 400)
        let summary = try await summarizer.summarize(thread(texts))
        // The second message's sentence scores higher, yet the first comes first.
        let first = try #require(summary.range(of: "third floor"))
        let second = try #require(summary.range(of: "Facilities"))
        #expect(first.lowerBound < second.lowerBound)
        #expect(summary == texts[0] + " " + MessageText.collapsed(texts[1]))
    }

    @Test func respectsTheLimits() async throws {
        let long = thread(migration)
        let one = try await ExtractiveSummarizer(maximumSentences: 1).summarize(long)
        #expect(MessageText.splitSentences(one).count == 1)
        for limit in [20, 60, 100, 140, 300] {
            let summarizer = ExtractiveSummarizer(maximumSentences: 3, maximumCharacters: limit)
            let summary = try await summarizer.summarize(long)
            #expect(!summary.isEmpty)
            #expect(summary.count <= limit, "\(summary.count) characters for a limit of \(limit)")
        }
    }

    @Test func dropsQuotedLinesAndSignatures() async throws {
        let text = """
            Sounds good, I will book the large room for the design review on Monday.

            On Tue, 3 Nov 2026, Bob wrote:
            > Can we move the budget meeting? The budget meeting clashes with the budget review,
            > and the budget review matters more for the budget.

            --\u{20}
            Ada Lovelace
            Budget planning, Budget Office, budget@example.com
            """
        let summary = try await ExtractiveSummarizer().summarize(thread([text]))
        #expect(summary == "Sounds good, I will book the large room for the design review on Monday.")
        #expect(MessageText.ownLines(of: text).joined().lowercased().contains("budget") == false)
    }

    @Test func cutsBulletsAndShortLinesIntoSentences() {
        let text = """
            Changes:
            * Fix the crash on startup
              when the cache is empty.
            - Update translations
            Hi team,
            We shipped it. Dr. Smith approved, e.g. the release notes. Done!
            """
        #expect(
            MessageText.sentences(of: text) == [
                "Changes:",
                "Fix the crash on startup when the cache is empty.",
                "Update translations",
                "Hi team,",
                "We shipped it.",
                "Dr. Smith approved, e.g. the release notes.",
                "Done!",
            ])
    }

    @Test func isDeterministic() async throws {
        let summarizer = ExtractiveSummarizer(maximumSentences: 1)
        // The first two messages' sentences have the same words at the same place: a tie that the
        // earlier wins, every time.
        let tied = thread(["Alpha beta gamma delta epsilon.", "Epsilon delta gamma beta alpha.", "Ok."])
        var summaries = Set<String>()
        for _ in 0..<20 {
            let summary = try await summarizer.summarize(tied)
            summaries.insert(summary)
        }
        #expect(summaries == ["Alpha beta gamma delta epsilon."])
        let long = thread(migration)
        let first = try await ExtractiveSummarizer().summarize(long)
        for _ in 0..<5 { #expect(try await ExtractiveSummarizer().summarize(long) == first) }
    }

    @Test func fallsBackToACutSentence() async throws {
        let words = (1...80).map { "word\($0)" }
        let sentence = "The " + words.joined(separator: " ") + " end."
        let summary = try await ExtractiveSummarizer(maximumCharacters: 100).summarize(thread([sentence]))
        #expect(summary.hasSuffix("…"))
        #expect(summary.count <= 100)
        let kept = String(summary.dropLast())
        #expect(sentence.hasPrefix(kept))
        #expect(sentence.dropFirst(kept.count).first == " ", "cut inside a word: \(summary)")
    }

    @Test func neverEmptyWhenThereIsText() async throws {
        let summarizer = ExtractiveSummarizer()
        #expect(try await summarizer.summarize(thread(["Thanks!"])) == "Thanks!")
        let quote = "> only a quote of the earlier message"
        #expect(try await summarizer.summarize(thread([quote])) == quote)
        #expect(try await summarizer.summarize(thread([" \n "])) == "")
        #expect(try await summarizer.summarize(MessageThread(domain: "thread.1", messages: [])) == "")
    }

    @Test func identifierNamesTheLimits() {
        #expect(ExtractiveSummarizer().identifier == "replica.extractive-1")
        let other = ExtractiveSummarizer(maximumSentences: 3, maximumCharacters: 500)
        #expect(other.identifier == "replica.extractive-1:3:500")
    }
}

/// The built-in priority rules: each rule, its weight, and the threshold.
@Suite struct RuleBasedPriorityClassifierTests {
    let me = ["Ada Lovelace", "ada@example.com"]

    func message(
        _ identifier: String, from author: String, to primary: [String] = [], copied: [String] = [],
        subject: String? = nil, _ text: String
    ) -> ThreadMessage {
        ThreadMessage(
            identifier: ItemIdentifier(identifier), authors: [author],
            recipients: primary + copied, primaryRecipients: primary, subject: subject, text: text)
    }

    @Test func directQuestionWithADeadlineFromAKnownSenderIsAPriority() async throws {
        let thread = MessageThread(
            domain: "thread.7",
            messages: [
                message(
                    "mail:1", from: "Bob <bob@example.com>", to: ["ada@example.com"],
                    "The quarterly report draft is attached."),
                message(
                    "mail:2", from: "bob@example.com", to: ["Ada Lovelace <ada@example.com>"],
                    "Hi Ada,\nCould you sign off the report by Friday? Legal needs it."),
            ], me: me)
        let classifier = RuleBasedPriorityClassifier()
        let result = classifier.score(thread)
        #expect(result.reasons == ["sentToMe", "conversation", "question", "deadline"])
        #expect(result.score == 5.0)
        #expect(try await classifier.isPriority(thread))
    }

    @Test func newsletterWithUnsubscribeIsNotAPriority() async throws {
        let thread = MessageThread(
            domain: "shop.news",
            messages: [
                message(
                    "mail:9", from: "Shop Weekly <newsletter@shop.example>", to: ["ada@example.com"],
                    """
                    Our spring sale ends today: every garden chair is 30% off.

                    To unsubscribe from these emails, follow the link below.
                    """)
            ], me: me)
        let classifier = RuleBasedPriorityClassifier()
        let result = classifier.score(thread)
        #expect(result.reasons == ["sentToMe", "deadline", "automated"])
        #expect(result.score == 1.0)
        #expect(try await classifier.isPriority(thread) == false)
        // A no-reply sender is automated without "unsubscribe" too.
        let receipt = MessageThread(
            domain: "shop.orders",
            messages: [
                message("mail:10", from: "no-reply@shop.example", to: ["ada@example.com"], "Your order has shipped.")
            ], me: me)
        #expect(classifier.score(receipt).reasons == ["sentToMe", "automated"])
    }

    @Test func manyRecipientsLowerTheScore() async throws {
        let text = "Can you review the rollout plan by Friday?"
        let others = (1...11).map { "person\($0)@example.com" }
        let few = MessageThread(
            domain: "t",
            messages: [
                message("m", from: "bob@example.com", to: ["ada@example.com"], text)
            ], me: me)
        let many = MessageThread(
            domain: "t",
            messages: [
                message("m", from: "bob@example.com", copied: ["ada@example.com"] + others, text)
            ], me: me)
        let classifier = RuleBasedPriorityClassifier()
        #expect(classifier.score(few).reasons == ["sentToMe", "question", "deadline"])
        #expect(classifier.score(many).reasons == ["question", "deadline", "manyRecipients"])
        #expect(classifier.score(many).score == 1.5)
        #expect(try await classifier.isPriority(few))
        #expect(try await classifier.isPriority(many) == false)
        // Three recipients still count as sent to me; names and handles of one person count once.
        let three = MessageThread(
            domain: "t",
            messages: [
                message(
                    "m", from: "bob@example.com",
                    copied: ["Ada Lovelace", "ada@example.com", "carol@example.com", "dan@example.com"], text)
            ], me: me)
        #expect(RuleBasedPriorityClassifier.recipientCount(three.messages[0]) == 3)
        #expect(classifier.score(three).reasons.first == "sentToMe")
    }

    @Test func thresholdIsRespected() async throws {
        let thread = MessageThread(
            domain: "changelog.curl",
            messages: [
                message("curl:1", from: "Jane <jane@debian.org>", "* New upstream release."),
                message(
                    "curl:2", from: "Jane <jane@debian.org>",
                    "curl (8.1-1) unstable; urgency=high\n\n* Fix CVE-2024-2004."),
            ])
        #expect(RuleBasedPriorityClassifier().score(thread).reasons == ["conversation", "deadline"])
        #expect(RuleBasedPriorityClassifier().score(thread).score == 2.5)
        #expect(try await RuleBasedPriorityClassifier(threshold: 2.5).isPriority(thread))
        #expect(try await RuleBasedPriorityClassifier(threshold: 3).isPriority(thread) == false)
        #expect(RuleBasedPriorityClassifier().identifier == "replica.rules-1")
        #expect(RuleBasedPriorityClassifier(threshold: 3).identifier != RuleBasedPriorityClassifier().identifier)
        let empty = MessageThread(domain: "t", messages: [])
        #expect(try await RuleBasedPriorityClassifier().isPriority(empty) == false)
    }

    @Test func matchesWholeWordsWithoutCase() {
        func deadline(_ text: String) -> Bool {
            RuleBasedPriorityClassifier.namesDeadline(MessageText.words(of: text))
                || RuleBasedPriorityClassifier.hasCVE(text)
        }
        #expect(deadline("The report is DUE on Friday."))
        #expect(deadline("Please send it ASAP"))
        #expect(deadline("before 5pm"))
        #expect(deadline("before May 3"))
        #expect(deadline("by Thursday"))
        #expect(deadline("fixes cve-2023-4911"))
        #expect(deadline("foo (1.0) bookworm; urgency=high"))
        #expect(!deadline("The residue was due to a stale cache."))
        #expect(!deadline("foo (1.0) unstable; urgency=medium"))
        #expect(!deadline("Updated the todays-build script and the overdueness metric."))
        #expect(!deadline("see ABCVE-12 and CVE-draft"))
        #expect(!deadline("standing by the Mondays crew"))
    }

    @Test func readsOnlyTheLastMessagesOwnText() {
        let thread = MessageThread(
            domain: "t",
            messages: [
                message(
                    "m", from: "bob@example.com",
                    """
                    Done, it is merged.

                    On Mon, Ada wrote:
                    > Can you merge it by tomorrow? It is urgent.
                    """)
            ])
        #expect(RuleBasedPriorityClassifier().score(thread).reasons.isEmpty)
        #expect(RuleBasedPriorityClassifier.hasQuestionMark("Is it done?"))
        #expect(RuleBasedPriorityClassifier.hasQuestionMark("Is it done?) yes"))
        #expect(!RuleBasedPriorityClassifier.hasQuestionMark("see https://example.com/?q=1"))
    }
}
