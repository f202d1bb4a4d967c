import CJavaScriptCore
import Foundation

/// The load order of JSRuntime's roles, as `JSRuntime/load-order.js` computes it (the one
/// implementation, which the Node suite runs too), evaluated here in a bare JavaScriptCore context.
struct LoadOrder: Decodable {
    /// The client files and the core files they need, in load order (a client engine).
    let client: [String]
    /// The service files and the core files they need, in load order (a service engine).
    let service: [String]
    /// Every file of every role, in load order (the test suites and the contract checks).
    let all: [String]

    /// Runs `loadOrder(manifest, sources)` of `script` (the text of load-order.js).
    /// - Parameters:
    ///   - manifest: the JSON text of `manifest.json` (`{core, client, service}`).
    ///   - sources: every listed file's text by path.
    /// - Throws: ``Failure`` with load-order.js's message (a missing provider, two providers,
    ///   a cycle, a file in two roles…) or with what went wrong evaluating it.
    init(script: String, manifest: String, sources: [String: String]) throws(Failure) {
        let sourcesJSON: String
        do {
            sourcesJSON = String(decoding: try JSONSerialization.data(withJSONObject: sources, options: [.sortedKeys]), as: UTF8.self)
        } catch {
            throw Failure(message: "cannot encode the scripts as JSON: \(error)")
        }
        let context = JSGlobalContextCreate(nil)
        defer { JSGlobalContextRelease(context) }
        _ = try Self.evaluate(script, in: context, sourceURL: "load-order.js")
        let answer = try Self.evaluate(
            "JSON.stringify(__loadOrder.loadOrder(\(manifest), \(sourcesJSON)))", in: context, sourceURL: "EmbedJSRuntimeTool")
        do {
            self = try JSONDecoder().decode(LoadOrder.self, from: Data(answer.utf8))
        } catch {
            throw Failure(message: "load-order.js answered \(answer.prefix(80)), not {client, service, all}: \(error)")
        }
    }

    /// What load-order.js refused, or why it could not run.
    struct Failure: Error {
        let message: String
    }

    /// The string value of evaluating `source` (its exception's message as a ``Failure``).
    private static func evaluate(_ source: String, in context: JSGlobalContextRef?, sourceURL: String) throws(Failure) -> String {
        let script = JSStringCreateWithUTF8CString(source)
        let url = JSStringCreateWithUTF8CString(sourceURL)
        defer {
            JSStringRelease(script)
            JSStringRelease(url)
        }
        var exception: JSValueRef?
        let value = JSEvaluateScript(context, script, nil, url, 1, &exception)
        if let exception { throw Failure(message: string(of: exception, in: context)) }
        return string(of: value, in: context)
    }

    /// `String(value)` in JavaScript (an Error gives its `name: message`).
    private static func string(of value: JSValueRef?, in context: JSGlobalContextRef?) -> String {
        guard let text = JSValueToStringCopy(context, value, nil) else { return "(a value that has no string form)" }
        defer { JSStringRelease(text) }
        let capacity = JSStringGetMaximumUTF8CStringSize(text)
        var buffer = [CChar](repeating: 0, count: capacity)
        JSStringGetUTF8CString(text, &buffer, capacity)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
