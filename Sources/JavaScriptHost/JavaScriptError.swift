/// Errors thrown by ``JavaScriptEngine``.
public enum JavaScriptError: Error, Sendable, Equatable, CustomStringConvertible {
    /// JavaScript threw. The engine and its context stay usable.
    case exception(JavaScriptException)
    /// The script ran longer than ``JavaScriptEngine/Configuration/executionTimeLimit`` and was
    /// terminated by the watchdog. The engine stays usable.
    case executionTimeLimitExceeded(after: Duration)
    /// A `.json` argument was not valid JSON.
    case invalidJSONArgument(String)
    /// The value at the given global path is not a function.
    case notAFunction(String)
    /// A result could not be represented as JSON (for example a cyclic object).
    case unrepresentableResult(String)
    /// The engine was closed with ``JavaScriptEngine/close()``.
    case engineClosed
    /// JavaScriptCore could not create a context group or global context.
    case contextCreationFailed

    public var description: String {
        switch self {
        case .exception(let exception): return exception.description
        case .executionTimeLimitExceeded(let limit):
            return "JavaScript execution exceeded the time limit of \(limit) and was terminated"
        case .invalidJSONArgument(let prefix): return "argument is not valid JSON: \(prefix)"
        case .notAFunction(let path): return "\(path) is not a function"
        case .unrepresentableResult(let detail): return "result cannot be represented as JSON: \(detail)"
        case .engineClosed: return "the JavaScript engine is closed"
        case .contextCreationFailed: return "JavaScriptCore could not create a context"
        }
    }
}

/// A JavaScript exception with the location JavaScriptCore reported for it.
public struct JavaScriptException: Sendable, Equatable, CustomStringConvertible {
    /// `error.name` (for example `TypeError`), or nil when a non-Error value was thrown.
    public var name: String?
    /// `error.message`, or the string form of the thrown value.
    public var message: String
    /// The script's source URL (the name given to ``JavaScriptEngine/evaluate(_:sourceURL:)``).
    public var sourceURL: String?
    /// 1-based line of the throw site, when known.
    public var line: Int?
    /// 1-based column of the throw site, when known.
    public var column: Int?
    /// The JavaScript stack trace, when known.
    public var stack: String?

    /// Creates an exception description; only `message` is required.
    /// - Parameters:
    ///   - name: `error.name`, or nil when a non-Error value was thrown.
    ///   - message: `error.message`, or the string form of the thrown value.
    ///   - sourceURL: the script's source URL, when known.
    ///   - line: 1-based line of the throw site, when known.
    ///   - column: 1-based column of the throw site, when known.
    ///   - stack: the JavaScript stack trace, when known.
    public init(
        name: String? = nil, message: String, sourceURL: String? = nil, line: Int? = nil,
        column: Int? = nil, stack: String? = nil
    ) {
        self.name = name
        self.message = message
        self.sourceURL = sourceURL
        self.line = line
        self.column = column
        self.stack = stack
    }

    public var description: String {
        var text = name.map { "\($0): \(message)" } ?? message
        if let sourceURL {
            text += " (\(sourceURL)"
            if let line { text += ":\(line)" }
            if let column { text += ":\(column)" }
            text += ")"
        } else if let line {
            text += " (line \(line))"
        }
        return text
    }
}
