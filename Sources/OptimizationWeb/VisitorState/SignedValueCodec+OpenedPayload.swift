import Crypto
import Foundation

extension SignedValueCodec {
    /// A sealed text that opened, with its decoded payload (`{"exp":<ms>,"v":<value>}`): what
    /// ``seal(valueText:reusing:)`` needs to seal the same value again without encoding it again.
    ///
    /// Holds the two strings (shared with the caller's text and the opened payload, not
    /// copied). One thing is taken as given: that ``payload`` is what the base64url of
    /// ``sealedText`` decodes to (``VisitorStateCodec`` makes it from a text that opened; a
    /// payload read without its byte order mark has another length, and is not copied from).
    /// The rest is checked: ``copyUnchangedEncoding(digits:value:into:)`` compares the payload
    /// with the new one byte for byte, and the text's length with the payload's encoding, and
    /// copies nothing otherwise. A value type, `Sendable`.
    struct OpenedPayload: Sendable {
        /// The text that opened: `v1.<payload>.<mac>`.
        let sealedText: String
        /// The decoded payload of ``sealedText``.
        let payload: String

        /// When the payload `{"exp":<digits>,"v":<value>}` differs from ``payload`` at most in
        /// the digits (same bytes elsewhere, as many digits): writes its base64url at `output`
        /// (room for `Base64URL.encodedLength` of its byte count), the groups of three bytes up to
        /// the digits' end encoded, the rest copied from ``sealedText``, and returns true.
        /// Otherwise writes nothing and returns false.
        func copyUnchangedEncoding(digits: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Bool {
            let expiryOpening = UnsafeBufferPointer(start: SignedValueCodec.expiryOpening.utf8Start, count: SignedValueCodec.expiryOpening.utf8CodeUnitCount)
            let valueOpening = UnsafeBufferPointer(start: SignedValueCodec.valueOpening.utf8Start, count: SignedValueCodec.valueOpening.utf8CodeUnitCount)
            let digitsEnd = expiryOpening.count + digits.count
            let valueStart = digitsEnd + valueOpening.count
            let byteCount = valueStart + value.count + 1
            let encodedCount = Base64URL.encodedLength(byteCount)
            var sealedText = sealedText
            var payload = payload
            return sealedText.withUTF8 { sealed in
                payload.withUTF8 { old in
                    // The text opened, so it is `v1.` + the payload's base64url + `.` + a 43-character MAC.
                    let macCount = Base64URL.encodedLength(SHA256.byteCount)
                    guard let sealedBytes = sealed.baseAddress, old.count == byteCount,
                          sealed.count == 3 + encodedCount + 1 + macCount, sealed[3 + encodedCount] == UInt8(ascii: "."),
                          Self.equal(old, from: 0, expiryOpening), Self.equal(old, from: digitsEnd, valueOpening),
                          Self.equal(old, from: valueStart, value), old[byteCount - 1] == UInt8(ascii: "}")
                    else { return false }
                    // The bytes from the first whole group after the digits on are the same in both
                    // payloads, so are their characters: encode the groups before, copy the rest.
                    let groups = (digitsEnd + 2) / 3
                    let copied = 4 * groups
                    // Unreachable otherwise (the digits end at least six bytes before the payload).
                    guard 3 * groups <= valueStart, copied <= encodedCount else { return false }
                    var encoder = Base64URL.Encoder(output)
                    encoder.append(expiryOpening)
                    encoder.append(digits)
                    encoder.append(UnsafeBufferPointer(rebasing: valueOpening[..<(3 * groups - digitsEnd)]))
                    encoder.finish()
                    (output + copied).update(from: sealedBytes + 3 + copied, count: encodedCount - copied)
                    return true
                }
            }
        }

        /// Whether `bytes` starting at `offset` are `expected` (within bounds).
        private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int, _ expected: UnsafeBufferPointer<UInt8>) -> Bool {
            guard offset >= 0, offset + expected.count <= bytes.count else { return false }
            guard let base = bytes.baseAddress, let other = expected.baseAddress, expected.count > 0 else { return true }
            return memcmp(base + offset, other, expected.count) == 0
        }
    }
}
