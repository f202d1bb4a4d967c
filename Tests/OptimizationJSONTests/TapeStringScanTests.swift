@testable import OptimizationJSON
import Testing

/// The scanner reads string bodies eight bytes at a time and goes straight to the first quote,
/// backslash or control byte of a word: each such byte (and a byte outside ASCII, which decides
/// whether the string's bytes are its text) at every position of the first words of a string,
/// and after a run of others, reads as the parser reads it.
@Suite struct TapeStringScanTests {
    @Test func everySpecialByteAtEveryPositionReadsAsTheParserReadsIt() throws {
        let specials: [[UInt8]] = [
            Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\n"#.utf8), Array(#"\u00e9"#.utf8), Array(#"\u0022"#.utf8),
            Array("é".utf8), Array("😀".utf8), [0x01], [0x1F], [0x7F], Array(#"""#.utf8), Array(#"\x"#.utf8), Array(#"\u12"#.utf8),
        ]
        var accepted = 0
        for special in specials {
            for before in 0..<20 {
                for after in [0, 1, 7, 8, 9, 17] {
                    let body = Array(repeating: UInt8(ascii: "a"), count: before) + special + Array(repeating: UInt8(ascii: "b"), count: after)
                    for text in [
                        "\"" + String(decoding: body, as: UTF8.self) + "\"",
                        #"{"k":""# + String(decoding: body, as: UTF8.self) + #"","n":[1,"x"]}"#,
                        "[\"" + String(decoding: body + body, as: UTF8.self) + "\",true]",
                    ] {
                        let parsed = try? JSONValue(jsonText: text)
                        let tape = JSONTape.scan(text)
                        #expect((tape != nil) == (parsed != nil), "\(text)")
                        guard let tape, let parsed else { continue }
                        accepted += 1
                        #expect(tape.value(of: JSONTape.rootNode) == parsed, "\(text)")
                        let string = parsed.stringValue ?? parsed["k"]?.stringValue ?? parsed[0]?.stringValue
                        let node = tape.kind(of: JSONTape.rootNode) == .string ? JSONTape.rootNode
                            : tape.member("k", of: JSONTape.rootNode) ?? tape.element(0, of: JSONTape.rootNode)
                        #expect(node.flatMap(tape.string(at:)) == string, "\(text)")
                    }
                }
            }
        }
        #expect(accepted > 1_000, "most of them are strings")
    }
}
