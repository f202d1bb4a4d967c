/// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates (U+D800–U+DFFF), nothing
/// above U+10FFFF, no truncated sequences.
///
/// The standard library's `String(validating:as:)` is generic and, on Linux, looks up type
/// metadata on every call: on the parser's hot path that was a third of the time spent on a
/// Contentful entry. This is a plain loop over the bytes, with an ASCII fast path eight bytes
/// at a time.
package enum UTF8Validation {
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            // Eight ASCII bytes at a time.
            while index + 8 <= count,
                  UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
            }
            guard index < count else { return true }
            let lead = base[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The allowed range of the second byte depends on the lead (RFC 3629 §4 table).
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return false
            }
            guard index + length <= count else { return false }
            let second = base[index + 1]
            guard second >= low, second <= high else { return false }
            var offset = 2
            while offset < length {
                guard base[index + offset] & 0xC0 == 0x80 else { return false }
                offset += 1
            }
            index += length
        }
        return true
    }
}
