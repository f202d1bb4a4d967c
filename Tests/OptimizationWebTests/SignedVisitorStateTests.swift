import JavaScriptHost
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import Testing

/// Signed visitor state: ``VisitorStateCodec`` and the ``SignedValueCodec`` format under it.
@Suite struct SignedVisitorStateTests {
    static let keyA = [UInt8](repeating: 0xA1, count: 32)
    static let keyB = [UInt8](repeating: 0xB2, count: 48)

    static func selections() throws -> SelectedOptimizations {
        try SelectedOptimizations([["experienceId": "expStripResolved", "variantIndex": 1, "variants": ["promoStripBaseline": "promoStripVariant"]]])
    }

    static func codec(_ keys: [[UInt8]] = [keyA], lifetime: Duration = .seconds(3600), clock: any HostClock = ManualClock(), metrics: TestMetrics? = nil) throws -> VisitorStateCodec {
        VisitorStateCodec(keys: try VisitorStateKeys(keys), lifetime: lifetime, clock: clock, metricsFactory: metrics)
    }

    static func cookieSafe(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    @Test func aSealedStateOpensToTheSameStateInCookieSafeCharacters() throws {
        let codec = try Self.codec()
        let state = VisitorState(profileId: "profile-\u{e9}\"1", consent: true, selections: try Self.selections())
        let sealed = codec.seal(state)
        #expect(sealed.hasPrefix("v1."))
        #expect(sealed.split(separator: ".").count == 3)
        #expect(sealed.utf8.allSatisfy(Self.cookieSafe), "\(sealed)")
        #expect(codec.open(sealed) == state)
        for partial in [VisitorState(), VisitorState(consent: false), VisitorState(profileId: "p1")] {
            #expect(codec.open(codec.seal(partial)) == partial)
        }
        #expect(codec.rejectedCount == 0)
    }

    @Test func aTamperedValueOpensAsNilAndIsCounted() throws {
        let metrics = TestMetrics()
        let codec = try Self.codec(metrics: metrics)
        let sealed = codec.seal(VisitorState(profileId: "visitor-a", consent: false))
        let parts = sealed.split(separator: ".").map(String.init)
        // Another visitor's payload under this value's MAC, and a value whose payload says consent true.
        let other = codec.seal(VisitorState(profileId: "visitor-b", consent: true)).split(separator: ".").map(String.init)
        // Replaced by another character whose unused low bits are zero too ("A" and "E").
        func flipped(_ text: String, at index: Int) -> String {
            var characters = Array(text)
            characters[index] = characters[index] == "A" ? "E" : "A"
            return String(characters)
        }
        let tampered = [
            [parts[0], other[1], parts[2]].joined(separator: "."),  // payload swapped
            [parts[0], flipped(parts[1], at: 3), parts[2]].joined(separator: "."),  // payload edited
            [parts[0], parts[1], flipped(parts[2], at: 0)].joined(separator: "."),  // MAC edited
            [parts[0], parts[1], flipped(parts[2], at: parts[2].count - 1)].joined(separator: "."),  // MAC's last character
            ["v2", parts[1], parts[2]].joined(separator: "."),  // version
            [parts[0], parts[1]].joined(separator: "."),  // MAC missing
            sealed + ".x",
        ]
        for (index, value) in tampered.enumerated() {
            #expect(codec.open(value) == nil, "\(index): \(value)")
            #expect(codec.rejectedCount == index + 1)
        }
        #expect(codec.open(sealed) == VisitorState(profileId: "visitor-a", consent: false), "the original still opens")
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "signature")]) == 4)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "malformed")]) == 3)
        // A value signed by a key this codec does not hold.
        let foreign = try Self.codec([Self.keyB]).seal(VisitorState(profileId: "visitor-a"))
        #expect(codec.open(foreign) == nil)
        #expect(codec.rejectedCount == tampered.count + 1)
    }

    @Test func aValueExpiresAfterItsLifetimeOnTheClock() throws {
        let clock = ManualClock()
        let metrics = TestMetrics()
        let codec = try Self.codec(lifetime: .seconds(60), clock: clock, metrics: metrics)
        let state = VisitorState(profileId: "visitor-a", consent: true)
        let sealed = codec.seal(state)
        clock.advance(by: .milliseconds(59_999))
        #expect(codec.open(sealed) == state)
        clock.advance(by: .milliseconds(1))
        #expect(codec.open(sealed) == nil)
        #expect(codec.rejectedCount == 1)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "expired")]) == 1)
        #expect(codec.open(codec.seal(state)) == state, "sealed again, it opens for another lifetime")
    }

    @Test func anOldKeyVerifiesWhileListedAndNewValuesAreSignedByTheFirstKey() throws {
        let clock = ManualClock()
        let state = VisitorState(profileId: "visitor-a", consent: true)
        let old = try Self.codec([Self.keyA], clock: clock)
        let rotated = try Self.codec([Self.keyB, Self.keyA], clock: clock)
        let retired = try Self.codec([Self.keyB], clock: clock)
        let sealedBefore = old.seal(state)
        #expect(rotated.open(sealedBefore) == state, "the old key is still listed")
        #expect(retired.open(sealedBefore) == nil, "the old key was removed")
        let sealedAfter = rotated.seal(state)
        #expect(retired.open(sealedAfter) == state, "signed by the first key")
        #expect(old.open(sealedAfter) == nil, "not by the old one")
    }

    @Test func aValueSealedForAnotherPurposeDoesNotOpen() throws {
        let keys = try VisitorStateKeys([Self.keyA])
        let clock = ManualClock()
        let ticket = SignedValueCodec(keys: keys, purpose: "replay-ticket", lifetime: .seconds(600), clock: clock)
        let other = SignedValueCodec(keys: keys, purpose: "replay-ticket-2", lifetime: .seconds(600), clock: clock)
        let sealed = try ticket.seal(["id": "r1"])
        #expect(ticket.open(sealed) == ["id": "r1"])
        #expect(other.open(sealed) == nil)
        let state = VisitorStateCodec(keys: keys, lifetime: .seconds(600), clock: clock)
        #expect(state.open(sealed) == nil, "a ticket is not visitor state")
        #expect(ticket.open(state.seal(VisitorState(profileId: "p"))) == nil, "visitor state is not a ticket")
        // Signed for the visitor-state purpose but of another shape: refused as malformed.
        let sameKey = SignedValueCodec(keys: keys, purpose: VisitorStateCodec.purpose, lifetime: .seconds(600), clock: clock)
        for value: JSONValue in [["p": 5], ["c": "yes"], ["s": "x"], "text", ["p": .string(String(repeating: "x", count: 257))]] {
            let shaped = try sameKey.seal(value)
            #expect(sameKey.open(shaped) == value)
            #expect(state.open(shaped) == nil, "\(value)")
        }
        #expect(state.rejectedCount == 6)
    }

    @Test func hugeOrGarbageInputOpensAsNilWithoutTrapping() throws {
        let codec = try Self.codec()
        var generator = SystemRandomNumberGenerator()
        var garbage = ["", ".", "..", "v1..", "v1.a.b", "v1.e30.", "v1.%%%.%%%", "v1.\u{0}.\u{0}", "v1.😀.😀", "=;,", String(repeating: "v1.", count: 10_000)]
        garbage.append(String(repeating: "A", count: 1 << 20))
        garbage.append("v1." + String(repeating: "A", count: 16_000) + "." + String(repeating: "A", count: 43))
        for _ in 0..<200 {
            let length = Int.random(in: 0..<300, using: &generator)
            garbage.append(String(decoding: (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }, as: UTF8.self))
        }
        for value in garbage { #expect(codec.open(value) == nil) }
        #expect(codec.rejectedCount == garbage.count)
        // Lifetimes beyond any sense are clamped, not trapped on.
        let clamped = VisitorStateCodec(keys: try VisitorStateKeys([Self.keyA]), lifetime: .seconds(Int64.max), clock: ManualClock())
        #expect(clamped.lifetime == .milliseconds(100 * 366 * 24 * 3600 * 1000))
        #expect(clamped.open(clamped.seal(VisitorState(consent: true))) == VisitorState(consent: true))
        let negative = VisitorStateCodec(keys: try VisitorStateKeys([Self.keyA]), lifetime: .seconds(-5), clock: ManualClock())
        #expect(negative.lifetime == .milliseconds(1))
    }

    @Test func keysNeedAtLeast32BytesAndNeverPrintTheirMaterial() throws {
        #expect(throws: VisitorStateKeyError.noKeys) { try VisitorStateKeys([]) }
        #expect(throws: VisitorStateKeyError.keyTooShort(index: 1, length: 31)) { try VisitorStateKeys([Self.keyA, [UInt8](repeating: 1, count: 31)]) }
        #expect(throws: VisitorStateKeyError.notBase64(index: 0)) { try VisitorStateKeys(base64Encoded: ["not base64!"]) }
        #expect(throws: VisitorStateKeyError.keyTooShort(index: 0, length: 3)) { try VisitorStateKeys(base64Encoded: ["AAAA"]) }
        // `openssl rand -base64 32` output, standard alphabet with padding, and the URL-safe form.
        let standard = "oaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaGhoaE="
        let keys = try VisitorStateKeys(base64Encoded: [standard, "srKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKysrKy"])
        #expect(keys.description == "VisitorStateKeys(2 keys)")
        let fromBytes = try Self.codec([Self.keyA])
        let fromText = VisitorStateCodec(keys: keys, lifetime: .seconds(3600), clock: ManualClock())
        #expect(fromText.open(fromBytes.seal(VisitorState(consent: true))) == VisitorState(consent: true), "the same key from base64")
        let random = VisitorStateKeys.random()
        let a = VisitorStateCodec(keys: random, lifetime: .seconds(60))
        #expect(a.open(a.seal(VisitorState(profileId: "x"))) == VisitorState(profileId: "x"))
        #expect(fromText.open(a.seal(VisitorState(profileId: "x"))) == nil)
    }
}
