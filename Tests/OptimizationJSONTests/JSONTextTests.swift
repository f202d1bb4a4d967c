@testable import OptimizationJSON
import Testing

@Suite("JSON text output")
struct JSONTextTests {
    /// Each string printed as a JSON string literal, by hand: what must be escaped is, and
    /// everything else (including other characters with the 0xE2 lead byte) is copied as is.
    @Test(arguments: [
        ("plain ascii-id_42", #""plain ascii-id_42""#),
        ("", #""""#),
        ("say \"hi\"", #""say \"hi\"""#),
        ("back\\slash", #""back\\slash""#),
        ("line\nbreak\rand\ttab", #""line\nbreak\rand\ttab""#),
        ("\u{1}\u{1F}", #""\u0001\u001f""#),
        ("a\u{2028}b\u{2029}c", #""a\u2028b\u2029c""#),
        ("price 5 € – ok ★", "\"price 5 € – ok ★\""),
        ("emoji 👍🏽 and ü", "\"emoji 👍🏽 and ü\""),
        ("mixed \"€\"\n", #""mixed \"€\"\n""#),
    ])
    func stringsAreEscapedExactlyWhereNeeded(_ input: String, _ expected: String) throws {
        #expect(try JSONValue.string(input).jsonText() == expected)
        #expect(try JSONValue(jsonText: expected) == .string(input))
    }

    /// A large document (20,000 strings, as a batch of context registrations) prints and reads
    /// back to the same value.
    @Test func largeDocumentsPrintCompletely() throws {
        let document = JSONValue.array((0..<20_000).map { .string("00000000-0000-4000-8000-\(String($0, radix: 16))") })
        let text = try document.jsonText()
        #expect(try JSONValue(jsonText: text) == document)
        #expect(text.utf8.count > 20_000 * 30)
    }
}
