import Optimization
import OptimizationTestSupport
@testable import OptimizationContent
import Testing

@Suite("ContentfulEntry and a byte order mark")
struct EntryByteOrderMarkTests {
    @Test func aLeadingByteOrderMarkIsSkippedFromBytesAndFromText() throws {
        let entry = try ContentfulEntry(jsonData: [0xEF, 0xBB, 0xBF] + Array(#"{"sys":{"id":"e1","type":"Entry"}}"#.utf8))
        #expect(entry.jsonText.utf8.first == UInt8(ascii: "{"))
        let fromText = try ContentfulEntry(jsonText: "\u{FEFF}" + #"{"sys":{"id":"e1","type":"Entry"}}"#)
        #expect(fromText.jsonText == #"{"sys":{"id":"e1","type":"Entry"}}"#)
    }
}
