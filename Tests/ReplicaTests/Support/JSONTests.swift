import Foundation
import Testing
@testable import Replica

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
}
