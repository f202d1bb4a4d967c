import Foundation
@testable import OptimizationJSON
import Testing

/// A shallow scan (`recordedDepth`) validates the whole text as the full scan does but records
/// only the values near the top; `scan(jsonData:)` reads bytes as `JSONValue(jsonData:)` does.
@Suite("JSON tape: shallow scans and scans of bytes")
struct ShallowTapeTests {
    /// Every fixture, cut short and with one byte replaced at some places, plus edge cases.
    static func inputs() throws -> [String] {
        var inputs = [
            "", " ", "{}", "[]", "[1,]", "[[[]]]", "[[1,[2]],{\"a\":{\"b\":[3]}}]", #"{"a":1,"a":{"x":[1]},"\u0073":[{"k":"v"}]}"#,
            "\"s\"", "7", "[1] x", String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
            #"{"exp":1767229200000,"v":{"p":"id","c":true,"s":[{"experienceId":"x","variants":{"a":"b"}},[],"é"]}}"#,
        ]
        inputs += try fixtureTextVariants(step: { $0 / 4 }, replacements: [UInt8(ascii: "]")])
        return inputs
    }

    /// The same nodes, as far as the shallow tape recorded them: same kinds, same texts, the
    /// same members and elements, and containers at the last recorded depth collapsed.
    static func compare(_ shallow: JSONTape, _ shallowNode: Int, _ full: JSONTape, _ fullNode: Int, depth: Int, recordedDepth: Int) {
        #expect(shallow.kind(of: shallowNode) == full.kind(of: fullNode))
        #expect(shallow.text(of: shallowNode) == full.text(of: fullNode))
        let kind = full.kind(of: fullNode)
        guard kind == .array || kind == .object else { return }
        #expect(shallow.isCollapsed(shallowNode) == (depth >= recordedDepth))
        #expect(!full.isCollapsed(fullNode))
        guard depth < recordedDepth else { return }
        if kind == .array {
            let shallowElements = shallow.elements(of: shallowNode) ?? []
            let fullElements = full.elements(of: fullNode) ?? []
            #expect(shallowElements.count == fullElements.count)
            for (shallowElement, fullElement) in zip(shallowElements, fullElements) {
                compare(shallow, shallowElement, full, fullElement, depth: depth + 1, recordedDepth: recordedDepth)
            }
        } else if let keys = full.value(of: fullNode).objectValue?.keys {
            for key in keys {
                guard let shallowMember = shallow.member(key, of: shallowNode), let fullMember = full.member(key, of: fullNode) else {
                    Issue.record("member \(key) missing")
                    continue
                }
                compare(shallow, shallowMember, full, fullMember, depth: depth + 1, recordedDepth: recordedDepth)
            }
        }
    }

    @Test func aShallowScanAcceptsWhatTheFullScanAcceptsAndRecordsItsTop() throws {
        var accepted = 0
        for input in try Self.inputs() {
            let full = JSONTape.scan(input)
            for recordedDepth in [0, 1, 2] {
                let shallow = JSONTape.scan(input, recordedDepth: recordedDepth)
                #expect((shallow != nil) == (full != nil), "\(recordedDepth): \(input.prefix(80))")
                guard let shallow, let full else { continue }
                accepted += 1
                Self.compare(shallow, JSONTape.rootNode, full, JSONTape.rootNode, depth: 0, recordedDepth: recordedDepth)
                #expect(shallow.value(of: JSONTape.rootNode) == full.value(of: JSONTape.rootNode))
            }
        }
        #expect(accepted > 40)
    }

    @Test func aCollapsedContainerIsReadAsTextOrValue() throws {
        let text = #"{"exp":1,"v":{"p":"id","s":[{"a":[1,2]},"x"]},"v2":[[]]}"#
        let tape = try #require(JSONTape.scan(text, recordedDepth: 2))
        let value = try #require(tape.member("v", of: JSONTape.rootNode))
        #expect(!tape.isCollapsed(value))
        let selections = try #require(tape.member("s", of: value))
        #expect(tape.kind(of: selections) == .array)
        #expect(tape.isCollapsed(selections))
        #expect(tape.text(of: selections) == #"[{"a":[1,2]},"x"]"#)
        #expect(tape.value(of: selections) == [["a": [1, 2]], "x"])
        let profile = try #require(tape.member("p", of: value))
        #expect(tape.string(at: profile) == "id")
        let other = try #require(tape.member("v2", of: JSONTape.rootNode))
        #expect(tape.text(of: other) == "[[]]")
        #expect(!tape.isCollapsed(other), "its elements are recorded")
    }

    @Test func bytesAreScannedAsJSONValueReadsThem() throws {
        var inputs: [[UInt8]] = try Self.inputs().prefix(400).map { Array($0.utf8) }
        inputs += [
            [0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("[1]".utf8), [0xEF, 0xBB, 0xBF],
            Array("[\"".utf8) + [0xC3, 0x28] + Array("\"]".utf8), Array("[\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"]".utf8),
            Array("[\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"]".utf8), Array("[1]".utf8) + [0xC3], [0xC3, 0xA9],
            Array("[\"é\"]".utf8), Array("[\"\u{10FFFF}\"]".utf8), Array("{\"k\":1}".utf8) + [0x20, 0x0A],
        ]
        for bytes in inputs {
            let parsed = try? JSONValue(jsonData: bytes)
            let tape = bytes.withUnsafeBufferPointer { JSONTape.scan(jsonData: $0, recordedDepth: 1) }
            #expect((tape != nil) == (parsed != nil), "\(bytes.prefix(40))")
            if let tape, let parsed {
                #expect(tape.value(of: JSONTape.rootNode) == parsed)
                #expect(!tape.text.hasPrefix("\u{FEFF}"), "the byte order mark is not part of the text")
            }
        }
    }
}
