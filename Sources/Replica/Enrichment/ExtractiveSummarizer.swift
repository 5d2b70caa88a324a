import Foundation

/// Summarizes a conversation with its own sentences: the ones whose words the thread repeats most.
///
/// It runs on this machine, with no model and no network, and gives the same summary for the same thread.
///
/// 1. **Sentences.** The text of each message is cut into sentences. Quoted lines (starting with `>`) and
///    the "On … wrote:" line above them are dropped, and so is a signature: everything after a line that
///    reads `-- `. A blank line ends a paragraph. A bullet line (`* fix foo`, `- bar`, `+ baz`, `• qux`,
///    `1. step`) starts an item of its own, without its marker; the indented lines under it continue it.
///    Elsewhere, a line shorter than 40 characters ("Hi Bob,", "Thanks!") ends its sentence unless the
///    next line starts with a lowercase letter; longer lines are taken as hard-wrapped and run on. Then
///    `.`, `!`, `?` and `…` followed by a space end a sentence, except after a common abbreviation
///    ("e.g.", "Dr.") or a single letter (an initial).
/// 2. **Words.** Words are runs of letters and digits, lowercased (an apostrophe inside a word stays).
///    Content words are those of two characters or more with a letter among them (not "2024" or "42")
///    that are not on a short English stop-word list, which also holds greetings and sign-offs ("hi",
///    "thanks", "regards").
/// 3. **Scores.** Each content word counts how often the thread uses it: once per use in an earlier
///    message, twice per use in the last (the message being summarized), once per use in the last
///    message's subject. A sentence scores the sum of those counts over its words, divided by its length in
///    words (at least 8, so that a short sentence does not win on one frequent word). A sentence with a
///    score then gains a small bonus, in proportion to the best score of the thread: a fifth of it when
///    it belongs to the last message, and a tenth of it divided by its place in its message (1 for the
///    first sentence, 2 for the second, …).
/// 4. **Choice.** A sentence can be taken if it has content words, at least 3 words, is not a greeting
///    or a sign-off (5 words or fewer starting with "hi", "dear", "thanks", "regards", …: "Hi Bob,",
///    "Thanks a lot!"), and scores at least a third of the best such sentence (so that a name under a
///    sign-off or a stray remark does not fill the room left). Those are taken best first (the earlier
///    on a tie) while there are fewer than `maximumSentences` and they fit in `maximumCharacters`
///    together, joined by a space; a sentence too long to fit is passed over for the next, and so is one
///    that shares half or more of its content words (by Jaccard overlap) with a sentence already taken,
///    such as a header line that every message repeats. The summary gives the chosen sentences in the
///    thread's order, each trimmed, with runs of white space made one space.
/// 5. **Fallback.** If no sentence could be taken, the summary is the best sentence that could have been
///    taken but was too long (else the best sentence; the first, when none has content words), cut at a
///    word boundary and ended with "…" when it does not fit. A thread with text never gets an empty
///    summary; when every line is quoted, the last message's whole text stands in.
///
/// For example:
/// ```swift
/// let thread = MessageThread(domain: "thread.42", messages: [
///     ThreadMessage(identifier: "mail:1", authors: ["ada@example.com"], text: """
///         Hi Bob,
///         The launch review moved to Thursday because the launch checklist is not done.
///         Thanks!
///         """),
/// ])
/// let summary = try await ExtractiveSummarizer().summarize(thread)
/// // "The launch review moved to Thursday because the launch checklist is not done."
/// ```
public struct ExtractiveSummarizer: Summarizer {
    /// The most sentences a summary holds.
    public var maximumSentences: Int
    /// The longest summary, in characters.
    public var maximumCharacters: Int

    /// A summarizer with these limits.
    ///
    /// - Parameters:
    ///   - maximumSentences: the most sentences in a summary (at least 1).
    ///   - maximumCharacters: the longest summary, in characters (at least 2).
    public init(maximumSentences: Int = 2, maximumCharacters: Int = 300) {
        self.maximumSentences = max(1, maximumSentences)
        self.maximumCharacters = max(2, maximumCharacters)
    }

    /// `replica.extractive-1`, followed by the limits when they are not the defaults, so that other
    /// limits summarize again.
    public var identifier: String {
        maximumSentences == 2 && maximumCharacters == 300
            ? "replica.extractive-1" : "replica.extractive-1:\(maximumSentences):\(maximumCharacters)"
    }

    /// The summary of `thread` as of its last message; empty only when the thread has no text.
    public func summarize(_ thread: MessageThread) async throws -> String {
        summary(of: thread)
    }

    /// How much more a use of a word in the last message counts than one in an earlier message.
    static let lastMessageWeight = 2.0
    /// The shortest length, in words, a sentence's score is divided by.
    static let lengthFloor = 8
    /// The bonus of a sentence of the last message, as a share of the thread's best score.
    static let lastMessageBonus = 0.2
    /// The bonus of a message's first sentence, as a share of the thread's best score; the n-th sentence
    /// gets 1/n of it.
    static let earlyBonus = 0.1
    /// The fewest words of a sentence that can be taken.
    static let minimumWords = 3
    /// The least score a sentence can be taken with, as a share of the best score of those that can.
    static let relativeFloor = 1.0 / 3.0
    /// The overlap (``overlap(_:_:)``) from which a sentence repeats one already taken.
    static let redundancy = 0.5
    /// The first words of greetings and sign-offs, which are not taken when the sentence is short.
    static let pleasantries: Set<String> = [
        "hi", "hello", "hey", "dear", "greetings", "morning", "thanks", "thank", "thx", "cheers", "regards",
        "best", "sincerely", "yours", "kind", "warm",
    ]

    /// One sentence of the thread and where it stands.
    struct Sentence {
        var text: String
        /// The index of its message in the thread.
        var message: Int
        /// Its place in its message, from 0.
        var position: Int
        /// Its words, lowercased.
        var words: [String]
    }

    /// The summary, synchronously (``summarize(_:)`` without the protocol's `async throws`).
    func summary(of thread: MessageThread) -> String {
        let last = thread.messages.count - 1
        var sentences: [Sentence] = []
        for (messageIndex, message) in thread.messages.enumerated() {
            for (position, text) in MessageText.sentences(of: message.text).enumerated() {
                let words = MessageText.words(of: text)
                sentences.append(Sentence(text: text, message: messageIndex, position: position, words: words))
            }
        }
        guard !sentences.isEmpty else {
            // Nothing of the thread's own: every line quoted, or a signature only.
            let texts = thread.messages.reversed().map { MessageText.collapsed($0.text) }
            let text = texts.first(where: { !$0.isEmpty }) ?? ""
            return truncated(text)
        }

        var frequency: [String: Double] = [:]
        for sentence in sentences {
            let weight = sentence.message == last ? Self.lastMessageWeight : 1
            for word in sentence.words where MessageText.isContentWord(word) {
                frequency[word, default: 0] += weight
            }
        }
        for word in MessageText.words(of: thread.current?.subject ?? "") where MessageText.isContentWord(word) {
            frequency[word, default: 0] += 1
        }

        let base: [Double] = sentences.map { sentence in
            var sum = 0.0
            for word in sentence.words where MessageText.isContentWord(word) {
                sum += frequency[word, default: 0]
            }
            return sum / Double(max(sentence.words.count, Self.lengthFloor))
        }
        let best = base.max() ?? 0
        var scores = base
        for index in sentences.indices where base[index] > 0 {
            if sentences[index].message == last { scores[index] += Self.lastMessageBonus * best }
            scores[index] += Self.earlyBonus * best / Double(sentences[index].position + 1)
        }
        let ranked = sentences.indices.sorted { a, b in
            scores[a] != scores[b] ? scores[a] > scores[b] : a < b
        }
        let candidates = ranked.filter { index in
            let words = sentences[index].words
            return base[index] > 0 && words.count >= Self.minimumWords
                && !(words.count <= 5 && Self.pleasantries.contains(words[0]))
        }
        let cutoff = Self.relativeFloor * (candidates.first.map { scores[$0] } ?? 0)

        var chosen: [Int] = []
        var chosenWords: [Set<String>] = []
        var length = 0
        for index in candidates where scores[index] >= cutoff && chosen.count < maximumSentences {
            let words = Set(sentences[index].words.filter { MessageText.isContentWord($0) })
            // A sentence that repeats one already taken (a line every message has) adds nothing.
            if chosenWords.contains(where: { Self.overlap($0, words) >= Self.redundancy }) { continue }
            let added = sentences[index].text.count + (chosen.isEmpty ? 0 : 1)
            if length + added <= maximumCharacters {
                chosen.append(index)
                chosenWords.append(words)
                length += added
            }
        }
        guard !chosen.isEmpty else { return truncated(sentences[candidates.first ?? ranked[0]].text) }
        return chosen.sorted().map { sentences[$0].text }.joined(separator: " ")
    }

    /// The share of content words two sentences have in common (Jaccard): shared words over all words.
    static func overlap(_ a: Set<String>, _ b: Set<String>) -> Double {
        let union = a.union(b).count
        return union == 0 ? 0 : Double(a.intersection(b).count) / Double(union)
    }

    /// `text` if it fits in `maximumCharacters`, otherwise its beginning cut at a word boundary, with "…".
    func truncated(_ text: String) -> String {
        guard text.count > maximumCharacters else { return text }
        let cut = text.prefix(maximumCharacters - 1)
        var end = cut.endIndex
        if let space = cut.lastIndex(where: { $0.isWhitespace }), space > cut.startIndex {
            end = space
        }
        let dangling = CharacterSet.whitespaces.union(CharacterSet(charactersIn: ",;:-–—"))
        let kept = cut[..<end].trimmingCharacters(in: dangling)
        return (kept.isEmpty ? String(cut) : kept) + "…"
    }
}

/// The plain-text scanning that the built-in enrichers share: a message's own lines, its sentences and
/// its words. No regular expressions, so that it behaves the same with every Foundation.
enum MessageText {
    /// Lines shorter than this end their sentence (outside bullets); longer ones are taken as
    /// hard-wrapped.
    static let wrapWidth = 40

    /// The lines the message's author wrote: quoted lines (`>`), the "… wrote:" line that introduces
    /// them and everything from a signature line (`-- `) on are left out.
    static func ownLines(of text: String) -> [String] {
        var kept: [String] = []
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0.isNewline }) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "--" { break }
            if trimmed.hasPrefix(">") {
                if let previous = kept.lastIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }),
                    kept[previous].trimmingCharacters(in: .whitespaces).lowercased().hasSuffix("wrote:")
                {
                    kept.removeSubrange(previous...)
                }
                continue
            }
            kept.append(String(line))
        }
        return kept
    }

    /// The sentences of a message's own text, trimmed, in order (``ExtractiveSummarizer`` gives the
    /// rules).
    static func sentences(of text: String) -> [String] {
        var segments: [String] = []
        var current = ""
        var inBullet = false
        var previousWasShort = false
        func flush() {
            let segment = collapsed(current)
            if !segment.isEmpty { segments.append(segment) }
            current = ""
        }
        for line in ownLines(of: text) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                flush()
                inBullet = false
                previousWasShort = false
                continue
            }
            if let item = bulletItem(trimmed) {
                flush()
                current = item
                inBullet = true
                previousWasShort = false
                continue
            }
            if inBullet && !(line.first?.isWhitespace ?? false) {
                // A line flush with the margin ends the item; an indented one continues it.
                flush()
                inBullet = false
            } else if !inBullet && previousWasShort && !(trimmed.first?.isLowercase ?? false) {
                flush()
            }
            current += current.isEmpty ? trimmed : " " + trimmed
            previousWasShort = trimmed.count < wrapWidth
        }
        flush()
        return segments.flatMap { splitSentences($0) }
    }

    /// The text of a bullet line without its marker, or `nil` when the line is not a bullet.
    static func bulletItem(_ line: String) -> String? {
        for marker in ["* ", "- ", "+ ", "• ", "· "] where line.hasPrefix(marker) {
            return String(line.dropFirst(marker.count))
        }
        // "1. step", "2) step"
        let digits = line.prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 3 else { return nil }
        let rest = line.dropFirst(digits.count)
        if rest.hasPrefix(". ") || rest.hasPrefix(") ") { return String(rest.dropFirst(2)) }
        return nil
    }

    /// Abbreviations after which a period does not end a sentence.
    static let abbreviations: Set<String> = [
        "e.g", "i.e", "cf", "vs", "mr", "mrs", "ms", "dr", "prof", "jr", "sr", "st", "approx", "fig",
    ]

    /// A paragraph cut at `.`, `!`, `?` and `…` followed by white space or its end.
    static func splitSentences(_ segment: String) -> [String] {
        let characters = Array(segment)
        let closers: Set<Character> = [".", "!", "?", "…", "\"", "'", ")", "]", "”", "’"]
        var sentences: [String] = []
        var start = 0
        var index = 0
        while index < characters.count {
            let character = characters[index]
            guard character == "." || character == "!" || character == "?" || character == "…" else {
                index += 1
                continue
            }
            var end = index + 1
            while end < characters.count && closers.contains(characters[end]) { end += 1 }
            if end == characters.count || characters[end].isWhitespace,
                character != "." || !endsInAbbreviation(characters, start: start, period: index)
            {
                let sentence = collapsed(String(characters[start..<end]))
                if !sentence.isEmpty { sentences.append(sentence) }
                start = end
            }
            index = end
        }
        if start < characters.count {
            let rest = collapsed(String(characters[start...]))
            if !rest.isEmpty { sentences.append(rest) }
        }
        return sentences
    }

    /// Whether the word before the period at `period` is an abbreviation or a single letter.
    static func endsInAbbreviation(_ characters: [Character], start: Int, period: Int) -> Bool {
        var wordStart = period
        while wordStart > start && !characters[wordStart - 1].isWhitespace { wordStart -= 1 }
        let word = String(characters[wordStart..<period]).lowercased()
            .trimmingCharacters(in: CharacterSet(charactersIn: "(\"'“‘"))
        if word.count == 1, word.first?.isLetter == true { return true }
        return abbreviations.contains(word)
    }

    /// `text` trimmed, with each run of white space made one space.
    static func collapsed(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// The words of `text`, lowercased: runs of letters and digits, an apostrophe between letters kept.
    static func words(of text: String) -> [String] {
        let characters = Array(text.lowercased())
        var words: [String] = []
        var word = ""
        for (index, character) in characters.enumerated() {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else if character == "'" || character == "’",
                !word.isEmpty, index + 1 < characters.count, characters[index + 1].isLetter
            {
                word.append("'")
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        return words
    }

    /// Whether a lowercased word carries meaning: two characters or more, a letter among them (numbers
    /// such as versions and dates are left out), and not a stop word.
    static func isContentWord(_ word: String) -> Bool {
        word.count >= 2 && word.contains(where: { $0.isLetter }) && !stopWords.contains(word)
    }

    /// Common English function words, with the greetings, sign-offs and reply prefixes of mail.
    static let stopWords: Set<String> = [
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "down", "during", "each", "even", "few", "for", "from",
        "further", "get", "got", "had", "has", "have", "having", "he", "her", "here", "hers", "herself",
        "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let",
        "like", "may", "me", "might", "more", "most", "much", "must", "my", "myself", "no", "nor", "not",
        "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "ours", "ourselves", "out",
        "over", "own", "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the",
        "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
        "through", "to", "too", "under", "until", "up", "us", "very", "was", "we", "were", "what", "when",
        "where", "which", "while", "who", "whom", "why", "will", "with", "would", "yet", "you", "your",
        "yours", "yourself", "yourselves",
        "i'm", "i've", "i'll", "i'd", "you're", "you've", "you'll", "you'd", "we're", "we've", "we'll",
        "it's", "that's", "there's", "let's", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't",
        "can't", "won't", "couldn't", "wouldn't", "shouldn't",
        "hi", "hello", "hey", "dear", "thanks", "thank", "thx", "cheers", "regards", "best", "sincerely",
        "ok", "okay", "yes", "yeah", "please", "re", "fw", "fwd",
    ]
}
