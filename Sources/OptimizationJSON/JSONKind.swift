/// The six kinds of JSON value, as a ``JSONValue`` case or a ``JSONTape`` node holds them.
package enum JSONKind: UInt8, Sendable {
    case null, bool, number, string, array, object

    /// "an object", "an array", … for error messages.
    package var name: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONValue {
    var kind: JSONKind {
        switch self {
        case .null: return .null
        case .bool: return .bool
        case .number: return .number
        case .string: return .string
        case .array: return .array
        case .object: return .object
        }
    }

    /// "an object", "an array", … for error messages.
    package var kindName: String { kind.name }
}
