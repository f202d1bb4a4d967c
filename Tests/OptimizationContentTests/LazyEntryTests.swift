import Foundation
import Optimization
import OptimizationTestSupport
@testable import OptimizationContent
import Testing

@Suite("Entries parsed from text build their tree on demand")
struct LazyEntryTests {
    static let entryFiles = [
        "entries/hero-optimized.json", "entries/banner-components.json", "entries/banner-variant-lookup.json",
        "entries/content-not-optimized.json", "entries/hero-optimized-all-locales.json", "entries/roundtrip-exact.json",
        "entries/richtext-cycle.json", "entries/unresolved-experience-link.json", "entries/decisions2-malformed-mix.json",
        "entries/only-wrong-shape-experience.json", "entries/cda-hero-collection.json", "entries/cda-multi-items.json",
        "entries/cda-back-reference.json", "entries/cda-missing-include.json", "entries/cda-richtext-cycle.json",
    ]

    /// The same document built from text (tape) and from a value (tree) renders the same entry at
    /// every location, including ones that lead nowhere, and has the same document and baseline.
    @Test(arguments: entryFiles)
    func aParsedEntryRendersWhatAValueBuiltEntryRenders(_ file: String) throws {
        let data = try fixtureData(file)
        let parsed = try ContentfulEntry(jsonData: data)
        let built = try ContentfulEntry(json: JSONValue(jsonData: data))
        #expect(parsed.id == built.id)
        #expect(parsed.isCollection == built.isCollection)
        for experience in -1...4 {
            for variant in -1...4 {
                let location = EntryLocation.variant(experience: experience, variant: variant)
                let fromText = parsed.renderedEntry(at: location)
                #expect(try fromText?.jsonText() == built.renderedEntry(at: location)?.jsonText(), "\(file) \(location)")
            }
        }
        #expect(try parsed.document.jsonText() == JSONValue(jsonData: data).jsonText())
        #expect(parsed.baseline == built.baseline)
        #expect(parsed.renderedBaseline == built.renderedBaseline)
        #expect(parsed.entriesById == built.entriesById)
        #expect(try parsed.cacheKey == ContentfulEntry(jsonText: String(decoding: data, as: UTF8.self)).cacheKey, "the same text, the same key")
    }

    /// Shape errors are the same whichever way the document arrives.
    @Test(arguments: [
        #"[1]"#, #""entry""#, #"{"items":{}}"#, #"{"items":[]}"#, #"{"sys":{"type":"Array"}}"#, #"{"items":[1]}"#,
        #"{"sys":1}"#, #"{"sys":{"type":"Asset","id":"a"}}"#, #"{"sys":{"type":"Entry","id":7}}"#, #"{"fields":{}}"#,
        #"{"items":[{"sys":{"type":"Entry","id":"a"}}],"sys":{"type":"Array"}}"#, #"{"sys":{"type":"Entry","id":"a"},"sys":{"type":"Entry"}}"#,
        #"{"sys":{"type":"Entry","id":"a"}}"#,
    ])
    func shapeErrorsDoNotDependOnHowTheEntryArrived(_ text: String) throws {
        let value = try JSONValue(jsonText: text)
        for entryId in [nil, "a", "b"] {
            let fromText = Result { () throws(ContentfulEntryError) in try ContentfulEntry(jsonText: text, entryId: entryId).id }
            let fromValue = Result { () throws(ContentfulEntryError) in try ContentfulEntry(json: value, entryId: entryId).id }
            #expect(fromText == fromValue, "\(text) \(entryId ?? "nil")")
        }
    }

    @Test func invalidUTF8IsReportedFromTheBytesAsGiven() {
        let bytes: [UInt8] = Array(#"{"sys":{"id":""#.utf8) + [0xC3, 0x28] + Array(#"","type":"Entry"}}"#.utf8)
        #expect(throws: ContentfulEntryError.invalidJSON(JSONError(reason: .invalidUTF8, offset: 14, line: 1, column: 15))) {
            try ContentfulEntry(jsonData: bytes)
        }
    }

    @Test func syntaxErrorsNameTheirPlace() {
        #expect(throws: ContentfulEntryError.invalidJSON(JSONError(reason: .syntax(expected: "',' or '}'"), offset: 10, line: 2, column: 1))) {
            try ContentfulEntry(jsonText: "{\"sys\":{}\n\"fields\"}")
        }
    }
}
