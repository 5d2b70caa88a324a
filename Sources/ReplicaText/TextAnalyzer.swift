import CAnalyzer

/// Turns text of any script into the words an index holds and a query looks for, on ICU.
///
/// Each word is Unicode NFKC with its case folded (full-width forms, ligatures and `ß` become plain
/// letters), its accents folded off Latin and Greek letters (as SQLite's `remove_diacritics` folds
/// Latin's), and cut by ICU's word break rules, with ICU's dictionaries for Chinese, Japanese, Thai,
/// Lao, Khmer and Burmese. Punctuation, apostrophes, symbols and emoji separate words, also inside what
/// ICU keeps as one (`don't` is `don` and `t`, as SQLite's `unicode61` makes it). For indexing, a word of
/// three or more Han, kana or Hangul characters is followed by its overlapping pairs of characters at
/// its own position (``Token/isColocated``), so that a shorter word is still found inside it: `김치` in
/// `김치를`, `新幹` in `新幹線`.
///
/// For example:
/// ```swift
/// let chinese = TextAnalyzer.tokens(in: "我们明天在北京开会").map(\.text)   // ["我们", "明天", "在", "北京", "开会"]
/// let german = TextAnalyzer.tokens(in: "Die Häuser, ＡＢＣ").map(\.text)   // ["die", "hauser", "abc"]
/// ```
///
/// Every step is linear in the text's length (a megabyte of Chinese without a space, a 100 KB word).
/// The indexes' words on both backends (FTS5's tokenizer `replica`, and the PostgreSQL store's `tsvector`s).
public enum TextAnalyzer {
    /// One word of a text.
    public struct Token: Hashable, Sendable {
        /// The word, folded.
        public var text: String
        /// Where its word lies in the text, in UTF-8 bytes.
        public var byteRange: Range<Int>
        /// Whether it stands at the position of the token before it (a pair of characters beside its word).
        public var isColocated: Bool

        /// Makes a token.
        public init(text: String, byteRange: Range<Int>, isColocated: Bool = false) {
            self.text = text
            self.byteRange = byteRange
            self.isColocated = isColocated
        }
    }

    /// What the words are for.
    public enum Purpose: Sendable {
        /// An item's text: long Han, kana and Hangul words also give their pairs of characters.
        case indexing
        /// A query's text: the words alone.
        case query
    }

    /// ICU's version and its Unicode data's (`icu 72.1, unicode 15.0`): what an index records of the
    /// analyzer that made its words.
    public static let icuVersion = String(cString: replica_analyzer_icu_version())

    /// What an index records of the analyzer that made its words: an index whose words another analyzer
    /// made (another version of this one, another ICU) has them made again.
    public static let version = "replica-analyzer 3; \(icuVersion); snowball 2"

    /// The words of `text`, in order; with `language` (Snowball's name of it or its ISO 639 code: `en`,
    /// `de`, `french`), each word of an alphabetic script is followed by its stem at its position
    /// (``Token/isColocated``) when the stem differs: `hauser` and `haus` for "Häuser" in German.
    public static func tokens(in text: String, for purpose: Purpose = .indexing, language: String? = nil) -> [Token] {
        tokens(in: text, for: purpose, language: language, throughICUOnly: false)
    }

    /// ``tokens(in:for:language:)``, with `throughICUOnly` every part of the text cut by ICU's break
    /// iterator, ASCII too (which is otherwise cut without it): the tests compare the two.
    package static func tokens(in text: String, for purpose: Purpose, language: String?, throughICUOnly: Bool)
        -> [Token]
    {
        var tokens: [Token] = []
        var text = text
        text.withUTF8 { bytes in
            withUnsafeMutablePointer(to: &tokens) { tokens in
                let options =
                    (purpose == .indexing ? REPLICA_ANALYZE_BIGRAMS : 0)
                    | (throughICUOnly ? REPLICA_ANALYZE_ICU_ONLY : 0)
                let result = replica_analyze_in(
                    bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                    bytes.count, options, language, tokens
                ) { context, flags, token, length, start, end in
                    guard let context, let token else { return 0 }
                    let tokens = context.assumingMemoryBound(to: [Token].self)
                    let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
                    tokens.pointee.append(
                        Token(
                            text: String(decoding: bytes, as: UTF8.self), byteRange: Int(start)..<Int(end),
                            isColocated: flags & REPLICA_TOKEN_COLOCATED != 0))
                    return 0
                }
                // ICU fails only out of memory or without its data, which a process cannot go on from.
                precondition(result == 0, "ICU could not analyze the text (out of memory, or its data is missing)")
            }
        }
        return tokens
    }

    /// The language `text` is written in, by CLD2: its ISO 639-1 code (`en`, `de`, `zh`, `ja`, `ko`…) and
    /// whether CLD2 is sure (a few words rarely are); `nil` when it cannot tell. Plainly English text
    /// (ASCII, eight words or more, a fifth of them English function words, three different) is English,
    /// sure, without asking CLD2, which costs about fifteen times as much (``languageDetections``).
    public static func language(of text: String) -> (code: String, isReliable: Bool)? {
        var text = text
        return text.withUTF8 { bytes -> (code: String, isReliable: Bool)? in
            var reliable: Int32 = 0
            guard
                let code = replica_detect_language(
                    bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                    bytes.count, &reliable)
            else { return nil }
            return (String(cString: code), reliable != 0)
        }
    }

    /// Runs `body` with the documents FTS5's tokenizer `replica` is given on this thread stemmed for
    /// `language` (none when `nil`): an item's text is indexed and removed within it, so that a removal
    /// makes the tokens its insert made.
    ///
    /// With `change`, the text analyzed within it is one document added to or removed from the index's
    /// vocabulary (``Vocabulary``): its tokens are counted, each once, in the thread's changes.
    @discardableResult
    public static func withDocumentLanguage<Result>(
        _ language: String?, counting change: Vocabulary.Change? = nil,
        _ body: () throws -> Result
    ) rethrows -> Result {
        let previous = replica_analyzer_document_language().map { String(cString: $0) }
        replica_analyzer_set_document_language(language)
        let counting = replica_vocabulary_counting()
        if let change {
            replica_vocabulary_count(change.rawValue)
            replica_vocabulary_next_document()
        }
        defer {
            replica_analyzer_set_document_language(previous)
            if change != nil { replica_vocabulary_count(counting) }
        }
        return try body()
    }

    /// The vocabulary of an index: how many items hold each token (a word or a stem) that a typo may be
    /// corrected to, kept by the index's writer in the transaction that writes the text, on both
    /// backends, so that a search finds the words near a typed one without reading posting lists.
    ///
    /// On SQLite the analyzer counts as it goes: the writer adds or removes each item's text within
    /// ``TextAnalyzer/withDocumentLanguage(_:counting:_:)``, FTS5's tokenizer counts the tokens it makes
    /// then, and the writer takes the changes with ``drain()`` before it commits. The PostgreSQL writer
    /// counts the lexemes of the `tsvector`s it writes and deletes, those ``holds(_:)`` keeps.
    public enum Vocabulary {
        /// Whether documents are added or removed.
        public enum Change: Int32, Sendable {
            case adding = 1
            case removing = -1
        }

        /// The fewest and most characters of a token the vocabulary holds.
        public static let shortest = Int(REPLICA_VOCABULARY_SHORTEST)
        public static let longest = Int(REPLICA_VOCABULARY_LONGEST)

        /// Whether the vocabulary holds `token`: 4 to 32 characters, no digit 0–9, and not of a script
        /// whose words are not corrected (Han, kana, Hangul, Thai, Lao, Khmer, Burmese).
        public static func holds(_ token: String) -> Bool {
            var token = token
            return token.withUTF8 { bytes in
                replica_vocabulary_holds(
                    bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) },
                    Int32(bytes.count)) != 0
            }
        }

        /// The changes counted on this thread since the last drain, each token with how many more (or,
        /// below zero, fewer) items hold it, in the order of the SQLite vocabulary's key (by first
        /// character, length in characters, then UTF-8 bytes; unsorted when out of memory); they are
        /// forgotten.
        public static func drain() -> [(token: String, change: Int64)] {
            var changes: [(token: String, change: Int64)] = []
            withUnsafeMutablePointer(to: &changes) { changes in
                replica_vocabulary_drain(changes) { context, word, length, change in
                    guard let context, let word else { return }
                    let bytes = UnsafeRawBufferPointer(start: word, count: Int(length))
                    context.assumingMemoryBound(to: [(token: String, change: Int64)].self).pointee.append(
                        (String(decoding: bytes, as: UTF8.self), change))
                }
            }
            return changes
        }

        /// Forgets the changes counted on this thread (a transaction that will not commit).
        public static func discard() {
            replica_vocabulary_drain(nil, nil)
        }
    }

    /// What an item's language is told from (``itemLanguage(given:text:)``): the start of its `columns`
    /// (title, description, body), each whole up to 512 bytes, else its first 256 characters, until 512
    /// bytes are taken; enough for CLD2 to be sure of a sentence or two without reading a long text whole.
    public static func languageSample(of columns: [String]) -> String {
        var sample = ""
        for column in columns where !column.isEmpty && sample.utf8.count < languageSampleBytes {
            if !sample.isEmpty { sample += "\n" }
            sample += column.utf8.count <= languageSampleBytes ? column : String(column.prefix(languageSampleBytes / 2))
        }
        return sample
    }

    private static let languageSampleBytes = 512

    /// The language an item's text is stemmed for, and whether it is known: the first of the languages
    /// its app gave (BCP 47 tags, `de-CH`: the language subtag, lowercased) that has forms of its words
    /// (``stems(_:)``: Snowball's 28 and Vietnamese), else the language CLD2 is sure the text is in; `nil`
    /// for one without (Chinese, Japanese, Korean, Thai…), whose words are not stemmed: that language is
    /// then `unstemmed`. A language without stems that its app gave (`ja`) is taken as one with stems
    /// would be, before CLD2 is asked. When CLD2 cannot tell (a text too short), English, not known: the
    /// index's writer then stems it for the language most of the index's items are in.
    public static func itemLanguage(given languages: [String], text: String) -> (
        code: String?, isKnown: Bool, unstemmed: String?
    ) {
        if let given = languages.lazy.compactMap(stemmingLanguage(ofTag:)).first { return (given, true, nil) }
        if let given = languages.lazy.map(languageCode(ofTag:)).first(where: isLanguageCode) {
            return (nil, true, given)
        }
        guard let detected = language(of: text), detected.isReliable else { return ("en", false, nil) }
        let code = languageCode(ofTag: detected.code)
        if stems(code) { return (code, true, nil) }
        return (nil, true, isLanguageCode(code) ? code : nil)
    }

    /// Whether `code` names one language: two or three letters (ISO 639), not one of the codes for none
    /// or many (`und`, `mul`, `zxx`, `mis`). What an app gives as a language is counted by it.
    static func isLanguageCode(_ code: String) -> Bool {
        (2...3).contains(code.utf8.count)
            && code.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
            && !["und", "mul", "zxx", "mis"].contains(code)
    }

    /// The language subtag of a BCP 47 tag (`de` of `de-CH`, `zh` of `zh-Hant`, lowercased) when the
    /// analyzer has forms of its words (``stems(_:)``); `nil` otherwise.
    public static func stemmingLanguage(ofTag tag: String) -> String? {
        let code = languageCode(ofTag: tag)
        return !code.isEmpty && stems(code) ? code : nil
    }

    /// The language subtag of a BCP 47 tag, lowercased: `de` of `de-CH`, `zh` of `zh_Hant`.
    public static func languageCode(ofTag tag: String) -> String {
        String(tag.prefix { $0 != "-" && $0 != "_" }).lowercased()
    }

    /// The stem of `word` (one word) for `language`, folded as the analyzer folds words, when it differs
    /// from the folded word: what a query searches for the word. In Vietnamese, the word as written,
    /// spelled as VNI types it (``stems(_:)``).
    public static func stem(_ word: String, language: String) -> String? {
        let tokens = tokens(in: word, for: .query, language: language)
        guard tokens.count == 2, tokens[1].isColocated else { return nil }
        return tokens[1].text
    }

    /// Whether `form` is a Vietnamese word as written beside `word`, its letters with their accents
    /// folded (``stems(_:)``): `word` and a digit for each of its marks, as VNI typing spells it (`mai1`
    /// for "mái", `viet56` for "việt").
    public static func isVietnameseForm(_ form: String, of word: String) -> Bool {
        form.count > word.count && form.hasPrefix(word)
            && form.dropFirst(word.count).allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Whether the analyzer has forms of the words of `language` (a name or an ISO 639 code) beside
    /// them: Snowball's stems (28 languages), or, in Vietnamese, whose tones tell words apart, the word
    /// as written beside the word with its accents folded, spelled as VNI typing spells it (its letters,
    /// then a digit for each mark: `mai1` for "mái"), so that no folding of it makes it another word.
    public static func stems(_ language: String) -> Bool { replica_analyzer_stems(language) != 0 }

    /// The analyzer's own steps on this thread so far: a test compares them across lengths, never times them.
    public static var steps: Int { Int(replica_analyzer_steps()) }

    /// How many texts ``language(of:)`` asked CLD2 about on this thread so far: a test tells with it which
    /// were told without.
    package static var languageDetections: Int { Int(replica_language_detections()) }
}
