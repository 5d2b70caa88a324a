import Foundation
import Testing

@testable import Replica
@testable import ReplicaCore
@testable import ReplicaIndex

@Suite struct JSONTests {
    @Test func readsEveryKindAndKeepsMemberOrder() throws {
        let value = try JSON.parse(#"{"z": 1, "a": [true, false, null, -2.5e1, "x"], "m": {"k": "v"}}"#)
        #expect(value.objectValue?.map(\.0) == ["z", "a", "m"])
        #expect(value["a"] == [true, false, nil, -25.0, "x"])
        #expect(value["m"]?["k"]?.stringValue == "v")
        #expect(value.serialized() == #"{"z":1,"a":[true,false,null,-25,"x"],"m":{"k":"v"}}"#)
    }

    @Test func escapesAndUnescapesStrings() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{7} é 😀 \u{2028}"
        let written = JSON.string(text).serialized()
        #expect(!written.contains("\n"))
        #expect(written.contains("\\u0007"))
        #expect(try JSON.parse(written) == .string(text))
        #expect(try JSON.parse(#""\ud83d\ude00 \u00e9""#) == .string("😀 é"))
    }

    @Test(arguments: [
        ("{", "unterminated object"),
        (#"{"a" 1}"#, "expected ':'"),
        ("[1,]", "unexpected character"),
        (#""\ud83d""#, "lone UTF-16 surrogate"),
        ("01x", "unexpected text after"),
        ("nul", "expected a JSON value"),
        ("", "empty"),
        (#"{"a": 1} {"b": 2}"#, "unexpected text after"),
    ])
    func reportsWhatIsWrong(text: String, reason: String) {
        #expect {
            try JSON.parse(text)
        } throws: { error in
            (error as? JSONParseError)?.reason.contains(reason) == true
        }
    }

    @Test func givesTheColumnWhereReadingStopped() {
        #expect(throws: JSONParseError(reason: "expected ',' or '}' in an object", column: 9)) {
            try JSON.parse(#"{"a": 1 "b": 2}"#)
        }
    }

    @Test func refusesDeepNestingInsteadOfCrashing() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSON.parse(deep) }
    }

    @Test func readsCommentsOnlyWhenAsked() throws {
        let text = "{ // a comment\n \"a\": /* inline */ 1 }"
        #expect(throws: JSONParseError.self) { try JSON.parse(text) }
        #expect(try JSON.parse(text, allowComments: true)["a"] == 1)
    }

    @Test func printsIntegersWithoutAFraction() {
        #expect(JSON.number(3).serialized() == "3")
        #expect(JSON.number(-0.5).serialized() == "-0.5")
        #expect(JSON.number(.nan).serialized() == "null")
    }

    @Test func wholeNumbersBeyondWhatADoubleHoldsAreKeptExactly() throws {
        let parsed = try JSON.parse(
            "[9007199254740993, 9223372036854775807, -9223372036854775808, 9007199254740992, 1e3, 2.5, 9223372036854775808]"
        )
        let values = try #require(parsed.arrayValue)
        #expect(values[0].intValue == 9_007_199_254_740_993)
        #expect(values[1].intValue == Int.max)
        #expect(values[2].intValue == Int.min)
        #expect(values[3].intValue == 9_007_199_254_740_992)
        #expect(values[4].intValue == 1000)
        #expect(values[5].intValue == nil)
        #expect(values[6].intValue == nil, "2^63 does not fit: it stays an inexact number")
        #expect(values[0] != values[3], "they differ only beyond a Double's precision")
        #expect(
            parsed.serialized()
                == "[9007199254740993,9223372036854775807,-9223372036854775808,9007199254740992,1000,2.5,9.223372036854776e+18]"
        )
    }

    @Test func recordVersionsUpToTwoToTheSixtyThreeAreExact() throws {
        let newer = try Record(
            json: JSON.parse(#"{"account": "a", "kind": "note", "id": "1", "version": 9223372036854775807}"#))
        #expect(newer.version == Int64.max)
        let close = try Record(
            json: JSON.parse(#"{"account": "a", "kind": "note", "id": "1", "version": 9007199254740993}"#))
        #expect(close.version == 9_007_199_254_740_993)
        #expect(
            performing: {
                try Record(
                    json: JSON.parse(#"{"account": "a", "kind": "note", "id": "1", "version": 9223372036854775808}"#))
            },
            throws: { ($0 as? ReplicaError)?.message.contains("to 9223372036854775807") == true })
    }

    /// Found by fuzzing (Fuzz/corpus/json): the fast path that skips escaping let DEL through raw.
    @Test func delC1ControlsAndDirectionOverridesAreEscapedToo() {
        #expect(JSON.string("a\u{7F}b\u{85}c\u{202E}d").serialized() == #""a\u007fb\u0085c\u202ed""#)
    }
}
