import Testing
@testable import Replica
@testable import ReplicaIndex
@testable import ReplicaCore

@Suite struct FTSPatternTests {
    @Test func quotesEveryWordSoOperatorsAreText() throws {
        let text = "launch AND risk OR NOT NEAR(a b) title:x"
        #expect(try FTSPattern(text: text, requiringAll: true).matchExpression == #""launch" "AND" "risk" "OR" "NOT" "NEAR(a" "b)" "title:x""#)
        // Ranked (the default): "AND", "OR", "NOT" are function words here, and left out of the candidates.
        #expect(try FTSPattern(text: text).matchExpression == #""launch" OR "risk" OR "NEAR(a" OR "b)" OR "title:x""#)
    }

    @Test func keepsBalancedPhrasesAndPrefixes() throws {
        let pattern = try FTSPattern(text: #""launch risk" supp* "a b"*"#)
        #expect(pattern.terms == [.phrase("launch risk", prefix: false), .word("supp", prefix: true), .phrase("a b", prefix: true)])
        #expect(pattern.matchExpression == #""launch risk" OR "supp" * OR "a b" *"#)
    }

    /// Found by fuzzing (Fuzz/corpus/query): a quote followed by a combining mark is one Character, so a
    /// Character-level escape left it undoubled and FTS5 read the rest as its own syntax.
    @Test func aQuoteWithACombiningMarkIsStillEscaped() throws {
        let text = "`**\"\u{035F}\u{0562}**d\u{0}*\""
        for all in [false, true] {
            let expression = try FTSPattern(text: text, requiringAll: all).matchExpression
            let quotes = expression.unicodeScalars.filter { $0 == "\"" }.count
            #expect(quotes % 2 == 0, "\(expression.debugDescription)")
            #expect(!expression.unicodeScalars.contains("\u{0}"))
        }
    }

    @Test func dropsAnUnbalancedQuote() throws {
        #expect(try FTSPattern(text: #"say "hello"#, requiringAll: true).matchExpression == #""say" "hello""#)
    }

    @Test func joinsMeaningfulWordsWithOrUnlessEveryWordIsRequired() throws {
        #expect(try FTSPattern(text: "apple banana").matchExpression == #""apple" OR "banana""#)
        #expect(try FTSPattern(text: "apple banana", requiringAll: true).matchExpression == #""apple" "banana""#)
    }

    @Test func functionWordsNeverDecideAMatchOnTheirOwn() throws {
        let question = try FTSPattern(text: "Which stem cell induction methods avoid c-Myc?")
        #expect(question.matchExpression == #""stem" OR "cell" OR "induction" OR "methods" OR "avoid" OR "c-Myc?""#)
        #expect(question.nearExpression == #"NEAR("stem" "cell" "induction" "methods" "avoid" "c-Myc?", 16)"#)
        // A text of nothing but function words searches for them, rather than for nothing.
        #expect(try FTSPattern(text: "to be or not to be").matchExpression == #""to" OR "be" OR "or" OR "not""#)
        // A phrase or a prefix is never a function word.
        #expect(try FTSPattern(text: #""the who" the*"#).matchExpression == #""the who" OR "the" *"#)
    }

    @Test(arguments: [#""( )""#, "* ^ : ( ) \" -", "", "   ", "…", "🙂"])
    func refusesTextWithNothingToSearch(text: String) {
        #expect {
            try FTSPattern(text: text)
        } throws: { error in
            let error = error as? ReplicaError
            return error?.code == .invalidQuery && error?.message.contains("no words") == true
                && error?.message.lowercased().contains("fts") == false
        }
    }

    @Test func limitsTheNumberOfWords() {
        let many = (0..<65).map { "w\($0)" }.joined(separator: " ")
        #expect(throws: ReplicaError.self) { try FTSPattern(text: many) }
    }
}
