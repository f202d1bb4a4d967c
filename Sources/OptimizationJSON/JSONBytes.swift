/// The bytes of a JSON text with the lexical rules that ``JSONParser`` and ``JSONTapeScanner``
/// share: whitespace, literals, the number grammar and hex digits. One definition, so the two
/// readers cannot drift apart on what a number or a literal is.
///
/// Reads are bounds-checked against `count` by hand; the buffer must outlive the value.
struct JSONBytes {
    let base: UnsafePointer<UInt8>?
    let count: Int

    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        base = buffer.baseAddress
        count = buffer.count
    }

    @inline(__always)
    subscript(offset: Int) -> UInt8 {
        base.unsafelyUnwrapped[offset]
    }

    @inline(__always)
    func peek(_ index: Int, _ expected: UInt8) -> Bool {
        index < count && self[index] == expected
    }

    @inline(__always)
    func skipWhitespace(_ index: inout Int) {
        while index < count {
            switch self[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// At a `-` or digit: moves `index` past an RFC 8259 number. Returns nil when it is one, else
    /// what was expected where `index` stopped (for the parser's error).
    func skipNumber(_ index: inout Int) -> String? {
        if peek(index, UInt8(ascii: "-")) { index += 1 }
        guard index < count, Self.isDigit(self[index]) else { return "a digit" }
        if self[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits(&index)
        }
        if peek(index, UInt8(ascii: ".")) {
            index += 1
            guard index < count, Self.isDigit(self[index]) else { return "a digit after '.'" }
            skipDigits(&index)
        }
        if peek(index, UInt8(ascii: "e")) || peek(index, UInt8(ascii: "E")) {
            index += 1
            if peek(index, UInt8(ascii: "+")) || peek(index, UInt8(ascii: "-")) { index += 1 }
            guard index < count, Self.isDigit(self[index]) else { return "an exponent digit" }
            skipDigits(&index)
        }
        return nil
    }

    /// Moves `index` past `literal` when the bytes there spell it; leaves it unchanged otherwise.
    func skipLiteral(_ literal: StaticString, _ index: inout Int) -> Bool {
        let length = literal.utf8CodeUnitCount
        guard index + length <= count else { return false }
        let expected = literal.utf8Start
        for offset in 0..<length where self[index + offset] != expected[offset] {
            return false
        }
        index += length
        return true
    }

    /// The value of a hex digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte &- UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte &- UInt8(ascii: "a") &+ 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte &- UInt8(ascii: "A") &+ 10
        default: return nil
        }
    }

    @inline(__always)
    static func isDigit(_ value: UInt8) -> Bool {
        value &- UInt8(ascii: "0") < 10
    }

    @inline(__always)
    private func skipDigits(_ index: inout Int) {
        while index < count, Self.isDigit(self[index]) { index += 1 }
    }
}
