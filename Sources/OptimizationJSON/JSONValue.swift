import OrderedCollections

/// A JSON document: the value type for Contentful entries, selections, profiles and events.
///
/// Objects keep their key order and numbers their exact text (``JSONNumber``), so what goes in
/// comes out unchanged. Equality is JSON equality: key order does not matter, numbers compare by
/// value. Build values with literals (`["sys": ["id": "x"], "n": 1]`), parse them with
/// ``init(jsonData:maximumDepth:)`` / ``init(jsonText:maximumDepth:)``, and print them with
/// ``jsonText(maximumDepth:)``.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its exact text.
    case number(JSONNumber)
    /// A string (any Unicode, including U+2028/U+2029 and NUL).
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object, with its members in the order they were written or inserted.
    case object(OrderedDictionary<String, JSONValue>)

    /// The member `key` of an object, else nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array, else nil (also when out of range).
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string, if this is a string; else nil.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The boolean, if this is `true` or `false`; else nil.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number, if this is a number; else nil.
    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// Whole numbers only; fractions give nil.
    public var intValue: Int? { numberValue?.intValue }

    /// The number as the nearest `Double`, if this is a number; else nil.
    public var doubleValue: Double? { numberValue?.doubleValue }

    /// The elements, if this is an array; else nil.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members in order, if this is an object; else nil.
    public var objectValue: OrderedDictionary<String, JSONValue>? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (key, value) in a {
                guard let other = b[key], other == value else { return false }
            }
            return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let members):
            // Order-insensitive, to agree with ==.
            var combined = 0
            for (key, value) in members {
                var member = Hasher()
                member.combine(key)
                member.combine(value)
                combined ^= member.finalize()
            }
            hasher.combine(combined)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = JSONNumber(value).map(JSONValue.number) ?? .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(OrderedDictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text (`<too deep>` beyond the serializer's depth limit).
    public var description: String {
        (try? jsonText()) ?? "<JSON nested deeper than \(JSONParser.defaultMaximumDepth) levels>"
    }
}
