import ReplicaText
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct FTSPatternTests {
    @Test func quotesEveryWordSoOperatorsAreText() throws {
        let text = "launch AND risk OR NOT NEAR(a b) title:x"
        // "NEAR(a" is the word "NEAR" (and "a" beside it), "title:x" the word "title" (and "x" beside it).
        #expect(
            try FTSPattern(text: text, requiringAll: true, language: nil).matchExpression
                == #""launch" AND "and" AND "risk" AND "or" AND "not" AND "near" AND "b" AND "title""#)
        // Ranked (the default): "AND", "OR", "NOT" are function words here, and left out of the candidates.
        #expect(
            try FTSPattern(text: text, language: nil).matchExpression
                == #""launch" OR "risk" OR "near" OR "b" OR "title""#)
    }

    @Test func keepsBalancedPhrasesAndPrefixes() throws {
        let pattern = try FTSPattern(text: #""launch risk" supp* "a b"*"#, language: nil)
        #expect(
            pattern.terms == [
                .phrase("launch risk", prefix: false), .word("supp", prefix: true), .phrase("a b", prefix: true),
            ])
        #expect(pattern.matchExpression == #""launch risk" OR "supp" * OR "a b" *"#)
    }

    /// Found by fuzzing (Fuzz/corpus/query): a quote followed by a combining mark is one Character, so a
    /// Character-level escape left it undoubled and FTS5 read the rest as its own syntax.
    @Test func aQuoteWithACombiningMarkIsStillEscaped() throws {
        let text = "`**\"\u{035F}\u{0562}**d\u{0}*\""
        for all in [false, true] {
            let expression = try FTSPattern(text: text, requiringAll: all, language: nil).matchExpression
            let quotes = expression.unicodeScalars.filter { $0 == "\"" }.count
            #expect(quotes % 2 == 0, "\(expression.debugDescription)")
            #expect(!expression.unicodeScalars.contains("\u{0}"))
        }
    }

    @Test func dropsAnUnbalancedQuote() throws {
        #expect(
            try FTSPattern(text: #"say "hello"#, requiringAll: true, language: nil).matchExpression
                == #""say" AND "hello""#
        )
    }

    @Test func joinsMeaningfulWordsWithOrUnlessEveryWordIsRequired() throws {
        #expect(try FTSPattern(text: "apple banana", language: nil).matchExpression == #""apple" OR "banana""#)
        #expect(
            try FTSPattern(text: "apple banana", requiringAll: true, language: nil).matchExpression
                == #""apple" AND "banana""#)
    }

    @Test func functionWordsNeverDecideAMatchOnTheirOwn() throws {
        let question = try FTSPattern(text: "Which stem cell induction methods avoid c-Myc?", language: nil)
        #expect(question.matchExpression == #""stem" OR "cell" OR "induction" OR "methods" OR "avoid" OR "myc""#)
        #expect(question.nearExpression == #"NEAR("stem" "cell" "induction" "methods" "avoid" "c myc", 16)"#)
        // A text of nothing but function words searches for them, rather than for nothing.
        #expect(
            try FTSPattern(text: "to be or not to be", language: nil).matchExpression
                == #""to" OR "be" OR "or" OR "not""#)
        // A phrase or a prefix is never a function word.
        #expect(try FTSPattern(text: #""the who" the*"#, language: nil).matchExpression == #""the who" OR "the" *"#)
    }

    /// A typed word whose parts are joined by punctuation is its parts, as the index's tokenizer splits
    /// the text; parts of one letter and function words ("'s", "of") only count side by side with the others,
    /// which are also searched next to each other (for the ranking's bonus).
    /// Typed without spaces, a Chinese or Japanese question is a sentence, not a word split at punctuation:
    /// a number in it does not make it one phrase.
    @Test func aSentenceWithoutSpacesIsItsWordsEvenWithANumber() throws {
        let pattern = try FTSPattern(text: "2015年黑豹队的防守", language: nil)
        #expect(pattern.terms.allSatisfy { if case .phrase = $0 { false } else { true } }, "\(pattern.terms)")
        #expect(
            pattern.terms.contains(.word("2015", prefix: false)) && pattern.terms.contains(.word("防守", prefix: false)))
        #expect(pattern.groups.allSatisfy { $0.joined == nil })
        // A code in Latin letters stays one thing.
        #expect(try FTSPattern(text: "v1.2.3", language: nil).terms == [.phrase("v1 2 3", prefix: false)])
    }

    /// A long Chinese, Japanese or Korean word is searched as itself and by its pairs of characters; the
    /// pairs weigh ``FTSPattern/pairWeight`` in BM25, unless one was typed as a word of its own too, and
    /// 1 where every word is required (the pairs alone stand for the word).
    @Test func thePairsOfALongWordWeighLessThanTheWord() throws {
        let pattern = try FTSPattern(text: "新幹線の切符", language: nil)
        let weights = Dictionary(
            zip(pattern.meaningfulTerms.map(\.text), pattern.phraseWeights), uniquingKeysWith: { $1 })
        #expect(pattern.meaningfulTerms.count == pattern.phraseWeights.count)
        #expect(
            weights == ["新幹線": 1, "新幹": FTSPattern.pairWeight, "幹線": FTSPattern.pairWeight, "切符": 1],
            "\(pattern.meaningfulTerms)")
        let typedToo = try FTSPattern(text: "新幹線 幹線", language: nil)
        #expect(
            Dictionary(zip(typedToo.meaningfulTerms.map(\.text), typedToo.phraseWeights), uniquingKeysWith: { $1 })
                == ["新幹線": 1, "新幹": FTSPattern.pairWeight, "幹線": 1])
        #expect(try FTSPattern(text: "新幹線の切符", requiringAll: true, language: nil).phraseWeights.allSatisfy { $0 == 1 })
    }

    @Test func wordsJoinedByPunctuationAreTheirWords() throws {
        let joined = try FTSPattern(
            text: "title:sourdough garage/tyr* sourdough\u{2019}s state-of-the-art", language: nil)
        #expect(
            joined.terms == [
                .word("title", prefix: false), .word("sourdough", prefix: false), .word("garage", prefix: false),
                .word("tyr", prefix: true), .word("sourdough", prefix: false), .word("state", prefix: false),
                .word("art", prefix: false),
            ])
        #expect(joined.matchExpression == #""title" OR "sourdough" OR "garage" OR "tyr" * OR "state" OR "art""#)
        #expect(
            joined.nearExpression == #"NEAR("title sourdough" "garage tyr" * "sourdough s" "state of the art", 12)"#)
        #expect(
            try FTSPattern(text: "garage/tyres", requiringAll: true, language: nil).matchExpression
                == #""garage" AND "tyres""#)
        // One word joined by punctuation: its parts side by side are the bonus.
        #expect(try FTSPattern(text: "garage/tyres", language: nil).nearExpression == #""garage tyres""#)
        #expect(try FTSPattern(text: "sourdough's", language: nil).nearExpression == #""sourdough s""#)
        #expect(try FTSPattern(text: "sourdough", language: nil).nearExpression == nil)
        // A contraction that is a function word stays one, whichever apostrophe it is written with.
        #expect(try FTSPattern(text: "don't don\u{2019}t sourdough", language: nil).matchExpression == #""sourdough""#)
        // A word with a digit, or with nothing but single letters and function words, stays whole.
        #expect(
            try FTSPattern(text: "INV-2024-0917 U.S.A. to-do", language: nil).terms == [
                .phrase("inv 2024 0917", prefix: false),
                .phrase("u s a", prefix: false), .phrase("to do", prefix: false),
            ])
        // A quoted phrase is a phrase, whatever joins its words.
        #expect(
            try FTSPattern(text: #""garage/tyres""#, language: nil).terms == [.phrase("garage/tyres", prefix: false)])
    }

    /// A word with a stem of its own is searched as typed or by its stem, at one place, also where every
    /// word is required; where only a phrase goes (`NEAR`), by its stem alone.
    @Test func aWordIsSearchedAsTypedOrByItsStem() throws {
        let pattern = try FTSPattern(text: "houses garden", language: "en")
        #expect(pattern.terms == [.forms(word: "houses", stems: ["hous"]), .word("garden", prefix: false)])
        #expect(pattern.matchExpression == #"("houses" OR "hous") OR "garden""#)
        #expect(pattern.nearExpression == #"NEAR("hous" "garden", 8)"#)
        #expect(
            try FTSPattern(text: "houses garden", requiringAll: true, language: "en").matchExpression
                == #"("houses" OR "hous") AND "garden""#)
        // Stemmed for several languages, a required word is any of its forms: its stem in each of them.
        let both = try FTSPattern(text: "universidades", requiringAll: true, language: "en", moreLanguages: ["es"])
        #expect(both.terms == [.forms(word: "universidades", stems: ["universidad", "univers"])])
        #expect(both.matchExpression == #"("universidades" OR "universidad" OR "univers")"#)
        // A prefix is never stemmed; a function word is known by the word typed, not by its stem ("doe").
        #expect(try FTSPattern(text: "hous*", language: "en").terms == [.word("hous", prefix: true)])
        #expect(
            try FTSPattern(text: "does houses", language: "en").meaningfulTerms == [
                .forms(word: "houses", stems: ["hous"])
            ])
    }

    /// A word is stemmed as typed, before its accents are folded, as the index stems an item's words: the
    /// stem a query searches for is the one the index holds beside the same word (Spanish "también" stems
    /// to "tambien", its folded form "tambien" to "tambi", which no item holds).
    @Test(arguments: [
        ("es", "también consiguió perdió había quién detrás"), ("tr", "başını güvenliği köşe yükseği"),
        ("fr", "écoutées élèves général"), ("de", "Häuser Straßen größten"),
    ])
    func aWordIsStemmedAsTypedBeforeItsAccentsAreFolded(language: String, words: String) throws {
        for word in words.split(separator: " ").map(String.init) {
            let indexed = Set(TextAnalyzer.tokens(in: word, for: .indexing, language: language).map(\.text))
            let searched = try FTSPattern(text: word, language: language).terms.flatMap(\.alternatives).map(\.text)
            #expect(Set(searched).isSubset(of: indexed), "\(word): searched \(searched), indexed \(indexed)")
        }
    }

    /// The function words of the query's languages count only beside its other words, as English's do:
    /// Spanish "la" and "de", German "die", Greek "και", Hindi "का", each folded as the index folds it.
    @Test func theFunctionWordsOfTheQuerysLanguagesCountOnlyBesideTheOthers() throws {
        for (language, text, meaningful) in [
            ("es", "la capital de Francia", ["capital", "francia"]),
            ("de", "die Häuser im Winter", ["hauser", "winter"]),
            ("el", "η πρωτεύουσα και η Αθήνα", ["πρωτευουσα", "αθηνα"]),
            ("hi", "भारत का इतिहास", ["भारत", "इतिहास"]),
        ] {
            let pattern = try FTSPattern(text: text, language: nil, functionWords: FunctionWords(languages: [language]))
            #expect(pattern.meaningfulTerms.map(\.text) == meaningful, "\(language)")
            // Without the language's list, its function words decide a match like any word.
            let english = try FTSPattern(text: text, language: nil)
            #expect(english.meaningfulTerms.count > meaningful.count, "\(language)")
        }
        // Chinese, Japanese, Korean and Thai question words and particles count only beside the others in
        // every query, as English's do: a question typed without spaces is never told apart by CLD2.
        #expect(try FTSPattern(text: "北京在哪里", language: nil).meaningfulTerms.map(\.text) == ["北京"])
        let japanese = try FTSPattern(text: "東京はどこですか", language: nil).meaningfulTerms.map(\.text)
        #expect(japanese == ["東京"], "\(japanese)")
        // A long Korean word is searched with its pairs; a function word's pairs go with it.
        let korean = try FTSPattern(text: "서울의 인구는 어떻게 변했나", language: nil).meaningfulTerms.map(\.text)
        #expect(korean == ["서울의", "서울", "울의", "인구는", "인구", "구는", "변했나", "변했", "했나"], "\(korean)")
        let chinese = try FTSPattern(text: "为什么北京下雪", language: nil).meaningfulTerms.map(\.text)
        #expect(!chinese.contains("为什") && chinese.contains("北京"), "\(chinese)")
        // เมื่อไหร่ ("when") is cut by ICU's dictionary into two words, both listed.
        let thai = try FTSPattern(text: "ประชากรของกรุงเทพมีเท่าไร เมื่อไหร่", language: nil).meaningfulTerms.map(\.text)
        #expect(thai == ["ประชากร", "กรุงเทพ"], "\(thai)")
        // A Vietnamese word typed with its tones is no English function word, though folded it reads as one.
        #expect(try FTSPattern(text: "thể thao", language: "vi").meaningfulTerms.map(\.text) == ["the", "thao"])
        #expect(try FTSPattern(text: "the thao", language: "vi").meaningfulTerms.map(\.text) == ["thao"])
        // A query of function words alone is still searched by them.
        let only = try FTSPattern(text: "de la", language: nil, functionWords: FunctionWords(languages: ["es-MX"]))
        #expect(only.meaningfulTerms.map(\.text) == ["de", "la"] && !only.hasMeaningfulWord)
    }

    /// A query's languages: those given; else the one CLD2 tells, with the index's after it when most
    /// of its items are in another (a Spanish question taken for English still finds Spanish forms);
    /// else the index's; English in an index with none.
    @Test func aQueryIsStemmedForTheLanguageToldAndTheIndexsWhenItHasNoneOfIt() throws {
        let sentence = "The connections were closed before the supplier launched the batteries"
        func languages(_ query: SearchQuery, index: [String]) throws -> [String] {
            let pattern = try query.validatedPattern(indexLanguages: { index })
            return try #require(pattern).functionWords.languages
        }
        #expect(try languages(SearchQuery(sentence), index: ["es"]) == ["en", "es"])
        #expect(try languages(SearchQuery(sentence), index: ["en", "es"]) == ["en"])
        #expect(try languages(SearchQuery(sentence), index: ["es", "en", "de"]) == ["en", "es", "de"])
        #expect(try languages(SearchQuery(sentence), index: []) == ["en"])
        #expect(try languages(SearchQuery("batteries"), index: ["de", "en"]) == ["de", "en"])
        #expect(try languages(SearchQuery("batteries"), index: []) == ["en"])
        var given = SearchQuery(sentence)
        given.languages = ["fr"]
        #expect(try languages(given, index: ["es"]) == ["fr"])
    }

    /// The language a query is in, for whether to search by meaning too: the one told, a sentence's as
    /// CLD2 tells it, a text in another script than Latin by its script; not a few words of Latin letters.
    @Test func theLanguageOfAQueryForMeaning() {
        #expect(SearchQuery("北京在哪里开会").languageForMeaning() == "zh")
        #expect(SearchQuery("東京駅で新幹線の切符を買いました").languageForMeaning() == "ja")
        #expect(SearchQuery("Где находится ближайшая станция метро").languageForMeaning() == "ru")
        // A short question CLD2 cannot tell (it says English): not English, whatever it is.
        #expect(SearchQuery("夏季剧院在哪里？").languageForMeaning() == "und")
        // Latin letters: a sentence of six words or more; CLD2 is sure this one is Latin.
        #expect(SearchQuery("Can I delete Python?").languageForMeaning() == nil)
        #expect(SearchQuery("batteries").languageForMeaning() == nil)
        #expect(SearchQuery("Häuser Winter").languageForMeaning() == nil)
        #expect(
            SearchQuery("¿Dónde se encuentran las universidades más antiguas de España?").languageForMeaning() == "es")
        var told = SearchQuery("batteries")
        told.languages = ["de-CH"]
        #expect(told.languageForMeaning() == "de")
        #expect(SearchQuery(nil).languageForMeaning() == nil)
    }

    @Test(arguments: [#""( )""#, "* ^ : ( ) \" -", "", "   ", "…", "🙂"])
    func refusesTextWithNothingToSearch(text: String) {
        #expect {
            try FTSPattern(text: text, language: nil)
        } throws: { error in
            let error = error as? ReplicaError
            return error?.code == .invalidQuery && error?.message.contains("no words") == true
                && error?.message.lowercased().contains("fts") == false
        }
    }

    @Test func limitsTheNumberOfWords() {
        let many = (0..<65).map { "w\($0)" }.joined(separator: " ")
        #expect(throws: ReplicaError.self) { try FTSPattern(text: many, language: nil) }
    }
}
