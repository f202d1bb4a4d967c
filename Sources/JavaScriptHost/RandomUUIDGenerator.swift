/// Fast lowercase RFC 4122 version-4 UUID strings from a xoshiro256** generator seeded once from
/// the system's secure random source.
///
/// For identifiers that must be unique (message, view and context ids), not secret: ~50 ns
/// instead of Foundation's `UUID().uuidString` (~1 µs, which formats through `sprintf`). Not
/// thread-safe: the engine only uses it under its lock.
struct RandomUUIDGenerator {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next())
        if state == (0, 0, 0, 0) { state.0 = 0x9E37_79B9_7F4A_7C15 }
    }

    private mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }

    mutating func uuidString() -> String {
        uuidStrings(count: 1)
    }

    /// `count` UUIDs, concatenated (36 characters each, no separator).
    mutating func uuidStrings(count: Int) -> String {
        String(unsafeUninitializedCapacity: 36 * count) { buffer in
            var position = 0
            for _ in 0..<count { write(into: buffer, at: &position) }
            return position
        }
    }

    private mutating func write(into buffer: UnsafeMutableBufferPointer<UInt8>, at position: inout Int) {
        var high = next()
        var low = next()
        high = (high & ~0x0000_0000_0000_F000) | 0x0000_0000_0000_4000  // version 4
        low = (low & ~0xC000_0000_0000_0000) | 0x8000_0000_0000_0000  // variant 10
        let digits: StaticString = "0123456789abcdef"
        func emit(_ word: UInt64, nibbles: Int, from start: Int) {
            digits.withUTF8Buffer { table in
                for index in 0..<nibbles {
                    let shift = UInt64(60 - 4 * (start + index))
                    buffer[position] = table[Int((word >> shift) & 0xF)]
                    position += 1
                }
            }
        }
        emit(high, nibbles: 8, from: 0)
        buffer[position] = UInt8(ascii: "-"); position += 1
        emit(high, nibbles: 4, from: 8)
        buffer[position] = UInt8(ascii: "-"); position += 1
        emit(high, nibbles: 4, from: 12)
        buffer[position] = UInt8(ascii: "-"); position += 1
        emit(low, nibbles: 4, from: 0)
        buffer[position] = UInt8(ascii: "-"); position += 1
        emit(low, nibbles: 12, from: 4)
    }
}
