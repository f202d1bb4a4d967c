import CJavaScriptCore

/// Conversions between ``JavaScriptValue`` and JSValueRef, and exception extraction.
/// Every function here must be called with the engine lock held.
enum JavaScriptConversion {
    static func swiftValue(of value: JSValueRef, in context: JSContextRef) throws -> JavaScriptValue {
        let type = JSValueGetType(context, value)
        if type == kJSTypeUndefined { return .undefined }
        if type == kJSTypeNull { return .null }
        if type == kJSTypeBoolean { return .bool(JSValueToBoolean(context, value)) }
        if type == kJSTypeNumber { return .number(JSValueToNumber(context, value, nil)) }
        if type == kJSTypeString {
            guard let string = JSValueToStringCopy(context, value, nil) else { return .string("") }
            defer { JSStringRelease(string) }
            return .string(swiftString(string))
        }
        if type == kJSTypeObject {
            if JSObjectIsFunction(context, value) { return .undefined }
            var exception: JSValueRef?
            guard let json = JSValueCreateJSONString(context, value, 0, &exception) else {
                if let exception { throw JavaScriptError.unrepresentableResult(message(of: exception, in: context)) }
                return .undefined
            }
            defer { JSStringRelease(json) }
            return .json(swiftStringViaUTF8(json))
        }
        // Symbols and BigInts have no JSON form.
        throw JavaScriptError.unrepresentableResult("a symbol or bigint")
    }

    static func jsValue(of value: JavaScriptValue, in context: JSContextRef) throws -> JSValueRef {
        switch value {
        case .undefined: return JSValueMakeUndefined(context)
        case .null: return JSValueMakeNull(context)
        case .bool(let bool): return JSValueMakeBoolean(context, bool)
        case .number(let number): return JSValueMakeNumber(context, number)
        case .string(let string): return withJSString(string) { JSValueMakeString(context, $0) }
        case .json(let text):
            guard let parsed = withJSString(text, { JSValueMakeFromJSONString(context, $0) }) else {
                // JSValueMakeFromJSONString returns NULL without an exception on invalid JSON.
                throw JavaScriptError.invalidJSONArgument(String(text.prefix(80)))
            }
            return parsed
        }
    }

    /// A new `Error` object with `message`.
    static func makeError(message: String, in context: JSContextRef) -> JSValueRef? {
        let text = withJSString(message) { JSValueMakeString(context, $0) }
        var arguments: [JSValueRef?] = [text]
        return JSObjectMakeError(context, 1, &arguments, nil)
    }

    static func exception(from value: JSValueRef, in context: JSContextRef) -> JavaScriptException {
        guard JSValueIsObject(context, value), let object = JSValueToObject(context, value, nil) else {
            return JavaScriptException(message: message(of: value, in: context))
        }
        func property(_ name: String) -> JSValueRef? {
            let result = withJSString(name) { JSObjectGetProperty(context, object, $0, nil) }
            guard let result, !JSValueIsUndefined(context, result) else { return nil }
            return result
        }
        func text(_ name: String) -> String? { property(name).map { message(of: $0, in: context) } }
        func integer(_ name: String) -> Int? {
            guard let value = property(name), JSValueIsNumber(context, value) else { return nil }
            let number = JSValueToNumber(context, value, nil)
            return Int(clampingJavaScriptNumber: number)
        }
        let messageText = text("message") ?? message(of: value, in: context)
        return JavaScriptException(
            name: text("name"), message: messageText, sourceURL: text("sourceURL"),
            line: integer("line"), column: integer("column"), stack: text("stack"))
    }

    /// `String(value)` in JavaScript terms, never throwing.
    static func message(of value: JSValueRef, in context: JSContextRef) -> String {
        guard let string = JSValueToStringCopy(context, value, nil) else { return "<unprintable value>" }
        defer { JSStringRelease(string) }
        return swiftString(string)
    }
}
