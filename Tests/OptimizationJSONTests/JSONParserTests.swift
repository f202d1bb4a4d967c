import Foundation
@testable import OptimizationJSON
import Testing

@Suite("JSON parser over raw UTF-8")
struct JSONParserTests {
    @Test func numbersKeepTheirExactText() throws {
        let value = try JSONValue(jsonText: #"[0, -0, 12345, 0.1, -1.5e+10, 1E-7, 9007199254740993, 123456789012345678901234567890]"#)
        let texts = value.arrayValue?.compactMap { $0.numberValue?.text }
        #expect(texts == ["0", "-0", "12345", "0.1", "-1.5e+10", "1E-7", "9007199254740993", "123456789012345678901234567890"])
    }

    @Test func keysKeepTheirOrderAndADuplicateKeepsItsFirstPlaceWithTheLastValue() throws {
        let value = try JSONValue(jsonText: #"{"z":1,"a":2,"m":3,"a":4}"#)
        #expect(value.objectValue.map { Array($0.keys) } == ["z", "a", "m"])
        #expect(value["a"] == 4)
        // Larger objects take the set-based uniqueness check.
        let keys = (0..<40).map { "k\($0)" } + ["k3"]
        let text = "{" + keys.enumerated().map { "\"\($1)\":\($0)" }.joined(separator: ",") + "}"
        let large = try JSONValue(jsonText: text)
        #expect(large.objectValue?.count == 40)
        #expect(large.objectValue?.keys.first == "k0")
        #expect(large["k3"] == 40)
    }

    @Test func unicodeSurvivesRawAndEscaped() throws {
        let value = try JSONValue(jsonText: #"["€ 😀 ü", "\u20ac \ud83d\ude00 \u00fc", "a\"b\\c\/d\b\f\n\r\t", "\u0000x"]"#)
        #expect(value[0] == "€ 😀 ü")
        #expect(value[1] == "€ 😀 ü")
        #expect(value[2] == "a\"b\\c/d\u{8}\u{c}\n\r\t")
        #expect(value[3]?.stringValue?.unicodeScalars.first == "\u{0}")
    }

    @Test func loneSurrogatesBecomeTheReplacementCharacter() throws {
        let value = try JSONValue(jsonText: #"["\ud800", "\udc00x", "\ud800\u0041"]"#)
        #expect(value[0] == "\u{FFFD}")
        #expect(value[1] == "\u{FFFD}x")
        #expect(value[2] == "\u{FFFD}A")
    }

    @Test func nestingIsBoundedWithATypedError() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONError.self) { try JSONValue(jsonText: deep) }
        do {
            _ = try JSONValue(jsonText: deep)
        } catch {
            #expect(error.reason == .tooDeep(limit: 512))
            #expect(error.offset == 512)
        }
        let fits = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect((try? JSONValue(jsonText: fits)) != nil)
        #expect(throws: JSONError.self) { try JSONValue(jsonText: "[[[]]]", maximumDepth: 2) }
    }

    @Test(arguments: [
        ("", JSONError.Reason.empty, 0, 1, 1),
        ("  \n ", .empty, 4, 2, 2),
        ("{\"a\":1,}", .syntax(expected: "a string key"), 7, 1, 8),
        ("[1,2", .syntax(expected: "',' or ']'"), 4, 1, 5),
        ("{\"a\"\n 1}", .syntax(expected: "':'"), 6, 2, 2),
        ("\"abc", .syntax(expected: "'\"' closing the string"), 4, 1, 5),
        ("\"a\u{1}\"", .syntax(expected: "an escaped control character"), 2, 1, 3),
        ("\"\\x\"", .syntax(expected: "a valid escape"), 3, 1, 4),
        ("\"\\u12g4\"", .syntax(expected: "a hex digit"), 5, 1, 6),
        ("01", .syntax(expected: "end of input"), 1, 1, 2),
        ("-", .syntax(expected: "a digit"), 1, 1, 2),
        ("1.", .syntax(expected: "a digit after '.'"), 2, 1, 3),
        ("1e+", .syntax(expected: "an exponent digit"), 3, 1, 4),
        ("tru", .syntax(expected: "true"), 0, 1, 1),
        ("nul1", .syntax(expected: "null"), 0, 1, 1),
        ("[1] x", .syntax(expected: "end of input"), 4, 1, 5),
        ("€", .syntax(expected: "a value"), 0, 1, 1),
    ])
    func syntaxErrorsAreTypedWithTheirPlace(text: String, reason: JSONError.Reason, offset: Int, line: Int, column: Int) {
        #expect(throws: JSONError(reason: reason, offset: offset, line: line, column: column)) {
            try JSONValue(jsonText: text)
        }
    }

    @Test func invalidUTF8InAStringIsATypedError() {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0x5C, 0x6E, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(throws: JSONError(reason: .invalidUTF8, offset: 1, line: 1, column: 2)) {
                try JSONValue(jsonData: bytes)
            }
        }
    }

    @Test func aByteOrderMarkIsSkippedAndNonContiguousInputIsParsed() throws {
        #expect(try JSONValue(jsonData: [0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == [1])
        let chunks = [Array("{\"a\":".utf8), Array("[true,false,null]}".utf8)].joined()
        #expect(try JSONValue(jsonData: chunks) == ["a": [true, false, .null]])
    }

    /// Every fixture parses to the same structure as Foundation's parser reads (numbers compared
    /// by value), and prints back to text that parses to an equal value.
    @Test func fixturesAgreeWithFoundation() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: fixturesDirectory.path)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix("invalid/") }
        #expect(files.count > 20)
        for file in files {
            let data = try fixtureData(file)
            let value = try JSONValue(jsonData: data)
            let reference = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            #expect(Self.matches(value, reference), "\(file)")
            #expect(try JSONValue(jsonText: value.jsonText()) == value, "\(file)")
        }
    }

    static func matches(_ value: JSONValue, _ reference: Any) -> Bool {
        switch value {
        case .null: return reference is NSNull
        case .bool(let bool): return (reference as? Bool) == bool
        case .number(let number): return (reference as? NSNumber).map { $0.doubleValue == number.doubleValue } ?? false
        case .string(let string): return reference as? String == string
        case .array(let elements):
            guard let other = reference as? [Any], other.count == elements.count else { return false }
            return zip(elements, other).allSatisfy { matches($0, $1) }
        case .object(let members):
            guard let other = reference as? [String: Any], other.count == members.count else { return false }
            return members.allSatisfy { key, member in other[key].map { matches(member, $0) } ?? false }
        }
    }
}
