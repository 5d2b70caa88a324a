import Foundation
import Replica
import ReplicaCore
import ReplicaTestSupport
import Testing

@testable import ReplicaIndex
@testable import ReplicaPostgresStore

/// A long word costs time linear in its bytes on both backends: the word-making code is counted in
/// steps (never timed), and a megabyte-long word is indexed and found.
struct LongWordTests {
    /// Characters over an array, walked one step at a time (not random access), each step counted: the
    /// standard library's defaults (`count`, `dropLast()`, `index(_:offsetBy:)`) walk through these too,
    /// so a cut that recounts the word at each character shows as steps squared. Past `budget` steps
    /// the walk jumps to the end, so that a regression fails at once rather than running for hours.
    struct CountedCharacters: BidirectionalCollection {
        final class Steps: @unchecked Sendable {
            var count = 0
            let budget: Int
            init(budget: Int) { self.budget = budget }
        }
        let characters: [Character]
        let steps: Steps
        var startIndex: Int { 0 }
        var endIndex: Int { characters.count }
        func index(after i: Int) -> Int {
            steps.count += 1
            return steps.count > steps.budget ? endIndex : i + 1
        }
        func index(before i: Int) -> Int {
            steps.count += 1
            return steps.count > steps.budget ? startIndex : i - 1
        }
        subscript(position: Int) -> Character {
            steps.count += 1
            return characters[position]
        }
    }

    static func steps(_ bytes: Int, _ making: (CountedCharacters) -> Void) -> Int {
        let steps = CountedCharacters.Steps(budget: 200 * bytes)
        making(CountedCharacters(characters: Array(repeating: "x", count: bytes), steps: steps))
        return steps.count
    }

    /// The lexeme PostgreSQL keeps of a word too long for it (its head and a digest of the whole): a
    /// 1 MB word within 12 times the steps of a 100 KB word (the cut recounted the word at each
    /// character it dropped: 10,000 times a 100 KB word's).
    @Test func aLongWordsLexemeCostsStepsLinearInItsLength() {
        let short = Self.steps(100_000) { _ = PostgresIndexText.longLexeme($0) }
        let long = Self.steps(1_000_000) { _ = PostgresIndexText.longLexeme($0) }
        #expect(short > 0 && long <= 12 * short, "100 KB: \(short) steps; 1 MB: \(long)")
        // The same lexeme as the word written as a string (what the index holds), cut at a character.
        let word = String(repeating: "é", count: 3_000) + "x"
        let lexeme = PostgresIndexText.lexeme(word)
        #expect(
            lexeme.hasPrefix(String(repeating: "é", count: 100) + "~")
                && lexeme == PostgresIndexText.longLexeme(Array(word)))
    }

    /// A query word ending in stars (a prefix) is cut in steps of the stars, not of the word times the stars.
    @Test func trailingStarsAreCutInStepsOfTheStars() throws {
        let steps = CountedCharacters.Steps(budget: 10_000_000)
        let word = CountedCharacters(
            characters: Array(repeating: "x", count: 1_000) + Array(repeating: "*", count: 100_000), steps: steps)
        let (rest, removed) = word.removingTrailing("*")
        #expect(rest.count == 1_000 && removed == 100_000)
        #expect(steps.count < 1_000 + 3 * 100_002, "\(steps.count) steps")
        let pattern = try FTSPattern(text: "a" + String(repeating: "*", count: 200_000))
        #expect(pattern.terms == [.word("a", prefix: true)])
    }

    /// A megabyte-long word is indexed and its item found on each backend; a 50 KB word is found by itself.
    @Test(arguments: TestBackend.available)
    func aMegabyteWordIsIndexedAndFound(_ backend: TestBackend) async throws {
        let fixture = try await backend.makeStore(signingIn: "alice")
        let word = String(repeating: "QUJD", count: 250_000)
        try await fixture.store.index(account: "alice").indexItems([
            Fixtures.item("long", text: "before " + word + " after")
        ])
        #expect(try await fixture.store.search(SearchQuery("after")).map(\.item.uniqueIdentifier.rawValue) == ["long"])
        // A query of the whole megabyte is refused at once (past 64 KiB); one of a 50 KB word finds its item.
        await #expect(throws: ReplicaError.self) { try await fixture.store.search(SearchQuery(word)) }
        let shorter = String(repeating: "WFla", count: 12_500)
        try await fixture.store.index(account: "alice").indexItems([Fixtures.item("shorter", text: "before " + shorter)]
        )
        #expect(
            try await fixture.store.search(SearchQuery(shorter)).map(\.item.uniqueIdentifier.rawValue) == ["shorter"])
    }
}
