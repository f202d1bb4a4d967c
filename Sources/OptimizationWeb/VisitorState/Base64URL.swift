/// Base64 with the URL- and cookie-safe alphabet (`A–Z a–z 0–9 - _`), without padding.
///
/// The sealing and opening paths (``SignedValueCodec``) use the buffer forms
/// (``Encoder``, ``decode(_:into:)``): they write into storage the caller allocated once, read
/// three bytes or four characters per step, and look characters up in tables.
enum Base64URL {
    /// The 64 characters, by value (a constant in the binary: no lazy initialization to check).
    private static let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// The value of each byte as a character of the URL alphabet, 0xFF when it is not one.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in UnsafeBufferPointer(start: alphabet.utf8Start, count: 64).enumerated() {
            table[Int(character)] = UInt8(value)
        }
        return table
    }()

    /// The number of characters of the text of `byteCount` bytes.
    static func encodedLength(_ byteCount: Int) -> Int {
        (byteCount * 4 + 2) / 3
    }

    /// The text of `bytes`.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = bytes.count
        let length = encodedLength(count)
        guard length > 0 else { return "" }
        let encodeContiguous = { (buffer: UnsafeBufferPointer<UInt8>) -> String in
            String(unsafeUninitializedCapacity: length) { output in
                var encoder = Encoder(output.baseAddress.unsafelyUnwrapped)
                encoder.append(buffer)
                encoder.finish()
                return length
            }
        }
        if let text = bytes.withContiguousStorageIfAvailable(encodeContiguous) { return text }
        return Array(bytes).withUnsafeBufferPointer(encodeContiguous)
    }

    /// Writes the text of bytes given in any number of pieces, in order, at a pointer with room
    /// for ``encodedLength(_:)`` of their total count (the caller's promise: nothing is checked).
    struct Encoder {
        private var output: UnsafeMutablePointer<UInt8>
        /// Bytes of an incomplete group of three from the previous piece (the first
        /// `pendingCount` of them).
        private var pending: (UInt8, UInt8) = (0, 0)
        private var pendingCount = 0

        init(_ output: UnsafeMutablePointer<UInt8>) {
            self.output = output
        }

        mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            let count = bytes.count
            var index = 0
            // Complete the group a previous piece began.
            while pendingCount > 0, index < count {
                if pendingCount == 1 {
                    pending.1 = base[index]
                    pendingCount = 2
                } else {
                    write(pending.0, pending.1, base[index])
                    pendingCount = 0
                }
                index += 1
            }
            while index + 3 <= count {
                write(base[index], base[index + 1], base[index + 2])
                index += 3
            }
            if index < count {
                pending.0 = base[index]
                pendingCount = 1
                if index + 1 < count {
                    pending.1 = base[index + 1]
                    pendingCount = 2
                }
            }
        }

        mutating func append(_ byte: UInt8) {
            withUnsafePointer(to: byte) { append(UnsafeBufferPointer(start: $0, count: 1)) }
        }

        /// Writes the characters of the last, incomplete group (no padding).
        mutating func finish() {
            let table = Base64URL.alphabet.utf8Start
            switch pendingCount {
            case 1:
                output[0] = table[Int(pending.0 >> 2)]
                output[1] = table[Int((pending.0 & 0x03) << 4)]
                output += 2
            case 2:
                output[0] = table[Int(pending.0 >> 2)]
                output[1] = table[Int((pending.0 & 0x03) << 4 | pending.1 >> 4)]
                output[2] = table[Int((pending.1 & 0x0F) << 2)]
                output += 3
            default:
                break
            }
            pendingCount = 0
        }

        @inline(__always)
        private mutating func write(_ a: UInt8, _ b: UInt8, _ c: UInt8) {
            let table = Base64URL.alphabet.utf8Start
            let group = UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
            output[0] = table[Int(group >> 18)]
            output[1] = table[Int(group >> 12 & 0x3F)]
            output[2] = table[Int(group >> 6 & 0x3F)]
            output[3] = table[Int(group & 0x3F)]
            output += 4
        }
    }

    /// The number of bytes of a text of `characterCount` characters (when it is valid).
    static func decodedLength(_ characterCount: Int) -> Int {
        characterCount * 3 / 4
    }

    /// Decodes the URL-alphabet text `text` into `output`, which has room for
    /// ``decodedLength(_:)`` bytes; the number of bytes written, or nil for a character outside
    /// the alphabet, an impossible length or unused bits that are not zero (what
    /// ``decode(_:acceptingStandardAlphabet:)`` refuses without the standard alphabet).
    ///
    /// Four characters at a time through ``groupTables``: four loads, three ors and one check
    /// per group, and one four-byte store while another group follows (its bytes overwrite the
    /// fourth), so nothing is written past ``decodedLength(_:)``.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int? {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        guard let input = text.baseAddress else { return 0 }
        var index = 0
        var written = 0
        let complete = groupTables.withUnsafeBufferPointer { tables -> Bool in
            let t0 = tables.baseAddress.unsafelyUnwrapped
            let t1 = t0 + 256, t2 = t0 + 512, t3 = t0 + 768
            let raw = UnsafeMutableRawPointer(output)
            // A four-byte store while at least four more characters follow this group.
            while index + 8 <= count {
                let group = t0[Int(input[index])] | t1[Int(input[index + 1])] | t2[Int(input[index + 2])] | t3[Int(input[index + 3])]
                guard group & invalidGroup == 0 else { return false }
                raw.storeBytes(of: group.littleEndian, toByteOffset: written, as: UInt32.self)
                index += 4
                written += 3
            }
            if index + 4 <= count {
                let group = t0[Int(input[index])] | t1[Int(input[index + 1])] | t2[Int(input[index + 2])] | t3[Int(input[index + 3])]
                guard group & invalidGroup == 0 else { return false }
                output[written] = UInt8(truncatingIfNeeded: group)
                output[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                output[written + 2] = UInt8(truncatingIfNeeded: group >> 16)
                index += 4
                written += 3
            }
            return true
        }
        guard complete else { return nil }
        return values.withUnsafeBufferPointer { table -> Int? in
            let table = table.baseAddress.unsafelyUnwrapped
            switch count - index {
            case 2:
                let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                // The unused low bits of the last character must be zero: one text per byte sequence.
                guard (a | b) & 0x80 == 0, b & 0x0F == 0 else { return nil }
                output[written] = a << 2 | b >> 4
                written += 1
            case 3:
                let a = table[Int(input[index])], b = table[Int(input[index + 1])], c = table[Int(input[index + 2])]
                guard (a | b | c) & 0x80 == 0, c & 0x03 == 0 else { return nil }
                output[written] = a << 2 | b >> 4
                output[written + 1] = (b & 0x0F) << 4 | c >> 2
                written += 2
            default:
                break
            }
            return written
        }
    }

    /// Set in a group's word when one of its characters is not in the alphabet (valid
    /// characters contribute to the low 24 bits only).
    private static let invalidGroup: UInt32 = 0xFF00_0000

    /// Four tables of 256 words, one per position in a group of four characters: the
    /// character's six bits placed where they land in the group's three bytes (as a
    /// little-endian word: first byte lowest), or ``invalidGroup`` for a byte outside the alphabet.
    private static let groupTables: [UInt32] = {
        var tables = [UInt32](repeating: invalidGroup, count: 4 * 256)
        for (byte, value) in values.enumerated() where value != 0xFF {
            let bits = UInt32(value)
            tables[byte] = bits << 2
            tables[256 + byte] = bits >> 4 | (bits & 0x0F) << 12
            tables[512 + byte] = (bits >> 2) << 8 | (bits & 0x03) << 22
            tables[768 + byte] = bits << 16
        }
        return tables
    }()

    /// The bytes of `text`, or nil for a character outside the alphabet, an impossible length or
    /// unused bits that are not zero.
    /// - Parameter acceptingStandardAlphabet: also accept `+`, `/` and trailing `=` padding.
    static func decode(_ text: Substring, acceptingStandardAlphabet: Bool = false) -> [UInt8]? {
        var utf8 = text.utf8[...]
        if acceptingStandardAlphabet {
            while utf8.last == UInt8(ascii: "=") { utf8 = utf8.dropLast() }
        }
        guard utf8.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for character in utf8 {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            case UInt8(ascii: "+") where acceptingStandardAlphabet: value = 62
            case UInt8(ascii: "/") where acceptingStandardAlphabet: value = 63
            default: return nil
            }
            buffer = (buffer << 6) | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        // The unused low bits of the last character must be zero: one text per byte sequence.
        guard bits == 0 || buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
