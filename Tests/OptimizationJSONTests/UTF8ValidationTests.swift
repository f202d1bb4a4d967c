import Testing

@testable import OptimizationJSON

@Suite("UTF-8 validation")
struct UTF8ValidationTests {
    /// The standard library's strict validator is the reference.
    private static func reference(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    private static func check(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(UTF8Validation.isValid) == reference(bytes)
    }

    @Test func everyOneAndTwoByteSequenceAgreesWithTheStandardLibrary() {
        for first in 0...255 {
            #expect(Self.check([UInt8(first)]), "byte \(first)")
            for second in 0...255 where !Self.check([UInt8(first), UInt8(second)]) {
                Issue.record("bytes \(first) \(second)")
            }
        }
    }

    /// Every lead byte with every second byte and a spread of third bytes (and of fourth bytes
    /// after four-byte leads): overlong forms, surrogates, values above U+10FFFF and truncations
    /// are all in there.
    @Test func threeAndFourByteSequencesAgreeWithTheStandardLibrary() {
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xF0, 0xF4, 0xF5, 0xFF]
        for lead in 0xC0...0xFF {
            for second in 0...255 {
                for third in edges {
                    if !Self.check([UInt8(lead), UInt8(second), third]) { Issue.record("bytes \(lead) \(second) \(third)") }
                    guard lead >= 0xF0 else { continue }
                    for fourth in edges where !Self.check([UInt8(lead), UInt8(second), third, fourth]) {
                        Issue.record("bytes \(lead) \(second) \(third) \(fourth)")
                    }
                }
            }
        }
    }

    /// The eight-bytes-at-a-time ASCII path hands over to the byte loop at every offset.
    @Test func longRunsAgreeAtEveryOffset() {
        let ascii = Array("0123456789abcdefghijklmnopqrstuv".utf8)
        for position in 0...ascii.count {
            for insert in [[0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xC3], [0xED, 0xA0, 0x80], [0xFF]] as [[UInt8]] {
                var bytes = ascii
                bytes.insert(contentsOf: insert, at: position)
                #expect(Self.check(bytes), "\(insert) at \(position)")
            }
        }
    }
}
