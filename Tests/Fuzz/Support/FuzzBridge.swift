import Foundation
import OrderedCollections

/// The shared JavaScript loaded into one JavaScriptCore engine, driven through the same
/// `__bridge` calls `OptimizationRuntime` makes. The scripts of the client role are read from
/// `$FUZZ_JSRUNTIME` (default `JSRuntime`, relative to the working directory) in the load order
/// `load-order.js` computes from `manifest.json`, as the build plugin embeds them.
final class FuzzBridge: @unchecked Sendable {
    static let shared = FuzzBridge()

    let engine: JavaScriptEngine
    let fixtureEntry: ContentfulEntry
    private let prepareEntry: JavaScriptFunction
    private let prepareSelections: JavaScriptFunction
    private let resolvePrepared: JavaScriptFunction
    private let parseResponse: JavaScriptFunction

    private init() {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["FUZZ_JSRUNTIME"] ?? "JSRuntime")
        do {
            func text(_ path: String) throws -> String { try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) }
            let manifest = try JSONValue(jsonText: text("manifest.json"))
            var sources: OrderedDictionary<String, JSONValue> = [:]
            for role in manifest.objectValue.map({ Array($0.values) }) ?? [] {
                for case .string(let path) in role.arrayValue ?? [] { sources[path] = .string(try text(path)) }
            }
            engine = try JavaScriptEngine(configuration: .init(clock: ManualClock(), executionTimeLimit: .seconds(5)))
            try engine.evaluate(text("load-order.js"), sourceURL: "load-order.js")
            let order = try engine.evaluate(
                "JSON.stringify(__loadOrder.loadOrder(\(try manifest.jsonText()), \(try JSONValue.object(sources).jsonText())).client)")
            for case .string(let path) in try JSONValue(jsonText: order.stringValue ?? "[]").arrayValue ?? [] {
                try engine.evaluate(text(path), sourceURL: path)
            }
            try engine.evaluate("delete globalThis.__loadOrder")
            // The client hands Insights events to the host's queue; the harnesses send none
            // anywhere, so the host's end takes them and forgets them.
            try engine.register(BridgeContract.Native.insightsAccept) { _ in .number(0) }
            try engine.register(BridgeContract.Native.insightsProfile) { _ in .undefined }
            try engine.register(BridgeContract.Native.insightsPurge) { _ in .undefined }
            try engine.call(BridgeContract.Visitor.initialize, .json(#"{"clientId":"fuzz","environment":"main","logLevel":"fatal"}"#))
            prepareEntry = try engine.function(BridgeContract.Visitor.prepareEntry)
            prepareSelections = try engine.function(BridgeContract.Visitor.prepareSelections)
            resolvePrepared = try engine.function(BridgeContract.Visitor.resolvePrepared)
            parseResponse = try engine.function("__optimization.experienceApi.parseResponse")
            let hero = root.deletingLastPathComponent().appendingPathComponent("Fixtures/entries/hero-optimized.json")
            fixtureEntry = try ContentfulEntry(jsonData: Data(contentsOf: hero))
        } catch {
            fatalError("cannot start the fuzzing engine (run from the repository root): \(error)")
        }
    }

    /// One selection per experience id found in the baseline's `nt_experiences` (links followed
    /// for collections), all with `variantIndex`.
    static func selections(for entry: ContentfulEntry, variantIndex: Int) -> SelectedOptimizations {
        var elements: [JSONValue] = []
        for experience in entry.baseline["fields"]?["nt_experiences"]?.arrayValue ?? [] {
            var target = experience
            if let id = LinkResolver.entryLinkID(experience), let linked = entry.entriesById[id] { target = linked }
            if let id = target["fields"]?["nt_experience_id"]?.stringValue {
                elements.append(["experienceId": .string(id), "variantIndex": .number(JSONNumber(variantIndex)), "variants": [:]])
            }
        }
        return (try? SelectedOptimizations(elements)) ?? .empty
    }

    /// The core's answer for `entry` and `selections`, which must map back onto the document.
    func resolveAndCheck(_ entry: ContentfulEntry, _ selections: SelectedOptimizations) {
        let entryKey = JavaScriptValue.number(Double(entry.handle))
        let selectionsKey = JavaScriptValue.number(Double(selections.handle))
        do {
            try prepareEntry.call(entryKey, .json(entry.jsonText), entry.isCollection ? .string(entry.id) : .undefined)
            try prepareSelections.call(selectionsKey, .json(selections.jsonText))
        } catch {
            // The library logs this and renders the baseline; not a crash.
            return
        }
        guard let answer = try? resolvePrepared.call(entryKey, selectionsKey).stringValue else {
            fatalError("resolvePrepared threw or returned no string")
        }
        guard let compact = CompactResolution(answer) else { fatalError("not a compact resolution: \(answer)") }
        precondition(compact.resolved(entry: entry, selections: selections) != nil,
                     "the answer \(answer) does not fit the document")
    }

    /// `parseResponse(text)` as JSON text, or nil when the core refused the envelope.
    func parseExperienceResponse(_ text: String) -> String? {
        guard case .json(let json)? = try? parseResponse.call(.string(text)) else { return nil }
        return json
    }
}
