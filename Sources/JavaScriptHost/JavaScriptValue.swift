/// A value crossing the boundary between Swift and JavaScript.
///
/// Only JSON-compatible data crosses: primitives as themselves, objects and arrays as JSON text.
/// This keeps every JavaScriptCore handle inside this module (handles are not `Sendable`, and a
/// value held only in Swift memory is invisible to the JS garbage collector).
public enum JavaScriptValue: Sendable, Hashable {
    /// JavaScript `undefined`; also what a function value becomes as a result.
    case undefined
    /// JavaScript `null`.
    case null
    /// A JavaScript boolean.
    case bool(Bool)
    /// A JavaScript number (a double).
    case number(Double)
    /// A JavaScript string.
    case string(String)
    /// An object or array, passed as JSON text. As an argument it is parsed with the engine's
    /// JSON parser (`JSON.parse` semantics); as a result it is produced by `JSON.stringify`.
    case json(String)

    /// Whether the JavaScript form lives on the garbage-collected heap (strings, objects).
    var isHeapValue: Bool {
        switch self {
        case .string, .json: return true
        case .undefined, .null, .bool, .number: return false
        }
    }

    /// The string payload, if this is `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number payload, if this is `.number`.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The boolean payload, if this is `.bool`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// JSON text for `.json`, or the JSON literal of a primitive (`undefined` has none).
    public var jsonText: String? {
        switch self {
        case .undefined: return nil
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value): return value.isFinite ? "\(value)" : "null"
        case .string: return nil
        case .json(let text): return text
        }
    }
}
