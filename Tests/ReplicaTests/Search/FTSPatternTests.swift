import Testing
@testable import Replica
@testable import ReplicaIndex
@testable import ReplicaCore

@Suite struct FTSPatternTests {
    @Test func quotesEveryWordSoOperatorsAreText() throws {
        let pattern = try FTSPattern(text: "launch AND risk OR NOT NEAR(a b) title:x")
        #expect(pattern.matchExpression == #""launch" "AND" "risk" "OR" "NOT" "NEAR(a" "b)" "title:x""#)
    }

    @Test func keepsBalancedPhrasesAndPrefixes() throws {
        let pattern = try FTSPattern(text: #""launch risk" supp* "a b"*"#)
        #expect(pattern.terms == [.phrase("launch risk", prefix: false), .word("supp", prefix: true), .phrase("a b", prefix: true)])
        #expect(pattern.matchExpression == #""launch risk" "supp" * "a b" *"#)
    }

    @Test func dropsAnUnbalancedQuote() throws {
        #expect(try FTSPattern(text: #"say "hello"#).matchExpression == #""say" "hello""#)
    }

    @Test func joinsWithOrWhenAnyWordMayMatch() throws {
        #expect(try FTSPattern(text: "a b", matchingAny: true).matchExpression == #""a" OR "b""#)
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
