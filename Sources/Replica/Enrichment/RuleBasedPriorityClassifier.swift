import Foundation

/// Decides priority with a few weighted rules about who wrote a message, to whom, and what it asks.
///
/// It runs on this machine, with no model and no network. Each rule that holds for the thread's last
/// message adds its weight, and the message is a priority when the sum reaches `threshold` (2 by
/// default: two good signs, or one strong sign and one more). ``score(_:)`` gives the sum and the codes
/// of the rules that held, in this order:
///
/// | code | weight | holds when |
/// | --- | --- | --- |
/// | `sentToMe` | +1.5 | one of `me` is a primary (To:) recipient, or a recipient among 3 or fewer |
/// | `conversation` | +1.0 | the sender, or one of `me`, wrote an earlier message of the thread |
/// | `question` | +1.0 | it asks the reader: a `?` ends a sentence, or "can you", "could you", "would you", "please" |
/// | `deadline` | +1.5 | it names a deadline or an urgency (below) |
/// | `automated` | −2.0 | a program or a mailing list sent it (below) |
/// | `manyRecipients` | −1.0 | it went to more than 10 recipients |
///
/// A deadline or urgency is one of the words "urgent", "urgently", "asap", "today", "tonight",
/// "tomorrow", "deadline", "overdue", "eod", "security", "critical"; "due" (but not "due to"); "end of
/// day"; "by" before a weekday ("by Friday"); "before" before a weekday, a month, a number, "noon",
/// "midnight", "tomorrow" or "tonight" ("before May 3", "before 5pm"); "high priority"; "urgency=high",
/// "urgency=critical" or "urgency=emergency" (the header of a Debian upload); or a CVE identifier
/// ("CVE-2024-…"). A message is automated when an author's name or handle holds "noreply", "no-reply",
/// "donotreply", "do-not-reply", "notifications", "mailer-daemon" or "newsletter", or its text holds
/// "unsubscribe".
///
/// Matching ignores case and works on whole words (runs of letters and digits), so "due" does not match
/// "residue" and "today" does not match "todays-build"; it reads the last message's subject and its own
/// text: quoted lines (`>`) and the signature (after `-- `) are left out, except that "unsubscribe" is
/// looked for in the whole text, where mailing lists put it. Names and handles are compared without case,
/// and "Ada <ada@example.com>" stands for both "ada" and "ada@example.com". Recipients are counted by
/// handle (email address, phone number) when the message gives handles, by name otherwise.
///
/// For example:
/// ```swift
/// let thread = MessageThread(domain: "thread.42", messages: [
///     ThreadMessage(identifier: "mail:1", authors: ["bob@example.com"], text: "The report is in."),
///     ThreadMessage(identifier: "mail:2", authors: ["bob@example.com"], primaryRecipients: ["ada@example.com"],
///                   text: "Can you sign the report by Friday?"),
/// ], me: ["ada@example.com"])
/// let classifier = RuleBasedPriorityClassifier()
/// classifier.score(thread)                      // (5.0, ["sentToMe", "conversation", "question", "deadline"])
/// try await classifier.isPriority(thread)       // true
/// ```
public struct RuleBasedPriorityClassifier: PriorityClassifier {
    /// The least score of a priority message.
    public var threshold: Double

    /// A classifier that calls a message a priority from `threshold` on.
    ///
    /// - Parameters:
    ///   - threshold: the least score of a priority message.
    public init(threshold: Double = 2.0) {
        self.threshold = threshold
    }

    /// `replica.rules-1`, followed by the threshold when it is not the default, so that another
    /// threshold classifies again.
    public var identifier: String {
        threshold == 2.0 ? "replica.rules-1" : "replica.rules-1:threshold=\(threshold)"
    }

    /// Whether the thread's last message scores at least `threshold`; `false` for a thread without
    /// messages.
    public func isPriority(_ thread: MessageThread) async throws -> Bool {
        guard !thread.messages.isEmpty else { return false }
        return score(thread).score >= threshold
    }

    /// The score of the thread's last message and the codes of the rules that made it, in the order of
    /// the table above.
    ///
    /// For example:
    /// ```swift
    /// let (score, reasons) = RuleBasedPriorityClassifier().score(thread)
    /// // 2.5, ["conversation", "deadline"]
    /// ```
    ///
    /// - Parameters:
    ///   - thread: the conversation; its last message is the one scored.
    /// - Returns: the sum of the weights of the rules that hold, and their codes; `(0, [])` for a
    ///   thread without messages.
    public func score(_ thread: MessageThread) -> (score: Double, reasons: [String]) {
        guard let current = thread.current else { return (0, []) }
        var score = 0.0
        var reasons: [String] = []
        func add(_ code: String, _ weight: Double) {
            score += weight
            reasons.append(code)
        }

        let me = Self.identities(thread.me)
        let recipients = Self.recipientCount(current)
        let earlierAuthors = Self.identities(thread.messages.dropLast().flatMap { $0.authors })
        let ownText = MessageText.ownLines(of: current.text).joined(separator: "\n")
        let words = MessageText.words(of: (current.subject ?? "") + "\n" + ownText)

        if !me.isEmpty {
            let direct = !me.isDisjoint(with: Self.identities(current.primaryRecipients))
            let everyone = Self.identities(current.recipients + current.primaryRecipients)
            let few = recipients <= 3 && !me.isDisjoint(with: everyone)
            if direct || few { add("sentToMe", Self.sentToMeWeight) }
        }
        let sender = Self.identities(current.authors)
        if !earlierAuthors.isDisjoint(with: sender) || !earlierAuthors.isDisjoint(with: me) {
            add("conversation", Self.conversationWeight)
        }
        if Self.hasQuestionMark(ownText) || Self.asks(MessageText.words(of: ownText)) {
            add("question", Self.questionWeight)
        }
        if Self.namesDeadline(words) || Self.hasCVE((current.subject ?? "") + "\n" + ownText) {
            add("deadline", Self.deadlineWeight)
        }
        if Self.isAutomated(current) { add("automated", Self.automatedWeight) }
        if recipients > Self.manyRecipients { add("manyRecipients", Self.manyRecipientsWeight) }
        return (score, reasons)
    }

    static let sentToMeWeight = 1.5
    static let conversationWeight = 1.0
    static let questionWeight = 1.0
    static let deadlineWeight = 1.5
    static let automatedWeight = -2.0
    static let manyRecipientsWeight = -1.0
    /// More recipients than this make a message a broadcast.
    static let manyRecipients = 10

    // MARK: People

    /// Lowercased names and handles; "Name <handle>" gives the whole string, the name and the handle.
    static func identities(_ strings: [String]) -> Set<String> {
        var result = Set<String>()
        for string in strings {
            let lowered = string.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
            guard !lowered.isEmpty else { continue }
            result.insert(lowered)
            if lowered.hasPrefix("mailto:") { result.insert(String(lowered.dropFirst(7))) }
            if let open = lowered.firstIndex(of: "<"), let close = lowered[open...].firstIndex(of: ">") {
                let address = lowered[lowered.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
                let quotes = CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"'"))
                let name = lowered[..<open].trimmingCharacters(in: quotes)
                if !address.isEmpty { result.insert(address) }
                if !name.isEmpty { result.insert(name) }
            }
        }
        return result
    }

    /// The handle a name-or-handle string gives: the part in angle brackets, an email address or a phone
    /// number; `nil` for a plain name.
    static func handle(in string: String) -> String? {
        let lowered = string.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
        if let open = lowered.firstIndex(of: "<"), let close = lowered[open...].firstIndex(of: ">") {
            let inner = lowered[lowered.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            if !inner.isEmpty { return inner }
        }
        if lowered.contains("@") { return lowered }
        let digits = lowered.filter { $0.isASCII && $0.isNumber }
        let phoneCharacters = lowered.allSatisfy { ($0.isASCII && $0.isNumber) || " +-().".contains($0) }
        if digits.count >= 5 && phoneCharacters { return digits }
        return nil
    }

    /// How many people a message went to: distinct handles when it names any, distinct names otherwise.
    static func recipientCount(_ message: ThreadMessage) -> Int {
        var handles = Set<String>()
        var names = Set<String>()
        for string in message.recipients + message.primaryRecipients {
            if let address = Self.handle(in: string) {
                handles.insert(address)
            } else {
                let name = string.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
                if !name.isEmpty { names.insert(name) }
            }
        }
        return handles.isEmpty ? names.count : handles.count
    }

    /// Handle fragments of senders that are programs or mailing lists.
    static let automatedMarkers = [
        "noreply", "no-reply", "donotreply", "do-not-reply", "notifications",
        "mailer-daemon", "newsletter",
    ]

    /// Whether a program or a mailing list sent the message.
    static func isAutomated(_ message: ThreadMessage) -> Bool {
        let authors = message.authors.map { $0.lowercased() }
        for author in authors where automatedMarkers.contains(where: { author.contains($0) }) {
            return true
        }
        return message.text.lowercased().contains("unsubscribe")
    }

    // MARK: Text

    /// Whether a `?` ends a sentence: followed by white space, a closing quote or bracket, or the end.
    static func hasQuestionMark(_ text: String) -> Bool {
        let characters = Array(text)
        for index in characters.indices where characters[index] == "?" {
            var next = index + 1
            while next < characters.count && "?!\"')]”’".contains(characters[next]) { next += 1 }
            if next == characters.count || characters[next].isWhitespace { return true }
        }
        return false
    }

    /// Whether the words ask the reader for something: "please", "can you", "could you", "would you".
    static func asks(_ words: [String]) -> Bool {
        for (index, word) in words.enumerated() {
            if word == "please" { return true }
            if ["can", "could", "would"].contains(word), index + 1 < words.count, words[index + 1] == "you" {
                return true
            }
        }
        return false
    }

    static let urgentWords: Set<String> = [
        "urgent", "urgently", "asap", "today", "tonight", "tomorrow", "deadline", "deadlines", "overdue",
        "eod", "security", "critical",
    ]
    static let weekdays: Set<String> = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri",
    ]
    static let months: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
        "dec",
    ]

    /// Whether lowercased words name a deadline or urgency (the list in the type's documentation).
    static func namesDeadline(_ words: [String]) -> Bool {
        for (index, word) in words.enumerated() {
            let next = index + 1 < words.count ? words[index + 1] : ""
            let afterNext = index + 2 < words.count ? words[index + 2] : ""
            if urgentWords.contains(word) { return true }
            switch word {
            case "due" where next != "to":
                return true
            case "end" where next == "of" && afterNext == "day":
                return true
            case "by" where weekdays.contains(next):
                return true
            case "before"
            where weekdays.contains(next) || months.contains(next)
                || ["noon", "midnight", "tomorrow", "tonight", "eod"].contains(next)
                || (next.first?.isNumber ?? false):
                return true
            case "high" where next == "priority":
                return true
            case "urgency" where ["high", "critical", "emergency"].contains(next):
                return true
            default:
                continue
            }
        }
        return false
    }

    /// Whether the text holds a CVE identifier: "cve-" at a word start, followed by a digit.
    static func hasCVE(_ text: String) -> Bool {
        let characters = Array(text.lowercased())
        let prefix: [Character] = ["c", "v", "e", "-"]
        guard characters.count > prefix.count else { return false }
        for start in 0..<(characters.count - prefix.count) {
            guard Array(characters[start..<start + prefix.count]) == prefix else { continue }
            let atWordStart = start == 0 || !(characters[start - 1].isLetter || characters[start - 1].isNumber)
            if atWordStart && characters[start + prefix.count].isNumber { return true }
        }
        return false
    }
}
