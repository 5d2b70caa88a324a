public import Foundation

/// Summaries and priority for messages, mail and recordings that ask for them, as Core Spotlight's
/// `updateListenerOptions` do: written into `textContentSummary` and `isPriority` after the item is
/// searchable, never before.
///
/// An item is enriched only when it meets the rules Core Spotlight states, and each option it cannot
/// have is recorded with a reason code that `replica status` counts (never content):
/// - `type`: its content type is a message (`public.message` and under it, mail included) or a voice
///   recording (`public.voice-audio`); priority is for messages only.
/// - `noDomain`: its domain identifier names the thread.
/// - `tooOld`: it was created within the last 24 hours (`maximumAge`).
/// - `noAuthors`: messages and mail name their authors.
/// - `tooShort`: a summary needs at least 200 characters of text (`minimumTextLength`): a message's
///   text content, mail's text content or else its HTML content, a recording's transcript.
///
/// Results kept from when an item was new come back when its owner rewrites it later with the same
/// content, however old it is by then.
///
/// An item is enriched once per version of its thread: a later change to its text (or its thread, or the
/// enrichers) enriches it again, and writing the same item again does not. A failure is tried again
/// with back-off.
///
/// For example:
/// ```swift
/// var configuration = Store.Configuration()
/// configuration.enrichment.me = { _ in ["ada@example.com"] }       // whose messages are "to me"
/// let store = try Store(directory: URL(fileURLWithPath: "/var/lib/mail/replica"), configuration: configuration)
/// var mail = SearchableItem(uniqueIdentifier: "mail:1", domainIdentifier: "thread.42",
///                           attributeSet: AttributeSet(contentType: .emailMessage))
/// mail.updateListenerOptions = [.summarization, .priority]
/// let report = try await store.enrichPendingItems()
/// ```
public struct EnrichmentConfiguration: Sendable {
    /// Writes summaries; `nil` turns summaries off.
    public var summarizer: (any Summarizer)? = ExtractiveSummarizer()
    /// Classifies priority; `nil` turns priority off.
    public var priorityClassifier: (any PriorityClassifier)? = RuleBasedPriorityClassifier()
    /// The names and handles of an account's own person, for "sent to me" and "I wrote in this thread".
    public var me: @Sendable (AccountID) -> [String] = { _ in [] }
    /// Items older than this (by creation date) are not enriched.
    public var maximumAge: TimeInterval = 24 * 3600
    /// The least text a summary is made from, in characters.
    public var minimumTextLength = 200
    /// The most messages of a thread an enricher sees (the latest, up to the item).
    public var threadLimit = 20
    /// When to try a failed item again.
    public var backoff = Backoff(initial: 30, maximum: 6 * 3600)

    /// Creates the default configuration: the built-in extractive summarizer and rule-based priority
    /// classifier, no "me", items up to a day old, summaries from 200 characters, threads of up to 20 messages.
    public init() {}
}

/// What an enrichment pass did.
public struct EnrichmentReport: Sendable, Equatable {
    /// Items given a new summary or priority.
    public var enriched = 0
    /// Items looked at that needed nothing new (already enriched for this version of their thread).
    public var unchanged = 0
    /// Items that could not be enriched (or not fully), by reason code.
    public var skipped: [String: Int] = [:]
    /// Items whose enricher failed; they are tried again later.
    public var failed = 0
    /// The items changed, with what changed.
    public var updates: [(account: AccountID, index: String, identifier: ItemIdentifier, changed: [AttributeKey])] = []

    /// Creates an empty report: nothing done.
    public init() {}

    /// Whether two reports have the same counts and the same updates, in the same order.
    public static func == (a: EnrichmentReport, b: EnrichmentReport) -> Bool {
        a.enriched == b.enriched && a.unchanged == b.unchanged && a.skipped == b.skipped && a.failed == b.failed
            && a.updates.map { "\($0.account)/\($0.index)/\($0.identifier)/\($0.changed)" }
                == b.updates.map { "\($0.account)/\($0.index)/\($0.identifier)/\($0.changed)" }
    }
}

extension Store {
    /// Enriches every item of the signed-in accounts (or of `accounts`) that asked for it and changed
    /// since: summaries and priority, as ``EnrichmentConfiguration`` describes. Each index's delegate is
    /// told what changed (`searchableItemsDidUpdate`). `replica watch` runs this in the background;
    /// `import`, `records import` and `sync` before they exit.
    @discardableResult
    public func enrichPendingItems(accounts: [AccountID]? = nil) async throws -> EnrichmentReport {
        var report = EnrichmentReport()
        let accounts = if let accounts { accounts } else { try await signedInAccounts().map(\.id) }
        for account in accounts {
            for name in try await indexNames(for: account) {
                guard let index = try await existingIndex(named: name, account: account) else { continue }
                try await enrichPending(in: index, report: &report)
            }
        }
        return report
    }

    /// The enrichment counts of an index: enriched, waiting, failing, and skipped by reason.
    public func enrichmentStatus(of index: SearchableIndex) async throws -> EnrichmentStatus {
        let counts = try await index.read { try $0.enrichmentCounts() }
        return EnrichmentStatus(
            enriched: counts.enriched, pending: counts.pending, failing: counts.failing, skipped: counts.skipped)
    }

    private func enrichPending(in index: SearchableIndex, report: inout EnrichmentReport) async throws {
        let settings = configuration.enrichment
        let me = settings.me(index.account)
        var failedThisPass = Set<Int64>()
        while true {
            let batch = try await index.read { try $0.pendingEnrichment(limit: 32) }.filter {
                !failedThisPass.contains($0.rowID)
            }
            guard !batch.isEmpty else { return }
            var updates: [ItemUpdate] = []
            for pending in batch {
                let options = pending.item.updateListenerOptions
                guard !options.isEmpty else {
                    try await index.write(purgingExpired: false) { try $0.dropEnrichment(pending) }
                    continue
                }
                let now = index.configuration.clock()
                // What may be done now, and what the item's content asks for whatever its age: an item
                // enriched while new and rewritten by its owner a day later gets its results back.
                let plan = EnrichmentPlan(pending.item, options: options, settings: settings, now: now)
                let content = EnrichmentPlan(pending.item, options: options, settings: settings, now: nil)
                var thread: MessageThread?
                // The thread is read for what may be done now, or to recognise the content of results kept
                // from before; an old item that never had any costs no read.
                let mayRestore = pending.summary != nil || pending.priority != nil
                if plan.wantsAnything || (mayRestore && content.wantsAnything),
                    let domain = pending.item.domainIdentifier
                {
                    let created = pending.item.attributeSet.contentCreationDate
                    let items = try await index.read {
                        try $0.thread(domain: domain, upTo: created, limit: settings.threadLimit)
                    }
                    thread = MessageThread(domain: domain, messages: items.map(EnrichmentPlan.message), me: me)
                    // The item itself is the thread's last message, whatever the dates say.
                    thread?.messages.removeAll { $0.identifier == pending.item.uniqueIdentifier }
                    thread?.messages.append(EnrichmentPlan.message(pending.item))
                }
                let input = content.fingerprint(
                    thread: thread, summarizer: settings.summarizer, classifier: settings.priorityClassifier)
                let isRepeat = input == pending.input
                var summary: String?
                var priority: Bool?
                var skipped = plan.skipped
                do {
                    if isRepeat {
                        // Results kept from when the item was new are not "too old".
                        if pending.summary != nil { skipped.removeAll { $0 == "summarization.tooOld" } }
                        if pending.priority != nil { skipped.removeAll { $0 == "priority.tooOld" } }
                        // Enriched before for this very input: only put the results back if the owner
                        // rewrote the item without them.
                        let attributes = pending.item.attributeSet
                        summary = attributes.textContentSummary == nil ? pending.summary : nil
                        priority = attributes.isPriority == nil ? pending.priority : nil
                    } else {
                        if plan.wantsSummary, let thread, let summarizer = settings.summarizer {
                            summary = try await summarizer.summarize(thread)
                        }
                        if plan.wantsPriority, let thread, let classifier = settings.priorityClassifier {
                            priority = try await classifier.isPriority(thread)
                        }
                    }
                } catch {
                    failedThisPass.insert(pending.rowID)
                    report.failed += 1
                    let retry = settings.backoff.nextAttempt(afterFailures: pending.attempts + 1, now: now)
                    let message = (error as? ReplicaError)?.message ?? String(describing: type(of: error))
                    try await index.write(purgingExpired: false) {
                        try $0.recordEnrichmentFailure(pending, error: message, retry: retry)
                    }
                    configuration.events(
                        StoreEvent(
                            kind: .enrichmentFailed, account: index.account, indexName: index.name,
                            message:
                                "enriching item '\(pending.item.uniqueIdentifier)' failed (\(message)); it is tried again later"
                        ))
                    continue
                }
                let (newSummary, newPriority, reasons) = (summary, priority, skipped)
                let merged = try await index.write(purgingExpired: false) { writer in
                    try writer.applyEnrichment(
                        to: pending, input: input, summary: newSummary, priority: newPriority, skipped: reasons)
                }
                for reason in skipped { report.skipped[reason, default: 0] += 1 }
                guard let merged else { continue }  // changed meanwhile: it is still pending
                var changed: [AttributeKey] = []
                if let summary, pending.item.attributeSet.textContentSummary != summary {
                    changed.append(.textContentSummary)
                }
                if let priority, pending.item.attributeSet.isPriority != priority { changed.append(.isPriority) }
                if changed.isEmpty || isRepeat {
                    report.unchanged += 1
                } else {
                    report.enriched += 1
                    updates.append(ItemUpdate(item: merged, changedAttributes: changed))
                    report.updates.append((index.account, index.name, merged.uniqueIdentifier, changed))
                }
            }
            await index.notifyUpdated(updates)
        }
    }
}

/// What an index holds of enrichment.
public struct EnrichmentStatus: Sendable, Equatable {
    /// Items with a summary or priority from enrichment.
    public var enriched: Int
    /// Items waiting for the enrichment pass.
    public var pending: Int
    /// Waiting items whose last attempt failed.
    public var failing: Int
    /// Items not (fully) enriched, by reason code.
    public var skipped: [String: Int]

    /// An index where no item asked for enrichment.
    public static let none = EnrichmentStatus(enriched: 0, pending: 0, failing: 0, skipped: [:])
}

/// Which of an item's options apply, by Core Spotlight's rules, and why the others do not.
struct EnrichmentPlan {
    var wantsSummary = false
    var wantsPriority = false
    var skipped: [String] = []

    /// Whether either result is wanted.
    var wantsAnything: Bool { wantsSummary || wantsPriority }

    /// The plan for `item` at `now`; with `now` nil, whatever the item's age.
    init(_ item: SearchableItem, options: UpdateListenerOptions, settings: EnrichmentConfiguration, now: Date?) {
        let attributes = item.attributeSet
        let tree = attributes.contentTypeTree
        let isMessage = tree.contains(ContentType.message.rawValue)
        let isRecording = tree.contains(ContentType.voiceAudio.rawValue)
        var common: String?
        if !isMessage && !isRecording {
            common = "type"
        } else if item.domainIdentifier == nil {
            common = "noDomain"
        } else if let now,
            attributes.contentCreationDate.map({ now.timeIntervalSince($0) > settings.maximumAge }) ?? true
        {
            common = "tooOld"
        } else if isMessage && attributes.authorStrings.isEmpty {
            common = "noAuthors"
        }
        if options.contains(.summarization) {
            if let common {
                skipped.append("summarization.\(common)")
            } else if Self.text(
                of: item, isMail: tree.contains(ContentType.emailMessage.rawValue),
                isRecording: isRecording && !isMessage
            ).count
                < settings.minimumTextLength
            {
                skipped.append("summarization.tooShort")
            } else if settings.summarizer != nil {
                wantsSummary = true
            }
        }
        if options.contains(.priority) {
            if let common {
                skipped.append("priority.\(common)")
            } else if !isMessage {
                skipped.append("priority.type")
            } else if settings.priorityClassifier != nil {
                wantsPriority = true
            }
        }
    }

    /// A fingerprint of everything the results depend on (FNV-1a, 64 bits): the options taken, the
    /// enrichers, "me", and the thread's messages.
    func fingerprint(thread: MessageThread?, summarizer: (any Summarizer)?, classifier: (any PriorityClassifier)?)
        -> String
    {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ text: String) {
            for byte in text.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            hash ^= 0xff
            hash = hash &* 0x100_0000_01b3
        }
        add(wantsSummary ? summarizer?.identifier ?? "-" : "-")
        add(wantsPriority ? classifier?.identifier ?? "-" : "-")
        add(skipped.joined(separator: ","))
        for person in thread?.me ?? [] { add(person) }
        for message in thread?.messages ?? [] {
            add(message.identifier.rawValue)
            for person in message.authors + ["|"] + message.recipients + ["|"] + message.primaryRecipients {
                add(person)
            }
            add(message.date.map { String($0.timeIntervalSince1970) } ?? "")
            add(message.subject ?? "")
            add(message.text)
        }
        return String(hash, radix: 16)
    }

    /// The text enrichment reads, as Core Spotlight's table says: a recording's transcript; mail's text
    /// content, else its HTML content as text; a message's text content.
    static func text(of item: SearchableItem) -> String {
        let tree = item.attributeSet.contentTypeTree
        return text(
            of: item, isMail: tree.contains(ContentType.emailMessage.rawValue),
            isRecording: tree.contains(ContentType.voiceAudio.rawValue) && !tree.contains(ContentType.message.rawValue))
    }

    static func text(of item: SearchableItem, isMail: Bool, isRecording: Bool) -> String {
        let attributes = item.attributeSet
        if isRecording { return attributes[.transcribedTextContent]?.textValue ?? "" }
        if let text = attributes.textContent, !text.isEmpty { return text }
        if isMail, case .data(let html)? = attributes[.htmlContentData] {
            return HTMLText.plainText(String(decoding: html, as: UTF8.self))
        }
        return ""
    }

    static func message(_ item: SearchableItem) -> ThreadMessage {
        let attributes = item.attributeSet
        return ThreadMessage(
            identifier: item.uniqueIdentifier, authors: attributes.authorStrings,
            recipients: attributes.recipientStrings,
            primaryRecipients: [AttributeKey.primaryRecipients].flatMap { attributes[$0]?.strings ?? [] },
            date: attributes.contentCreationDate, subject: attributes.subject ?? attributes.title,
            text: text(of: item))
    }
}

/// Text from HTML for enrichment: tags dropped, `<br>`, `<p>` and the like made line breaks, the common
/// entities decoded, `<script>` and `<style>` left out.
enum HTMLText {
    static func plainText(_ html: String) -> String {
        var output = ""
        var index = html.startIndex
        var skipping: String?
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.split(whereSeparator: { $0 == " " || $0 == "/" }).first.map(String.init) ?? ""
                if let open = skipping {
                    if tag.hasPrefix("/" + open) { skipping = nil }
                } else if name == "script" || name == "style" {
                    skipping = name
                } else if ["br", "p", "div", "li", "tr", "h1", "h2", "h3", "blockquote"].contains(name)
                    || tag.hasPrefix("/p") || tag.hasPrefix("/div")
                {
                    output.append("\n")
                }
                index = html.index(after: close)
                continue
            }
            if skipping == nil { output.append(character) }
            index = html.index(after: index)
        }
        for (entity, text) in [
            ("&nbsp;", " "), ("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&"),
        ] {
            output = output.replacingOccurrences(of: entity, with: text)
        }
        return output
    }
}
