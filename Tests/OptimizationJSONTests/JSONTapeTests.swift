import Foundation
@testable import OptimizationJSON
import Testing

@Suite("JSON tape: a validating index over the text")
struct JSONTapeTests {
    /// Every fixture, plus each fixture cut short and with one byte replaced at many places:
    /// the scan accepts exactly what the parser accepts, and a subtree built from the tape is the
    /// parser's value with the same text (key order, number texts, escapes decoded alike).
    @Test func theScanAcceptsExactlyWhatTheParserAccepts() throws {
        var inputs = [
            "", " ", "{}", "[]", "[1,]", "{\"a\":1,}", "{\"a\"1}", "[1 2]", "\"\\u12g4\"", "\"\\x\"", "\"a\u{1}\"", "01", "-", "1.",
            "1e+", "-0.5E-7", "tru", "nul1", "[1] x", "€", "\"€ 😀\"", #"{"k":"\ud800\u0041","\u0073ys":[true,false,null]}"#,
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
            String(repeating: "{\"a\":", count: 513) + "1" + String(repeating: "}", count: 513),
        ]
        inputs += try fixtureTextVariants(
            step: { $0 / 20 },
            replacements: [UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "}"), UInt8(ascii: ","), 0x0A, 0x01, UInt8(ascii: "9")])
        var accepted = 0
        for input in inputs {
            let parsed = try? JSONValue(jsonText: input)
            let tape = JSONTape.scan(input)
            #expect((tape != nil) == (parsed != nil), "\(input.prefix(120))")
            guard let tape, let parsed else { continue }
            accepted += 1
            #expect(try tape.value(of: JSONTape.rootNode).jsonText() == parsed.jsonText(), "\(input.prefix(120))")
        }
        #expect(accepted > 60 && accepted < inputs.count - 1_000, "both outcomes are exercised")
    }

    @Test func lookupsFindWhatTheTreesSubscriptsFind() throws {
        let text = #"{"a":1,"b":{"c":[10,"x\"y",{"d":null}]},"a":2,"\u0073ys":"escaped key","é":"precomposed","K":"kelvin","list":[]}"#
        let tape = try #require(JSONTape.scan(text))
        let tree = try JSONValue(jsonText: text)
        for key in ["a", "b", "sys", "é", "e\u{301}", "\u{212A}", "K", "list", "missing"] {
            let node = tape.member(key, of: JSONTape.rootNode)
            #expect(node.map(tape.value(of:)) == tree[key], "\(key)")
        }
        #expect(tape.member("a", of: JSONTape.rootNode).map(tape.value(of:)) == 2, "a repeated key's last value wins")
        let object = try #require(tape.member("b", of: JSONTape.rootNode))
        let list = try #require(tape.member("c", of: object))
        #expect(tape.elements(of: list)?.map(tape.value(of:)) == tree["b"]?["c"]?.arrayValue)
        #expect(tape.element(1, of: list).flatMap(tape.string(at:)) == "x\"y")
        #expect(tape.element(3, of: list) == nil)
        #expect(tape.element(-1, of: list) == nil)
        #expect(tape.member("a", of: list) == nil, "an array has no members")
        #expect(tape.element(0, of: JSONTape.rootNode) == nil, "an object has no elements")
        let emptyList = try #require(tape.member("list", of: JSONTape.rootNode))
        #expect(tape.elements(of: emptyList) == [])
        #expect(tape.elements(of: JSONTape.rootNode) == nil, "an object is not an array")
        let escapedKey = try #require(tape.member("sys", of: JSONTape.rootNode))
        #expect(tape.string(at: escapedKey) == "escaped key")
        #expect(tape.string(at: try #require(tape.member("a", of: JSONTape.rootNode))) == nil, "a number is not a string")
    }

    @Test func booleansAndRawTextsReadWithoutParsing() throws {
        let text = #" {"yes": true, "no":false, "nested": { "k" : [1, "é\u00e9", null] }, "n": 1.50e2 } "#
        let tape = try #require(JSONTape.scan(text))
        let root = JSONTape.rootNode
        #expect(try tape.bool(at: #require(tape.member("yes", of: root))) == true)
        #expect(try tape.bool(at: #require(tape.member("no", of: root))) == false)
        #expect(try tape.bool(at: #require(tape.member("n", of: root))) == nil, "a number is not a boolean")
        let nested = try #require(tape.member("nested", of: root))
        #expect(tape.text(of: nested) == #"{ "k" : [1, "é\u00e9", null] }"#, "the exact bytes, whitespace and escapes kept")
        #expect(try JSONValue(jsonText: tape.text(of: nested)) == tape.value(of: nested))
        #expect(try tape.text(of: #require(tape.member("n", of: root))) == "1.50e2")
    }
}
