@testable import JavaScriptHost
import Testing

@Suite("UTF-16 hand-over of long strings, both directions")
struct UTF16TranscodingTests {
    /// One-, two-, three- and four-byte characters, NUL and a line separator.
    static let pieces = ["a", "\u{0}", "é", "€", "\u{2028}", "😀", "\u{10FFFF}", "\u{7F}", "\u{80}", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}"]

    @Test func transcodingMatchesTheStandardLibraryAtEveryOffsetAroundAWord() {
        for piece in Self.pieces {
            for prefix in 0..<20 {
                for suffix in [0, 1, 7, 8, 9, 17] {
                    let text = String(repeating: "x", count: prefix) + piece + String(repeating: "y", count: suffix)
                    #expect(units(of: text) == Array(text.utf16), "\(prefix) + \(piece.unicodeScalars.map(\.value)) + \(suffix)")
                }
            }
        }
        #expect(units(of: "").isEmpty)
    }

    @Test func transcodingMatchesTheStandardLibraryOnMixedText() {
        // Every pair of pieces, separated by ASCII runs of 0 to 18 bytes, repeated to ~300 bytes.
        for (index, first) in Self.pieces.enumerated() {
            for (offset, second) in Self.pieces.enumerated() {
                let gap = String(repeating: "-", count: (index * 7 + offset * 3) % 19)
                let text = String(repeating: first + gap + second + "ascii", count: 12)
                #expect(units(of: text) == Array(text.utf16))
            }
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

    @Test func narrowingMatchesTheStandardLibraryAtEveryOffset() {
        for piece in Self.pieces {
            for prefix in 0..<12 {
                for suffix in [0, 1, 3, 4, 5, 9] {
                    let units = Array((String(repeating: "x", count: prefix) + piece + String(repeating: "y", count: suffix)).utf16)
                    #expect(narrowed(units) == String(decoding: units, as: UTF16.self), "\(prefix) + \(piece.unicodeScalars.map(\.value)) + \(suffix)")
                }
            }
        }
        #expect(narrowed([]).isEmpty)
    }

    @Test func narrowingRepairsLoneSurrogatesAsTheStandardLibraryDoes() {
        let cases: [[UInt16]] = [
            [0xD800], [0xDC00], [0x61, 0xD83D], [0xD83D, 0x61], [0xDE00, 0xD83D], [0xD83D, 0xD83D, 0xDE00],
            [0x61, 0x62, 0x63, 0x64, 0xDFFF, 0x65, 0x66, 0x67, 0x68], [0xD83D, 0xDE00, 0xDE00],
        ]
        for units in cases {
            #expect(narrowed(units) == String(decoding: units, as: UTF16.self), "\(units)")
        }
    }

    @Test func longStringsComeBackFromJavaScriptUnchanged() throws {
        let engine = try JavaScriptEngine()
        try engine.evaluate("globalThis.repeatText = (s, n) => s.repeat(n); globalThis.lone = (n) => 'x'.repeat(n) + '\\uD800' + 'y';")
        for piece in Self.pieces {
            let unit = "ascii run " + piece
            let expected = String(repeating: unit, count: 700)
            #expect(try engine.call("repeatText", .string(unit), .number(700)) == .string(expected))
        }
        #expect(try engine.call("lone", .number(5_000)) == .string(String(repeating: "x", count: 5_000) + "\u{FFFD}y"))
    }

    private func narrowed(_ units: [UInt16]) -> String {
        units.withUnsafeBufferPointer { UTF16Transcoding.utf8($0) }
    }

    /// The transcoder's output for `string`.
    private func units(of string: String) -> [UInt16] {
        var string = string
        return string.withUTF8 { bytes in
            [UInt16](unsafeUninitializedCapacity: bytes.count) { buffer, initialized in
                initialized = bytes.isEmpty ? 0 : UTF16Transcoding.transcode(bytes, into: buffer.baseAddress.unsafelyUnwrapped)
            }
        }
    }
}
