import Crypto
import Foundation
import MetricsTestKit
import Optimization
import Testing

/// The `v1` wire format of ``SignedValueCodec`` and ``VisitorStateCodec``, checked against a
/// reference computed here independently (swift-crypto's HMAC called directly, base64url
/// written by hand), on a manual clock.
@Suite struct SealedVisitorStateWireFormatTests {
    static let keyA = [UInt8](repeating: 0xA1, count: 32)
    static let keyB = [UInt8](repeating: 0xB2, count: 48)
    /// Longer than SHA-256's block: HMAC hashes it first.
    static let keyC = (0..<80).map { UInt8($0) }
    /// 2026-01-01T00:00:00Z, ManualClock's default start.
    static let start = 1_767_225_600_000.0
    /// `start` plus the codecs' lifetime of an hour.
    static let expiry = "1767229200000"
    static let selectionsJSON = #"[{"experienceId":"expStripResolved","variantIndex":1,"variants":{"promoStripBaseline":"promoStripVariant"},"sticky":false},{"experienceId":"exp2","variantIndex":0,"variants":{}}]"#

    static func selections() throws -> SelectedOptimizations {
        try SelectedOptimizations(jsonData: Array(selectionsJSON.utf8))
    }

    static func codec(_ keys: [[UInt8]] = [keyA], clock: ManualClock = ManualClock(start: start), metrics: TestMetrics? = nil) throws -> VisitorStateCodec {
        VisitorStateCodec(keys: try VisitorStateKeys(keys), lifetime: .seconds(3600), clock: clock, metricsFactory: metrics)
    }

    // MARK: The reference

    /// Base64 with the URL alphabet, unpadded, one group of three bytes at a time.
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = ""
        var index = 0
        while index < bytes.count {
            let group = bytes[index..<min(index + 3, bytes.count)]
            var bits = 0
            for (offset, byte) in group.enumerated() { bits |= Int(byte) << (16 - 8 * offset) }
            for position in 0...group.count { text.append(alphabet[(bits >> (18 - 6 * position)) & 0x3F]) }
            index += 3
        }
        return text
    }

    /// The sealed text of the payload bytes `payload` for `purpose`, signed with `key`.
    static func referenceText(payload: [UInt8], key: [UInt8], purpose: String = VisitorStateCodec.purpose) -> String {
        let payloadText = base64URL(payload)
        let signed = Array("v1".utf8) + [0] + Array(purpose.utf8) + [0] + Array(payloadText.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: key))
        return "v1." + payloadText + "." + base64URL(Array(mac))
    }

    /// ``referenceText(payload:key:purpose:)`` of `{"exp":<expiry>,"v":<valueJSON>}`.
    static func referenceText(valueJSON: String, key: [UInt8] = keyA, expiry: String = expiry, purpose: String = VisitorStateCodec.purpose) -> String {
        referenceText(payload: Array(#"{"exp":\#(expiry),"v":\#(valueJSON)}"#.utf8), key: key, purpose: purpose)
    }

    /// The payload JSON of a sealed text (standard base64 after restoring its alphabet and padding).
    static func payloadJSON(_ sealed: String) -> String? {
        let parts = sealed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var standard = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func theHandWrittenBase64URLIsFoundationsWithTheURLAlphabet() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Self.base64URL(bytes) == foundation)
        }
    }

    // MARK: The format

    @Test func aSealedStateIsTheReferenceTextForAFixedClock() throws {
        let codec = try Self.codec()
        let state = VisitorState(profileId: "visitor-\u{e9}\"\u{2028}1", consent: true, selections: try Self.selections())
        let expected = Self.referenceText(valueJSON: #"{"p":"visitor-\#u{e9}\"\u20281","c":true,"s":\#(Self.selectionsJSON)}"#)
        #expect(codec.seal(state) == expected)
        #expect(codec.open(expected) == state)
        #expect(codec.openWithExpiry(expected)?.expiresAt == Self.start + 3_600_000)
        for (partial, json) in [
            (VisitorState(), "{}"),
            (VisitorState(consent: false), #"{"c":false}"#),
            (VisitorState(profileId: "p1"), #"{"p":"p1"}"#),
            (VisitorState(selections: .empty), #"{"s":[]}"#),
            (VisitorState(consent: true, selections: try Self.selections()), #"{"c":true,"s":\#(Self.selectionsJSON)}"#),
        ] {
            let reference = Self.referenceText(valueJSON: json)
            #expect(codec.seal(partial) == reference, "\(json)")
            #expect(codec.open(reference) == partial, "\(json)")
        }
        #expect(codec.rejectedCount == 0)
    }

    @Test func aSealedValueOfAnyPurposeIsTheReferenceText() throws {
        let clock = ManualClock(start: Self.start + 0.75)  // whole milliseconds, rounded down
        for (key, purpose) in [(Self.keyA, "replay-ticket"), (Self.keyB, "x"), (Self.keyC, "")] {
            let codec = SignedValueCodec(keys: try VisitorStateKeys([key]), purpose: purpose, lifetime: .milliseconds(1500), clock: clock)
            let value: JSONValue = ["id": "r1", "n": [1, 2.5, "three", .null, true], "nested": ["deep": ["a": "\u{0}"]]]
            let expected = Self.referenceText(
                valueJSON: #"{"id":"r1","n":[1,2.5,"three",null,true],"nested":{"deep":{"a":"\u0000"}}}"#, key: key,
                expiry: "1767225601500", purpose: purpose)
            #expect(try codec.seal(value) == expected, "\(purpose)")
            #expect(codec.open(expected) == value)
        }
    }

    @Test func everyStateShapeSurvivesASealAndOpen() throws {
        let codec = try Self.codec()
        let ids: [String?] = [nil, "", "p", "8c7f3b2e-4d1a-4f6b-9e2c-5a0d7b3c1e9f", "quote\" backslash\\ tab\t nul\u{0} line\u{2028} emoji😀",
                              String(repeating: "x", count: VisitorStateCodec.maximumProfileIdLength)]
        let consents: [Bool?] = [nil, true, false]
        let selections: [SelectedOptimizations?] = [nil, .empty, try Self.selections()]
        var shapes = 0
        for id in ids {
            for consent in consents {
                for selection in selections {
                    let state = VisitorState(profileId: id, consent: consent, selections: selection)
                    let sealed = codec.seal(state)
                    #expect(codec.open(sealed) == state, "\(sealed)")
                    #expect(codec.openWithExpiry(sealed)?.expiresAt == Self.start + 3_600_000)
                    shapes += 1
                }
            }
        }
        #expect(shapes == 54)
        // A profile id longer than the limit is left out of the seal.
        let long = VisitorState(profileId: String(repeating: "x", count: VisitorStateCodec.maximumProfileIdLength + 1), consent: true)
        #expect(codec.open(codec.seal(long)) == VisitorState(consent: true))
        #expect(codec.rejectedCount == 0)
    }

    @Test func changingAnyOneCharacterOfThePayloadOrTheMACIsRefused() throws {
        let metrics = TestMetrics()
        let codec = try Self.codec(metrics: metrics)
        let state = VisitorState(profileId: "visitor-a", consent: false, selections: try Self.selections())
        let sealed = codec.seal(state)
        let characters = Array(sealed)
        let payloadRange = 3..<(characters.lastIndex(of: ".")!)
        let macRange = (payloadRange.upperBound + 1)..<characters.count
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        func signatureRefusals() -> Int64 {
            metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "signature")])
        }
        var attempts = 0
        // Each character of the payload, changed to each other character of the alphabet (and a
        // few outside it): the MAC no longer matches.
        for index in payloadRange {
            for replacement in alphabet + ["=", "+", "/", "!", "\u{e9}"] where replacement != characters[index] {
                var changed = characters
                changed[index] = replacement
                #expect(codec.open(String(changed)) == nil, "payload \(index) → \(replacement)")
                attempts += 1
            }
        }
        #expect(signatureRefusals() == Int64(attempts), "the MAC is checked before the payload is read")
        // Each character of the MAC: refused (as a bad signature, or as malformed when the last
        // character's unused bits are not zero or the character is outside the alphabet).
        for index in macRange {
            for replacement in alphabet + ["=", "!"] where replacement != characters[index] {
                var changed = characters
                changed[index] = replacement
                #expect(codec.open(String(changed)) == nil, "MAC \(index) → \(replacement)")
                attempts += 1
            }
        }
        // A character removed or added anywhere.
        for index in characters.indices {
            var shorter = characters
            shorter.remove(at: index)
            #expect(codec.open(String(shorter)) == nil)
            var longer = characters
            longer.insert("A", at: index)
            #expect(codec.open(String(longer)) == nil)
            attempts += 2
        }
        #expect(codec.rejectedCount == attempts)
        let malformed = metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "malformed")])
        #expect(signatureRefusals() + malformed == Int64(attempts))
        #expect(codec.open(sealed) == state, "the original still opens")
    }

    @Test func aSecondKeyVerifiesAndTheFirstSigns() throws {
        let clock = ManualClock(start: Self.start)
        let state = VisitorState(profileId: "visitor-a", consent: true, selections: try Self.selections())
        let rotated = try Self.codec([Self.keyB, Self.keyA, Self.keyC], clock: clock)
        let value = #"{"p":"visitor-a","c":true,"s":\#(Self.selectionsJSON)}"#
        for key in [Self.keyA, Self.keyB, Self.keyC] {
            #expect(rotated.open(Self.referenceText(valueJSON: value, key: key)) == state, "every listed key verifies")
        }
        #expect(rotated.seal(state) == Self.referenceText(valueJSON: value, key: Self.keyB), "the first key signs")
        let onlyA = try Self.codec([Self.keyA], clock: clock)
        #expect(onlyA.open(rotated.seal(state)) == nil)
        #expect(onlyA.open(Self.referenceText(valueJSON: value, key: Self.keyC)) == nil)
        #expect(rotated.rejectedCount == 0)
    }

    @Test func sealingAnOpenedStateReproducesItsPayloadJSON() throws {
        for value in [
            #"{"p":"8c7f3b2e-4d1a-4f6b-9e2c-5a0d7b3c1e9f","c":true,"s":\#(Self.selectionsJSON)}"#,
            #"{"p":"caf\#u{e9} \"quoted\" \\ \u2028","c":false}"#,
            #"{"s":[]}"#,
            "{}",
        ] {
            let clock = ManualClock(start: Self.start)
            let codec = try Self.codec(clock: clock)
            let text = Self.referenceText(valueJSON: value)
            let opened = try #require(codec.open(text))
            let resealed = codec.seal(opened)
            #expect(resealed == text)
            #expect(Self.payloadJSON(resealed) == #"{"exp":\#(Self.expiry),"v":\#(value)}"#)
            // Later, the same state with a later expiry.
            clock.advance(by: .milliseconds(5))
            #expect(Self.payloadJSON(codec.seal(opened)) == #"{"exp":1767229200005,"v":\#(value)}"#)
        }
    }

    /// What a key holder could sign is read exactly as a parsed JSON document reads: the last of
    /// repeated members, escaped keys, a byte order mark, unknown members, numbers of any form;
    /// and what the parser refuses (bytes that are not UTF-8, members of the wrong type) is
    /// refused as malformed.
    @Test func payloadsAreReadAsTheJSONParserReadsThem() throws {
        let metrics = TestMetrics()
        let codec = try Self.codec(metrics: metrics)
        let opening: [(payload: [UInt8], state: VisitorState, expiresAt: Double)] = [
            (Array(#"{"exp":1767229200000,"v":{"p":"a","p":"b","c":false,"c":true}}"#.utf8), VisitorState(profileId: "b", consent: true), 1_767_229_200_000),
            (Array(#"{"v":{"\u0070":"escaped key","x":[1,{"y":null}],"c":true},"exp":1.7672292e12,"later":"ignored"}"#.utf8),
             VisitorState(profileId: "escaped key", consent: true), 1_767_229_200_000),
            ([0xEF, 0xBB, 0xBF] + Array(#" { "exp" : 17672292000000 , "v" : { "c" : false } } "#.utf8), VisitorState(consent: false), 17_672_292_000_000),
            (Array(#"{"exp":1767229200000.5,"v":{"exp":1,"v":2}}"#.utf8), VisitorState(), 1_767_229_200_000.5),
            (Array(#"{"exp":9007199254740993,"v":{}}"#.utf8), VisitorState(), 9_007_199_254_740_992),
        ]
        for (payload, state, expiresAt) in opening {
            let opened = codec.openWithExpiry(Self.referenceText(payload: payload, key: Self.keyA))
            #expect(opened?.state == state, "\(String(decoding: payload, as: UTF8.self))")
            #expect(opened?.expiresAt == expiresAt)
        }
        #expect(codec.rejectedCount == 0)
        let malformed: [[UInt8]] = [
            Array(#"{"exp":1767229200000,"v":{"p":"caf"#.utf8) + [0xC3] + Array(#""}}"#.utf8),  // not UTF-8
            Array(#"{"exp":1767229200000,"v":{"p":"x"}} trailing"#.utf8),
            Array(#"{"exp":"1767229200000","v":{}}"#.utf8),
            Array(#"{"exp":1767229200000}"#.utf8),
            Array(#"{"v":{}}"#.utf8),
            Array(#"[1767229200000,{}]"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"p":null}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"c":1}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"s":{}}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":[]}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"p":"a","p":7}}"#.utf8),
            [],
        ]
        for payload in malformed {
            #expect(codec.open(Self.referenceText(payload: payload, key: Self.keyA)) == nil, "\(String(decoding: payload, as: UTF8.self))")
        }
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "malformed")]) == Int64(malformed.count))
        // Expired at exactly exp.
        #expect(codec.open(Self.referenceText(valueJSON: "{}", expiry: "1767225600000")) == nil)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "expired")]) == 1)
    }

    /// Text outside ASCII is never a sealed value; its refusal reason is that of the format read
    /// character by character (a `.` that a combining mark follows does not separate parts).
    @Test func textOutsideASCIIIsRefusedForTheFormatsReasons() throws {
        let metrics = TestMetrics()
        let codec = try Self.codec(metrics: metrics)
        let sealed = codec.seal(VisitorState(consent: true))
        let parts = sealed.split(separator: ".").map(String.init)
        let cases: [(String, String)] = [
            ("v1." + parts[1] + "\u{e9}." + parts[2], "signature"),
            ("v1.\u{301}" + parts[1] + "." + parts[2], "malformed"),
            ("v1." + parts[1] + ".\u{301}" + parts[2], "malformed"),
            ("v\u{301}1." + parts[1] + "." + parts[2], "malformed"),
            ("v1." + parts[1] + "." + parts[2] + "\u{e9}", "malformed"),
        ]
        for (text, reason) in cases {
            let before = metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", reason)])
            #expect(codec.open(text) == nil)
            #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", reason)]) == before + 1, "\(text)")
        }
        #expect(codec.open(sealed) == VisitorState(consent: true))
    }

    @Test func aTextLongerThanTheMaximumIsRefusedUnread() throws {
        let codec = SignedValueCodec(keys: try VisitorStateKeys([Self.keyA]), purpose: "p", lifetime: .seconds(60), maximumLength: 150, clock: ManualClock(start: Self.start))
        let fits = try codec.seal(["a": .string(String(repeating: "x", count: 20))])
        #expect(fits.utf8.count <= 150)
        #expect(codec.open(fits) != nil)
        let tooLong = try codec.seal(["a": .string(String(repeating: "x", count: 60))])
        #expect(tooLong.utf8.count > 150)
        #expect(codec.open(tooLong) == nil)
        #expect(codec.rejectedCount == 1)
    }
}
