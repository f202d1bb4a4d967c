import Crypto
import Foundation
import Optimization
@testable import OptimizationWeb
import Testing

/// Sealing a state that ``VisitorStateCodec`` opened (a cookie's renewal) copies the base64url of
/// the unchanged part of its payload from the opened text instead of encoding it again; the
/// result is byte for byte what sealing an equal new state gives, and a changed state is sealed
/// anew.
@Suite struct ResealingOpenedStateTests {
    typealias Format = SealedVisitorStateWireFormatTests

    static func state() throws -> VisitorState {
        VisitorState(profileId: "8c7f3b2e-4d1a-4f6b-9e2c-5a0d7b3c1e9f", consent: true, selections: try Format.selections(), nonce: VisitorNonce.make())
    }

    /// The same fields, without the text they were opened from.
    static func fresh(_ state: VisitorState) -> VisitorState {
        VisitorState(profileId: state.profileId, consent: state.consent, selections: state.selections, nonce: state.nonce)
    }

    @Test func anUnchangedOpenedStateSealsToTheSameTextAsANewOne() throws {
        let clock = ManualClock(start: Format.start)
        let codec = try Format.codec(clock: clock)
        let sealed = codec.seal(try Self.state())
        let opened = try #require(codec.open(sealed))
        #expect(opened.opened?.sealedText == sealed, "an opened state remembers its text")
        #expect(codec.seal(opened) == sealed, "same clock, same state: the identical text")
        for step in [1, 2, 3, 999, 86_400_000] {
            clock.advance(by: .milliseconds(Int64(step)))
            let renewed = codec.seal(opened)
            #expect(renewed == codec.seal(Self.fresh(opened)), "after \(step) ms")
            #expect(renewed != sealed)
            let reopened = try #require(codec.openWithExpiry(renewed))
            #expect(reopened.state == opened)
            #expect(reopened.expiresAt == clock.now() + 3_600_000, "a new expiry")
        }
        #expect(codec.rejectedCount == 0)
    }

    @Test func theUnchangedPartIsCopiedOnlyWhenTheNewPayloadMatchesTheOpenedOne() throws {
        let clock = ManualClock(start: Format.start)
        let codec = try Format.codec(clock: clock)
        let opened = try #require(codec.open(codec.seal(try Self.state())))
        let origin = try #require(opened.opened)
        func copies(_ valueJSON: String, digits: String = "1767229200123") -> Bool {
            var digits = digits, value = valueJSON
            return digits.withUTF8 { digits in
                value.withUTF8 { value in
                    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 8_192) { output in
                        origin.copyUnchangedEncoding(digits: digits, value: value, into: output.baseAddress!)
                    }
                }
            }
        }
        let unchanged = String(origin.payload.utf8.dropFirst(#"{"exp":1767229200000,"v":"#.utf8.count).dropLast())!
        #expect(copies(unchanged))
        #expect(!copies(unchanged, digits: "176722920012"), "fewer digits")
        #expect(!copies(unchanged, digits: "17672292001234"), "more digits")
        #expect(!copies(unchanged.replacingOccurrences(of: "\"c\":true", with: "\"c\":fals")), "same length, other bytes")
        #expect(!copies(unchanged + " "))
        #expect(!copies("{}"))
    }

    @Test func aChangedOpenedStateIsSealedAnew() throws {
        let clock = ManualClock(start: Format.start)
        let codec = try Format.codec(clock: clock)
        let opened = try #require(codec.open(codec.seal(try Self.state())))
        clock.advance(by: .milliseconds(7))
        var changes: [VisitorState] = []
        for change in 0..<8 {
            var state = opened
            switch change {
            case 0: state.profileId = "8c7f3b2e-4d1a-4f6b-9e2c-5a0d7b3c1e9e"  // same length
            case 1: state.profileId = nil
            case 2: state.consent = false
            case 3: state.consent = nil
            case 4: state.selections = .empty
            case 5: state.selections = nil
            case 6: state.nonce = VisitorNonce.make()
            default: state.nonce = nil
            }
            changes.append(state)
        }
        for state in changes {
            let sealed = codec.seal(state)
            #expect(sealed == codec.seal(Self.fresh(state)))
            #expect(codec.open(sealed) == state)
        }
        #expect(codec.rejectedCount == 0)
    }

    /// A payload another writer (a key holder, or a later version) sealed: whitespace, other
    /// members, a byte order mark, another member order. Sealed again, it is what this version
    /// writes for the state, never the opened bytes.
    @Test func aPayloadOfAnotherWriterIsWrittenAsThisVersionWritesIt() throws {
        let clock = ManualClock(start: Format.start)
        let codec = try Format.codec(clock: clock)
        for payload in [
            Array(#"{"exp":1767229200000,"v":{"p":"a","c":true,"later":1}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"c":true,"p":"a"}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"p":"a","c":true} }"#.utf8),
            Array(#"{"exp":1767229200000, "v":{"p":"a","c":true}}"#.utf8),
            Array(#"{"v":{"p":"a","c":true},"exp":1767229200000}"#.utf8),
            [0xEF, 0xBB, 0xBF] + Array(#"{"exp":1767229200000,"v":{"p":"a","c":true}}"#.utf8),
            Array(#"{"exp":1767229200000,"v":{"p":"\u0061","c":true}}"#.utf8),
        ] {
            let opened = try #require(codec.open(Format.referenceText(payload: payload, key: Format.keyA)), "\(String(decoding: payload, as: UTF8.self))")
            #expect(opened == VisitorState(profileId: "a", consent: true))
            #expect(codec.seal(opened) == Format.referenceText(valueJSON: #"{"p":"a","c":true}"#), "\(String(decoding: payload, as: UTF8.self))")
        }
    }

    @Test func aStateOpenedByOneCodecIsSealedByAnotherWithItsOwnKey() throws {
        let clock = ManualClock(start: Format.start)
        let first = try Format.codec([Format.keyA], clock: clock)
        let second = try Format.codec([Format.keyB], clock: clock)
        let opened = try #require(first.open(first.seal(try Self.state())))
        clock.advance(by: .milliseconds(1))
        let sealed = second.seal(opened)
        #expect(sealed == second.seal(Self.fresh(opened)))
        #expect(second.open(sealed) == opened)
        #expect(first.open(sealed) == nil)
    }

    @Test func theOpenedTextIsNotPartOfTheState() throws {
        let codec = try Format.codec()
        let state = try Self.state()
        let opened = try #require(codec.open(codec.seal(state)))
        #expect(opened.opened != nil)
        #expect(state.opened == nil)
        #expect(opened == state)
        var changed = opened
        changed.consent = false
        #expect(changed != state)
    }
}
