import CoreMetrics
import Crypto
import Foundation
import OptimizationJSON
import Synchronization
import HostPlatform

extension SignedValueCodec {
    // MARK: Verification

    enum Reason: String, Error, CaseIterable {
        case malformed, signature, expired
    }

    func verify(_ text: String) -> Result<(value: JSONValue, expiresAt: Double), Reason> {
        let json: JSONValue
        switch verifiedPayload(text, { try? JSONValue(jsonText: $0) }) {
        case .success(let value): json = value
        case .failure(let reason): return .failure(reason)
        }
        guard case .object(let members) = json, let expiryNumber = members["exp"]?.numberValue, let value = members["v"]
        else { return .failure(.malformed) }
        let expiry = Self.number(expiryNumber.text)
        guard clock.now() < expiry else { return .failure(.expired) }
        return .success((value, expiry))
    }

    /// ``openWithExpiry(_:)`` without building the value: the verified payload indexed as a
    /// ``JSONTape`` (validated as the parser would, but recording only the payload's members and
    /// the value down to `recordedDepth` levels: 0 the value alone, 1 also its members, …), the
    /// node of the value on it, and the expiry. Nil (counted) for every text
    /// ``openWithExpiry(_:)`` refuses, for the same reason.
    func openTapeWithExpiry(_ text: String, recordedDepth: Int) -> (payload: JSONTape, value: Int, expiresAt: Double)? {
        let payloadDepth = recordedDepth < Int.max ? max(0, recordedDepth) + 1 : .max
        let tape: JSONTape
        switch verifiedPayload(text, { Self.scan($0, recordedDepth: payloadDepth) }) {
        case .success(let scanned): tape = scanned
        case .failure(let reason):
            rejections.record(reason)
            return nil
        }
        let root = JSONTape.rootNode
        guard tape.kind(of: root) == .object, let expiryNode = tape.member("exp", of: root), tape.kind(of: expiryNode) == .number,
              let value = tape.member("v", of: root)
        else {
            rejections.record(.malformed)
            return nil
        }
        let expiry = Self.number(tape.text(of: expiryNode))
        guard clock.now() < expiry else {
            rejections.record(.expired)
            return nil
        }
        return (tape, value, expiry)
    }

    /// The payload of `text` as `read` makes it from the decoded text (nil: not JSON, refused as
    /// `malformed`), when `text` is a value signed by one of the keys for this purpose and
    /// not longer than ``maximumLength``. Decoded bytes that are not UTF-8 are refused as
    /// `malformed` before `read` (the JSON readers refuse them too).
    private func verifiedPayload<Payload>(_ text: String, _ read: (String) -> Payload?) -> Result<Payload, Reason> {
        guard text.utf8.count <= maximumLength else { return .failure(.malformed) }
        var contiguous = text
        switch contiguous.withUTF8({ verifiedPayload($0, read) }) {
        case .success(let payload): return .success(payload)
        case .failure(.notASCII): return .failure(Self.refusal(ofNonASCII: text))
        case .failure(.refused(let reason)): return .failure(reason)
        }
    }

    private enum PayloadRefusal: Error {
        case refused(Reason)
        /// The text has a byte outside ASCII: never a sealed value; the reason is
        /// ``refusal(ofNonASCII:)``'s.
        case notASCII
    }

    /// The payload's JSON as `read` makes it from the decoded text (nil: not JSON), from the
    /// UTF-8 of a text of at most ``maximumLength`` bytes, when it is `v1.<payload>.<mac>` with a
    /// MAC of one of the keys; the MAC is checked before the payload is decoded.
    ///
    /// A text of a sealed value's shape (`v1.` first, a `.` before the last 43 characters) is
    /// first taken on trust of that shape: the MAC at the end is checked, then the payload
    /// decoded (which refuses every character outside the alphabet, a `.` or a byte outside
    /// ASCII among them). When all of that holds, the text is one that
    /// ``classifiedPayload(_:_:knownMAC:)`` accepts, with the same payload; any other text goes
    /// through it, which alone names the reason of a refusal (reusing what the MAC check found,
    /// so a refused text costs one HMAC per key at most, as before).
    private func verifiedPayload<Payload>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ read: (String) -> Payload?
    ) -> Result<Payload, PayloadRefusal> {
        let macLength = Base64URL.encodedLength(SHA256.byteCount)
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 3 + 1 + macLength, base[0] == UInt8(ascii: "v"), base[1] == UInt8(ascii: "1"),
              base[2] == UInt8(ascii: "."), base[count - macLength - 1] == UInt8(ascii: ".")
        else { return classifiedPayload(bytes, read, knownMAC: nil) }
        let payload = UnsafeBufferPointer(start: base + 3, count: count - macLength - 4)
        guard let matched = macMatches(payload: payload, macText: UnsafeBufferPointer(start: base + count - macLength, count: macLength))
        else { return classifiedPayload(bytes, read, knownMAC: nil) }
        guard matched, let decoded = Self.decodedText(payload) else { return classifiedPayload(bytes, read, knownMAC: matched) }
        guard let json = read(decoded) else { return .failure(.refused(.malformed)) }
        return .success(json)
    }

    /// Whether the MAC that `macText` (base64url, 43 characters) holds is one of the keys' for
    /// `payload`; nil when `macText` is not the base64url of 32 bytes.
    private func macMatches(payload: UnsafeBufferPointer<UInt8>, macText: UnsafeBufferPointer<UInt8>) -> Bool? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: SHA256.byteCount) { mac -> Bool? in
            let macBytes = mac.baseAddress.unsafelyUnwrapped
            guard Base64URL.decode(macText, into: macBytes) == SHA256.byteCount else { return nil }
            let expected = UnsafeRawBufferPointer(start: macBytes, count: SHA256.byteCount)
            let payloadBytes = UnsafeRawBufferPointer(payload)
            // `==` of swift-crypto's authentication code compares in constant time.
            return macs.contains(where: { $0.authenticationCode(for: payloadBytes) == expected })
        }
    }

    /// ``verifiedPayload(_:_:)`` by the format's full reading, which names the reason of each
    /// refusal: the text split at its dots and checked for ASCII, its parts checked in order
    /// (malformed before signature). `knownMAC`: whether the MAC at the text's end matched, when
    /// that was already found for the same payload and MAC (not computed again).
    private func classifiedPayload<Payload>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ read: (String) -> Payload?, knownMAC: Bool?
    ) -> Result<Payload, PayloadRefusal> {
        guard let base = bytes.baseAddress else { return .failure(.refused(.malformed)) }
        let count = bytes.count
        // The positions of the first two dots, the number of dots and whether every byte is
        // ASCII, eight bytes at a time: a word is looked at byte by byte only when it has a dot.
        var firstDot = -1
        var secondDot = -1
        var dots = 0
        var highBits: UInt64 = 0
        var index = 0
        while index < count {
            let wordLength = min(8, count - index)
            var word: UInt64 = 0
            if wordLength == 8 {
                word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            } else {
                for offset in 0..<wordLength { word |= UInt64(base[index + offset]) << (8 * UInt64(offset)) }
            }
            highBits |= word
            if Self.hasDot(word) {
                for offset in 0..<wordLength where base[index + offset] == UInt8(ascii: ".") {
                    dots += 1
                    if dots == 1 { firstDot = index + offset } else if dots == 2 { secondDot = index + offset }
                }
            }
            index += wordLength
        }
        guard highBits & 0x8080_8080_8080_8080 == 0 else { return .failure(.notASCII) }
        guard dots == 2, firstDot == 2, base[0] == UInt8(ascii: "v"), base[1] == UInt8(ascii: "1"), secondDot > firstDot + 1
        else { return .failure(.refused(.malformed)) }
        let payload = UnsafeBufferPointer(start: base + firstDot + 1, count: secondDot - firstDot - 1)
        let macText = UnsafeBufferPointer(start: base + secondDot + 1, count: count - secondDot - 1)
        guard macText.count == Base64URL.encodedLength(SHA256.byteCount) else { return .failure(.refused(.malformed)) }
        // With two dots and a 43-character MAC, the MAC is the one a known result was found for.
        guard let matched = knownMAC ?? macMatches(payload: payload, macText: macText) else { return .failure(.refused(.malformed)) }
        guard matched else { return .failure(.refused(.signature)) }
        // Decoded straight into the string the reader keeps (no intermediate buffer).
        guard let decoded = Self.decodedText(payload), let json = read(decoded) else { return .failure(.refused(.malformed)) }
        return .success(json)
    }

    /// The text of the base64url `payload`, or nil when it is not base64url or its bytes are not
    /// UTF-8. Decoded into the string's own storage, validated there.
    private static func decodedText(_ payload: UnsafeBufferPointer<UInt8>) -> String? {
        var isText = true
        let text = String(unsafeUninitializedCapacity: Base64URL.decodedLength(payload.count)) { buffer in
            guard let start = buffer.baseAddress, let written = Base64URL.decode(payload, into: start),
                  UTF8Validation.isValid(UnsafeBufferPointer(start: start, count: written))
            else {
                isText = false
                return 0
            }
            return written
        }
        return isText ? text : nil
    }

    /// ``JSONTape/scan(jsonData:maximumDepth:recordedDepth:)`` of UTF-8 `text`, indexing `text`
    /// itself (no copy) unless it starts with a byte order mark (which that reader skips).
    private static func scan(_ text: String, recordedDepth: Int) -> JSONTape? {
        var leading = text.utf8.makeIterator()
        let hasByteOrderMark = leading.next() == 0xEF && leading.next() == 0xBB && leading.next() == 0xBF
        guard hasByteOrderMark else { return JSONTape.scan(text, recordedDepth: recordedDepth) }
        var text = text
        return text.withUTF8 { JSONTape.scan(jsonData: $0, recordedDepth: recordedDepth) }
    }

    /// Whether a byte of `word` is `.` (exact: the bytes that are not become nonzero after the
    /// xor, and a subtraction borrows into a high bit only through a zero byte).
    @inline(__always)
    private static func hasDot(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let xored = word ^ (ones &* UInt64(UInt8(ascii: ".")))
        return (xored &- ones) & ~xored & 0x8080_8080_8080_8080 != 0
    }

    /// The reason a text with a byte outside ASCII is refused, as the format's reading of it
    /// (split at its `.` characters) gives it: `malformed` unless it has the three parts of a
    /// value with a well-formed MAC, then `signature` (its payload cannot be one this codec
    /// signed: sealed payloads are ASCII).
    private static func refusal(ofNonASCII text: String) -> Reason {
        let parts = text.split(separator: ".", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.version, !parts[1].isEmpty,
              let mac = Base64URL.decode(parts[2]), mac.count == SHA256.byteCount
        else { return .malformed }
        return .signature
    }

    /// The value of a JSON number's text, as `JSONNumber.doubleValue` reads it.
    private static func number(_ text: String) -> Double {
        // Up to 15 digits: an integer a Double holds exactly, without the general parser.
        var integer: Int64 = 0
        var digits = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 15 else { return Double(text) ?? .nan }
            integer = integer * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? Double(integer) : (Double(text) ?? .nan)
    }
}
