import Crypto
import MetricsTestKit
import Optimization
import Testing

/// Opening checks a text of a sealed value's shape (`v1.`, a `.` before the last 43 characters)
/// by its MAC first, and reads any other text, or one whose MAC or payload does not check out,
/// by the format's full reading: each refusal keeps the reason that reading gives, also for
/// texts a key holder signed whose payload is not base64url.
@Suite struct SealedValueRefusalReasonTests {
    typealias Format = SealedVisitorStateWireFormatTests

    /// `v1.<payloadText>.<MAC of payloadText with keyA>`: any payload characters, signed.
    static func signed(_ payloadText: String) -> String {
        let signed = Array("v1".utf8) + [0] + Array(VisitorStateCodec.purpose.utf8) + [0] + Array(payloadText.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Format.keyA))
        return "v1." + payloadText + "." + Format.base64URL(Array(mac))
    }

    @Test func eachRefusalKeepsItsReason() throws {
        let metrics = TestMetrics()
        let codec = try Format.codec(metrics: metrics)
        func reason(_ name: String) -> Int64 {
            metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", name)])
        }
        let genuine = codec.seal(VisitorState(profileId: "p", consent: true))
        let payload = String(genuine.dropFirst(3).prefix { $0 != "." })
        let mac = String(genuine.suffix(43))
        let cases: [(text: String, reason: String)] = [
            (Self.signed(payload + ".A"), "malformed"),  // a third dot, signed
            (Self.signed(payload + "=="), "malformed"),  // outside the alphabet, signed
            (Self.signed(payload + "A"), "malformed"),  // an impossible length, signed
            (Self.signed("e30"), "malformed"),  // `{}`: signed, but no expiry
            (Self.signed(payload + "\u{e9}"), "signature"),  // outside ASCII: never sealed, signed or not
            ("v1." + payload + "\u{e9}." + mac, "signature"),
            ("v1." + payload + "." + String(mac.dropLast()) + "!", "malformed"),  // the MAC outside the alphabet
            ("v1." + payload + "." + String(mac.dropLast()) + "B", "malformed"),  // the MAC's unused bits
            ("v1." + payload + "." + String(mac.dropLast()) + (mac.last == "A" ? "E" : "A"), "signature"),
            ("v1." + String(payload.dropLast()) + (payload.last == "A" ? "B" : "A") + "." + mac, "signature"),
            ("v2." + payload + "." + mac, "malformed"),
            ("v1." + payload + "." + mac + "A", "malformed"),
            ("v1.." + mac, "malformed"),
            ("v1.A." + mac, "signature"),
            ("v1.AA." + mac, "signature"),
            ("." + payload + "." + mac, "malformed"),
            ("v1." + payload + mac, "malformed"),
        ]
        var expected: [String: Int64] = ["malformed": 0, "signature": 0, "expired": 0]
        for (text, name) in cases {
            #expect(codec.open(text) == nil, "\(text)")
            expected[name, default: 0] += 1
            #expect(reason(name) == expected[name], "\(text): \(name)")
        }
        #expect(codec.rejectedCount == cases.count)
        #expect(codec.open(genuine) == VisitorState(profileId: "p", consent: true))
    }
}
