@testable import JavaScriptHost
import Testing

@Suite("UTF-16 hand-over of long strings")
struct UTF16TranscodingTests {
    /// One-, two-, three- and four-byte characters, NUL and a line separator.
    static let pieces = ["a", "\u{0}", "é", "€", "\u{2028}", "😀", "\u{10FFFF}", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}"]

    @Test func transcodingMatchesTheStandardLibraryAtEveryOffsetAroundAWord() {
        for piece in Self.pieces {
            for prefix in 0..<20 {
                for suffix in [0, 1, 7, 8, 9, 17] {
                    let text = String(repeating: "x", count: prefix) + piece + String(repeating: "y", count: suffix)
                    #expect(UTF16Transcoding.units(of: text) == Array(text.utf16), "\(prefix) + \(piece.unicodeScalars.map(\.value)) + \(suffix)")
                }
            }
        }
        #expect(UTF16Transcoding.units(of: "").isEmpty)
    }

    @Test func transcodingMatchesTheStandardLibraryOnMixedText() {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<300 {
            var text = ""
            for _ in 0..<Int(generator.next() % 400) {
                let roll = generator.next() % 10
                text += roll < 6 ? String(UnicodeScalar(UInt8(32 + generator.next() % 95))) : Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))]
            }
            #expect(UTF16Transcoding.units(of: text) == Array(text.utf16))
        }
    }

    @Test func longStringsCrossIntoJavaScriptUnchanged() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.echo = (s) => s; globalThis.size = (s) => s.length; globalThis.field = (o) => o.text;")
        for piece in Self.pieces {
            let text = String(repeating: "ascii run ", count: 30) + piece + String(repeating: "z", count: 13) + piece
            #expect(text.utf8.count >= utf16HandOverThreshold)
            #expect(try engine.call("echo", .string(text)) == .string(text))
            #expect(try engine.call("size", .string(text)) == .number(Double(text.utf16.count)))
        }
        let document = "{\"text\":\"" + String(repeating: "café 😀 ", count: 40) + "\\u0000\"}"
        #expect(try engine.call("field", .json(document)) == .string(String(repeating: "café 😀 ", count: 40) + "\u{0}"))
    }
}

/// A small deterministic generator (tests must not depend on the system's randomness).
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
