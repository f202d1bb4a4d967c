import OptimizationJSON
/// A cache key for immutable JSON content: length plus two independent 64-bit hashes of its
/// UTF-8 text (a word-at-a-time multiply-xorshift hash, and the process-seeded standard hasher).
/// Identical text ⇒ identical key; different text colliding on all three is not a practical
/// concern, and the seeded half cannot be targeted from outside the process.
package enum ContentKey {
    package static func make(for text: String, salt: String = "") -> String {
        var mixed: UInt64 = 0xcbf2_9ce4_8422_2325
        var hasher = Hasher()
        var length = 0
        var copy = text
        copy.withUTF8 { bytes in
            length = bytes.count
            mixed = wordHash(bytes, seed: mixed)
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        hasher.combine(salt)
        let seeded = UInt64(bitPattern: Int64(hasher.finalize()))
        return "\(length)-\(String(mixed, radix: 36))-\(String(seeded, radix: 36))" + (salt.isEmpty ? "" : "-\(salt)")
    }

    /// Eight bytes per step: xor, multiply by a 64-bit odd constant, fold the high half down.
    package static func wordHash(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = (hash ^ word) &* 0x0000_0100_0000_01B3 &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 29
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < raw.count {
            tail |= UInt64(raw[offset]) << shift
            shift += 8
            offset += 1
        }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 32
        return hash
    }
}
