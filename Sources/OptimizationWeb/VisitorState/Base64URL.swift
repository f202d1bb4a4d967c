/// Base64 with the URL- and cookie-safe alphabet (`A–Z a–z 0–9 - _`), without padding.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The text of `bytes`.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }

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
