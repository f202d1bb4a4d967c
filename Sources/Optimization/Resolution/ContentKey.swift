/// A cache key for immutable JSON content: length plus two independent 64-bit hashes (FNV-1a and
/// the process-seeded standard hasher) of its text. Identical text ⇒ identical key; different
/// text colliding on all three is not a practical concern, and the seeded half cannot be
/// targeted from outside the process.
enum ContentKey {
    static func make(for text: String, salt: String = "") -> String {
        var fnv: UInt64 = 0xcbf2_9ce4_8422_2325
        var hasher = Hasher()
        var length = 0
        var copy = text
        copy.withUTF8 { bytes in
            length = bytes.count
            for byte in bytes {
                fnv ^= UInt64(byte)
                fnv &*= 0x0000_0100_0000_01B3
            }
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        hasher.combine(salt)
        let seeded = UInt64(bitPattern: Int64(hasher.finalize()))
        return "\(length)-\(String(fnv, radix: 36))-\(String(seeded, radix: 36))" + (salt.isEmpty ? "" : "-\(salt)")
    }
}
