import ReplicaTestSupport
import ReplicaText
import Testing

/// The analyzer's words in every script, with fixed expectations: what ICU's word breaks and
/// dictionaries cut, folded as the index will hold them.
struct TextAnalyzerTests {
    static func words(_ text: String, for purpose: TextAnalyzer.Purpose = .query) -> [String] {
        TextAnalyzer.tokens(in: text, for: purpose).map(\.text)
    }

    @Test(arguments: [
        // Chinese: the dictionary's words.
        ("我们明天在北京开会讨论预算问题", ["我们", "明天", "在", "北京", "开会", "讨论", "预算", "问题"]),
        ("中国农业发展银行 安装简单", ["中国", "农业", "发展", "银行", "安装", "简单"]),
        // Japanese: kanji and kana.
        ("東京駅で新幹線の切符を買いました", ["東京", "駅", "で", "新幹線", "の", "切符", "を", "買い", "ま", "した"]),
        // Korean: a word with its particle stays whole (its pairs, for indexing, find 김치).
        ("김치를 먹었다", ["김치를", "먹었다"]),
        // Thai, Arabic, Hebrew, Hindi (its vowel signs kept in the word).
        ("ภาษาไทยง่ายนิดเดียว", ["ภาษา", "ไทย", "ง่าย", "นิด", "เดียว"]),
        ("مرحبا بالعالم", ["مرحبا", "بالعالم"]),
        ("שלום עולם", ["שלום", "עולם"]),
        ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),
        // Russian (ё is a letter of its own), Greek (accents folded, final sigma as sigma), Vietnamese.
        ("Привет, Мир! Ёлка", ["привет", "мир", "ёлка"]),
        ("Καλημέρα κόσμε, ΟΔΥΣΣΕΑΣ", ["καλημερα", "κοσμε", "οδυσσεασ"]),
        ("Tiếng Việt", ["tieng", "viet"]),
        // Emoji separate words and are none; mixed scripts split at the script.
        ("I ❤️ Swift 🚀 👩‍👩‍👧", ["i", "swift"]),
        ("Swift言語でiOSアプリ", ["swift", "言語", "で", "ios", "アプリ"]),
        // NFKC and case folding: full-width forms, ligatures, ß.
        ("ＡＢＣ１２３ ﬁle Straße", ["abc123", "file", "strasse"]),
        // Punctuation inside what ICU keeps as one word separates, as SQLite's unicode61 does.
        ("don't U.S.A foo_bar 3.14 e-mail", ["don", "t", "u", "s", "a", "foo", "bar", "3", "14", "e", "mail"]),
        ("Die Häuser wurden im Winter renoviert", ["die", "hauser", "wurden", "im", "winter", "renoviert"]),
    ])
    func wordsOfEveryScript(_ text: String, _ expected: [String]) {
        #expect(Self.words(text) == expected)
    }

    /// For indexing, a long Han, kana or Hangul word is followed by its pairs of characters at its own
    /// position and byte range, so a word the query cuts shorter is found inside it.
    @Test func longCJKWordsAlsoGiveTheirPairsForIndexing() {
        let tokens = TextAnalyzer.tokens(in: "김치를 新幹線 北京", for: .indexing)
        #expect(tokens.map(\.text) == ["김치를", "김치", "치를", "新幹線", "新幹", "幹線", "北京"])
        #expect(tokens.map(\.isColocated) == [false, true, true, false, true, true, false])
        #expect(tokens[1].byteRange == tokens[0].byteRange && tokens[4].byteRange == tokens[3].byteRange)
        #expect(Self.words("김치를 新幹線", for: .query) == ["김치를", "新幹線"], "a query's words are the words alone")
    }

    /// Byte ranges are the word's place in the original text: a highlight never cuts a character.
    @Test func rangesAreTheWordsBytesInTheText() {
        let text = "Ａlpha béta 北京"
        for token in TextAnalyzer.tokens(in: text) {
            let bytes = Array(text.utf8)[token.byteRange]
            #expect(String(validating: bytes, as: UTF8.self) != nil, "\(token)")
        }
        #expect(TextAnalyzer.tokens(in: text).map(\.byteRange) == [0..<7, 8..<13, 14..<20])
    }

    /// Bytes that are not UTF-8 are no word and break nothing around them.
    @Test func bytesThatAreNotUTF8AreNoWord() {
        let text = String(decoding: Array("alpha ".utf8) + [0xFF, 0xFE] + Array(" beta".utf8), as: UTF8.self)
        #expect(Self.words(text) == ["alpha", "beta"])
    }

    /// ASCII stretches are cut without ICU's break iterator, to the words ICU gives: random texts of
    /// ASCII letters, digits, punctuation and whitespace, with accents, combining marks, CJK, Hangul,
    /// Thai, emoji, joiners and typographic apostrophes among them, make the same tokens both ways
    /// (ranges, stems and pairs included).
    @Test func theASCIIPathCutsWhatICUCuts() {
        let pieces = [
            "a", "Z", "q", "7", "0", "x9", " ", "  ", "\n", "\t", "\r\n", ".", ",", "'", "-", "_", "@", "/", ":",
            "running", "Houses", "don't", "U.S.A", "3.14", "e-mail", "foo_bar",
            "é", "café", "e\u{301}", "\u{301}", "\u{200D}", "\u{2019}", "ß", "Ａ", "ﬁ", "北京", "我们明天", "新幹線",
            "김치를", "ภาษาไทย", "🚀", "👩‍👩‍👧", "Ωμέγα", "привет",
        ]
        var generator = SplitMix(seed: 45)
        for round in 0..<3_000 {
            let text = (0..<Int.random(in: 1...24, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            for (purpose, language) in [
                (TextAnalyzer.Purpose.indexing, Optional("en")), (.query, nil), (.indexing, "de"),
            ] {
                let fast = TextAnalyzer.tokens(in: text, for: purpose, language: language, throughICUOnly: false)
                let icu = TextAnalyzer.tokens(in: text, for: purpose, language: language, throughICUOnly: true)
                #expect(fast == icu, "round \(round): \(text.debugDescription)")
            }
        }
    }

    /// Linear in the text's length, counted in the analyzer's own steps (never timed): a megabyte costs
    /// at most 12 times 100 KB, for a run of Chinese without a space, one long word, a Hangul run (all
    /// pairs) and English, with and without stems.
    @Test(arguments: ["我们明天在北京开会讨论预算问题", "x", "김치를", "ภาษาไทยง่าย", "The launch risk is the supplier. "])
    func stepsAreLinearInTheTextsLength(_ unit: String) {
        func steps(_ bytes: Int) -> Int {
            let text = String(repeating: unit, count: bytes / unit.utf8.count + 1)
            let before = TextAnalyzer.steps
            _ = TextAnalyzer.tokens(in: text, for: .indexing)
            _ = TextAnalyzer.tokens(in: text, for: .indexing, language: "en")
            return TextAnalyzer.steps - before
        }
        let short = steps(100_000)
        let long = steps(1_000_000)
        #expect(short > 0 && long <= 12 * short, "100 KB: \(short) steps; 1 MB: \(long)")
    }

    /// With a language, each word of an alphabetic script is followed by its Snowball stem at its position
    /// when it differs; accents are folded after stemming (French stems with them); CJK words and numbers
    /// are not stemmed; a language Snowball does not know stems nothing.
    @Test func stemsStandBesideTheirWordsInTheItemsLanguage() {
        func stemmed(_ text: String, _ language: String) -> [String] {
            TextAnalyzer.tokens(in: text, for: .query, language: language).map { ($0.isColocated ? "+" : "") + $0.text }
        }
        #expect(
            stemmed("Die Häuser wurden renoviert", "de") == ["die", "hauser", "+haus", "wurden", "+wurd", "renoviert"])
        #expect(stemmed("Haus", "german") == ["haus"])
        #expect(stemmed("Les élèves étudiaient", "fr") == ["les", "+le", "eleves", "+elev", "etudiaient", "+etudi"])
        #expect(stemmed("Running connections, 2024", "en") == ["running", "+run", "connections", "+connect", "2024"])
        #expect(stemmed("красивые города", "ru") == ["красивые", "+красив", "города", "+город"])
        #expect(stemmed("我们在北京开会", "en") == ["我们", "在", "北京", "开会"])
        #expect(stemmed("running", "xx") == ["running"])
        #expect(TextAnalyzer.stems("de") && TextAnalyzer.stems("english") && !TextAnalyzer.stems("xx"))
    }

    /// Vietnamese, which Snowball does not stem: a word's tones tell it from others ("mai", tomorrow;
    /// "mái", a roof), so the word as written (spelled as VNI types it) stands beside the word with its
    /// accents folded, as a stem does; a word written without marks is one token; other languages fold
    /// the marks alone.
    @Test func vietnameseWordsKeepTheirTonesBesideTheirFoldedForm() {
        func analyzed(_ text: String, _ language: String?) -> [String] {
            TextAnalyzer.tokens(in: text, for: .indexing, language: language).map {
                ($0.isColocated ? "+" : "") + $0.text
            }
        }
        #expect(analyzed("Mái nhà ngày mai", "vi") == ["mai", "+mai1", "nha", "+nha2", "ngay", "+ngay2", "mai"])
        #expect(analyzed("Mái nhà ngày mai", nil) == ["mai", "nha", "ngay", "mai"])
        #expect(analyzed("Đông Dương Việt", "vi") == ["đong", "+đong6", "duong", "+duong77", "viet", "+viet56"])
        #expect(TextAnalyzer.stems("vi") && TextAnalyzer.stemmingLanguage(ofTag: "vi-VN") == "vi")
        #expect(TextAnalyzer.stem("mái", language: "vi") == "mai1" && TextAnalyzer.stem("mai", language: "vi") == nil)
        // Spelled in ASCII, the form as written is what FTS5 makes of it again in a query's phrase.
        #expect(analyzed("mai1", nil) == ["mai1"])
        #expect(TextAnalyzer.isVietnameseForm("mai1", of: "mai") && !TextAnalyzer.isVietnameseForm("mais", of: "mai"))
    }

    /// Stems are kept per thread by stemmer: with more languages than a thread keeps stemmers for (8), a
    /// stemmer made anew (perhaps at an old one's address) never answers with another language's stems.
    @Test func keptStemsStayRightAsLanguagesComeAndGo() {
        let words = "running houses Häuser élèves connections"
        let expected = Dictionary(
            uniqueKeysWithValues: ["en", "de", "fr"].map {
                ($0, TextAnalyzer.tokens(in: words, for: .query, language: $0))
            })
        for _ in 0..<3 {
            for language in ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "ru", "fi", "da", "no"] {
                let tokens = TextAnalyzer.tokens(in: words, for: .query, language: language)
                if let expected = expected[language] { #expect(tokens == expected, "\(language)") }
            }
        }
    }

    /// A text's language, by CLD2 (plainly English text without it): sure for a sentence or more, not
    /// for a word or two.
    @Test(arguments: [
        ("The launch risk is the supplier, and the schedule depends on their delivery next month.", "en"),
        ("Die Häuser wurden im Winter renoviert, weil das Dach undicht war und die Fenster alt waren.", "de"),
        ("Les élèves étudiaient la géographie pendant que le professeur préparait l'examen final.", "fr"),
        // CLD2's small tables take this for Galician: its full ones are linked.
        (
            "Por otra parte, se ha experimentado un resurgir en el interés popular de Tesla desde la década de los 90.",
            "es"
        ),
        ("我们明天在北京开会讨论预算问题，请大家提前准备好相关的材料和数据。", "zh"),
        ("東京駅で新幹線の切符を買いました。明日の朝早く大阪へ出発する予定です。", "ja"),
        ("김치를 먹었다. 오늘은 날씨가 좋아서 친구들과 함께 공원에 갔습니다.", "ko"),
        ("Привет, мир! Сегодня хорошая погода, и мы пошли гулять в парк с друзьями.", "ru"),
    ])
    func languagesAreDetected(_ text: String, _ code: String) throws {
        let detected = try #require(TextAnalyzer.language(of: text))
        #expect(detected.code == code && detected.isReliable, "\(detected)")
    }

    /// Plainly English text is told without CLD2: ASCII, eight words or more, a fifth of them English
    /// function words, three different. Another language written in ASCII letters (with its own words
    /// that English has too: "is", "in", "was", "an"), a word outside ASCII, a shorter text or one that
    /// repeats two function words is still CLD2's to tell.
    @Test func plainEnglishIsToldWithoutCLD2() throws {
        let english = [
            "The launch risk is the supplier, and the schedule depends on their delivery next month.",
            "The staff meet when they have a break from their work, which is not often.",
        ]
        for text in english {
            let asked = TextAnalyzer.languageDetections
            let detected = try #require(TextAnalyzer.language(of: text))
            #expect(detected.code == "en" && detected.isReliable, "\(detected)")
            #expect(TextAnalyzer.languageDetections == asked, "CLD2 was asked about \"\(text)\"")
        }
        let others: [(String, String)] = [
            (
                "Het rapport is af en het is naar de klant gestuurd, die het nu leest en er zijn oordeel over geeft.",
                "nl"
            ),
            ("Het is in de stad van de oude haven, waar de schepen in de winter liggen en wachten.", "nl"),
            ("Ini adalah buku yang saya beli di pasar pada hari Minggu bersama teman saya.", "id"),
            ("Die Fenster waren alt, und das Dach war undicht, als wir im Winter in das Haus kamen.", "de"),
            // A fifth of its words, three different, would be English ones if "was", "in" and "an" were.
            ("Was ist in dem Haus, was ist an dem Haus, und was ist in der Stadt so anders?", "de"),
            ("The data, the data, the data and the data again.", "en"),
            ("The café is where the staff meet when they have a break from their work.", "en"),
            ("Staff meet when they have a break.", "en"),
        ]
        for (text, code) in others {
            let asked = TextAnalyzer.languageDetections
            let detected = TextAnalyzer.language(of: text)
            #expect(detected?.code == code, "\(String(describing: detected))")
            #expect(TextAnalyzer.languageDetections == asked + 1, "CLD2 was not asked about \"\(text)\"")
        }
    }

    @Test func aWordOrTwoIsNotSureOfItsLanguage() {
        #expect(TextAnalyzer.language(of: "Haus").map(\.isReliable) != true)
        #expect(TextAnalyzer.language(of: "") == nil || TextAnalyzer.language(of: "")?.isReliable == false)
    }

    @Test func theICUVersionIsKnown() {
        #expect(TextAnalyzer.icuVersion.hasPrefix("icu ") && TextAnalyzer.icuVersion.contains("unicode "))
    }
}
