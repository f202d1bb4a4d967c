/// A JSON number kept as its exact decimal text, so values round-trip unchanged: `12345` stays an
/// integer, `0.1` stays `0.1`, and integers beyond 2^53 (or beyond 64 bits) are not rounded.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's JSON literal, for example `12345`, `-0.5` or `1e-7`.
    public let text: String

    /// Wraps literal text already known to be a valid JSON number (the parser's path).
    init(validatedText: String) {
        text = validatedText
    }

    /// The integer `value`, exactly.
    public init(_ value: Int) {
        text = String(value)
    }

    /// Nil for NaN and infinities, which JSON cannot represent.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        if value == value.rounded(), abs(value) < 9.007_199_254_740_992e15 {
            text = String(Int64(value))
        } else {
            text = "\(value)"
        }
    }

    /// Parses JSON number text; nil when `text` is not a JSON number.
    public init?(text: String) {
        var parser = JSONParser(bytes: Array(text.utf8), maximumDepth: 1)
        guard let value = try? parser.parseDocument(), case .number(let number) = value else { return nil }
        self = number
    }

    /// True when the literal has no fraction or exponent.
    public var isIntegerLiteral: Bool {
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    /// The value as `Int` when it is a whole number that fits, else nil (fractions are never
    /// truncated).
    public var intValue: Int? {
        if isIntegerLiteral { return Int(text) }
        guard let double = Double(text), double == double.rounded(), abs(double) < 9.2e18 else { return nil }
        return Int(double)
    }

    /// The nearest `Double`.
    public var doubleValue: Double {
        Double(text) ?? .nan
    }

    public var description: String { text }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if lhs.text == rhs.text { return true }
        if lhs.isIntegerLiteral && rhs.isIntegerLiteral {
            // Integer literals are canonical in JSON (no leading zeros); only -0 and 0 differ in text.
            return (lhs.text == "-0" || lhs.text == "0") && (rhs.text == "-0" || rhs.text == "0")
        }
        return lhs.doubleValue == rhs.doubleValue
    }

    public func hash(into hasher: inout Hasher) {
        if isIntegerLiteral { hasher.combine(text == "-0" ? "0" : text) } else { hasher.combine(doubleValue) }
    }
}
