import CJavaScriptCore

/// The body of a Swift function exposed to JavaScript.
///
/// It runs synchronously on the thread that is executing JavaScript, while that thread holds the
/// engine's lock; it may call back into the same engine (the lock is recursive) but must not
/// block waiting for another thread that needs the engine. Throwing makes the JavaScript call
/// throw an `Error` whose message is the error's description.
public typealias NativeFunctionBody = @Sendable (_ arguments: [JavaScriptValue]) throws -> JavaScriptValue

/// Owns a native function's body; released by the class finalizer when JS collects the function.
final class NativeFunctionBox {
    let name: String
    let body: NativeFunctionBody
    /// The owning engine's counters (incremented under its lock, where native functions run).
    let crossings: BoundaryCrossings

    init(name: String, body: @escaping NativeFunctionBody, crossings: BoundaryCrossings) {
        self.name = name
        self.body = body
        self.crossings = crossings
    }
}

/// One class for every native function: calls go through `callAsFunction`, the Swift body lives
/// in the object's private slot. (A C callback must not capture; see the JSC notes, pitfall 8.)
nonisolated(unsafe) let nativeFunctionClass: JSClassRef = {
    var definition = kJSClassDefinitionEmpty
    definition.callAsFunction = nativeFunctionCall
    definition.finalize = nativeFunctionFinalize
    return "NativeFunction".withCString { name in
        definition.className = name
        return JSClassCreate(&definition)
    }
}()

private func nativeFunctionCall(
    _ context: JSContextRef?, _ function: JSObjectRef?, _ thisObject: JSObjectRef?,
    _ argumentCount: Int, _ arguments: UnsafePointer<JSValueRef?>?,
    _ exception: UnsafeMutablePointer<JSValueRef?>?
) -> JSValueRef? {
    guard let context, let function, let box = JSObjectGetPrivate(function) else {
        return context.map { JSValueMakeUndefined($0) } ?? nil
    }
    let native = Unmanaged<NativeFunctionBox>.fromOpaque(box).takeUnretainedValue()
    native.crossings.intoHost += 1
    do {
        var values: [JavaScriptValue] = []
        values.reserveCapacity(argumentCount)
        for index in 0..<argumentCount {
            guard let argument = arguments?[index] else { values.append(.undefined); continue }
            values.append(try JavaScriptConversion.swiftValue(of: argument, in: context))
        }
        let result = try native.body(values)
        return try JavaScriptConversion.jsValue(of: result, in: context)
    } catch {
        exception?.pointee = JavaScriptConversion.makeError(
            message: "\(native.name): \(error)", in: context)
        return JSValueMakeUndefined(context)
    }
}

private func nativeFunctionFinalize(_ object: JSObjectRef?) {
    // Runs on any thread during garbage collection: release Swift memory only, never call JSC.
    guard let object, let box = JSObjectGetPrivate(object) else { return }
    Unmanaged<NativeFunctionBox>.fromOpaque(box).release()
}
