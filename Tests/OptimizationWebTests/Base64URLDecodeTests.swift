@testable import OptimizationWeb
import Testing

/// The table-driven base64url decoder that opening a sealed value uses (``Base64URL/decode(_:into:)``)
/// decodes and refuses exactly what the plain one (``Base64URL/decode(_:acceptingStandardAlphabet:)``)
/// does, and never writes past ``Base64URL/decodedLength(_:)``.
@Suite struct Base64URLDecodeTests {
    @Test func theTableDecoderDecodesAsThePlainOne() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var generator = SystemRandomNumberGenerator()
        func tableDecoded(_ text: [UInt8]) -> [UInt8]? {
            text.withUnsafeBufferPointer { text in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, Base64URL.decodedLength(text.count))) { output in
                    Base64URL.decode(text, into: output.baseAddress!).map { Array(output[..<$0]) }
                }
            }
        }
        for length in 0..<70 {
            for _ in 0..<20 {
                let valid = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
                #expect(tableDecoded(valid) == Base64URL.decode(Substring(String(decoding: valid, as: UTF8.self))), "\(String(decoding: valid, as: UTF8.self))")
                guard length > 0 else { continue }
                var invalid = valid
                invalid[Int.random(in: 0..<length, using: &generator)] = [UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "."), 0, 0x80, 0xFF].randomElement(using: &generator)!
                #expect(tableDecoded(invalid) == nil)
            }
        }
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Array(SealedVisitorStateWireFormatTests.base64URL(bytes).utf8)
        #expect(tableDecoded(text) == bytes)
    }

    @Test func theTableDecoderWritesNothingPastTheDecodedLength() {
        for length in [0, 2, 3, 4, 6, 7, 8, 10, 11, 12, 16, 40, 41, 43] {
            let text = Array(String(repeating: "_", count: length).utf8)
            let decodedLength = Base64URL.decodedLength(length)
            var buffer = [UInt8](repeating: 0xAA, count: decodedLength + 8)
            let written = text.withUnsafeBufferPointer { text in
                buffer.withUnsafeMutableBufferPointer { Base64URL.decode(text, into: $0.baseAddress!) }
            }
            if length % 4 == 0 { #expect(written == decodedLength) }
            #expect(buffer[decodedLength...].allSatisfy { $0 == 0xAA }, "\(length)")
        }
    }
}
