/// A JavaScript function resolved once, for calls on a hot path.
///
/// Holds its engine strongly and keeps the function (and its `this`) protected from collection
/// until the handle is deinitialized or the engine closes; after ``JavaScriptEngine/close()``
/// calls throw ``JavaScriptError/engineClosed``. Thread-safe like the engine.
public final class JavaScriptFunction: @unchecked Sendable {
    /// The engine the function lives in and every call runs on (held strongly).
    public let engine: JavaScriptEngine
    /// The global property path this handle was resolved from.
    public let path: String
    private let token: Int

    init(engine: JavaScriptEngine, token: Int, path: String) {
        self.engine = engine
        self.token = token
        self.path = path
    }

    deinit {
        engine.releaseHandle(token: token)
    }

    /// Calls the function with `arguments`.
    @discardableResult
    public func call(_ arguments: JavaScriptValue...) throws -> JavaScriptValue {
        try engine.invokeHandle(token: token, arguments: arguments)
    }

    /// Calls the function with an argument array.
    @discardableResult
    public func call(arguments: [JavaScriptValue]) throws -> JavaScriptValue {
        try engine.invokeHandle(token: token, arguments: arguments)
    }
}
