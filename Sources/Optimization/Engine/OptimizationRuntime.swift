import Foundation
import JavaScriptHost
import Logging
import Synchronization

/// One JavaScript engine with the shared core loaded and initialized: the Swift side of
/// `__bridge`. Thread-safe (the engine's lock); every method is synchronous.
final class OptimizationRuntime: Sendable {
    let engine: JavaScriptEngine
    let logger: Logger
    private let resolvePrepared: JavaScriptFunction
    private let prepareEntry: JavaScriptFunction
    private let prepareSelections: JavaScriptFunction
    private let transferCounts = Mutex(TransferCounts())

    /// How many entries and selection sets were handed to the engine as JSON (each one costs a
    /// parse inside JavaScript; an entry the engine already holds costs none).
    struct TransferCounts: Sendable, Equatable {
        var entries = 0
        var selections = 0
    }

    var transfers: TransferCounts { transferCounts.withLock { $0 } }

    /// Creates an engine, evaluates the embedded JSRuntime in manifest order and calls
    /// `__bridge.initialize(config)`.
    init(configuration: JavaScriptEngine.Configuration, bridgeConfiguration: JSONValue) throws(OptimizationError) {
        logger = configuration.logger
        do {
            engine = try JavaScriptEngine(configuration: configuration)
        } catch {
            throw .resourceLoadError("cannot create a JavaScript engine: \(error)")
        }
        do {
            for script in EmbeddedJSRuntime.scripts {
                try engine.evaluate(script.source, sourceURL: "JSRuntime/\(script.path)")
            }
        } catch {
            engine.close()
            throw .resourceLoadError("JSRuntime failed to load: \(error)")
        }
        do {
            guard try engine.evaluate("typeof __bridge") == .string("object") else {
                throw OptimizationError.bridgeError("__bridge not found after loading JSRuntime")
            }
            resolvePrepared = try engine.function("__bridge.resolvePrepared")
            prepareEntry = try engine.function("__bridge.prepareEntry")
            prepareSelections = try engine.function("__bridge.prepareSelections")
        } catch {
            engine.close()
            throw error as? OptimizationError ?? .bridgeError("\(error)")
        }
        do {
            try engine.call("__bridge.initialize", .json(bridgeConfiguration.jsonText()))
        } catch JavaScriptError.exception(let exception) {
            engine.close()
            throw .configError(exception.message)
        } catch {
            engine.close()
            throw .bridgeError("\(error)")
        }
    }

    /// Resolves `entry` for `selections` (nil = nothing selected). Never throws: any engine
    /// failure is logged and the baseline is returned.
    func resolve(_ entry: ContentfulEntry, selections: SelectedOptimizations?) -> ResolvedOptimizedEntry {
        do {
            let compact = try engine.withExclusiveAccess { () throws -> String in
                let selectionsKey: JavaScriptValue = selections.map { .string($0.cacheKey) } ?? .null
                for _ in 0..<3 {
                    let result = try resolvePrepared.call(.string(entry.cacheKey), selectionsKey).stringValue ?? ""
                    switch result {
                    case "?e":
                        try prepareEntry.call(.string(entry.cacheKey), .json(entry.jsonText), entry.isCollection ? .string(entry.id) : .undefined)
                        transferCounts.withLock { $0.entries += 1 }
                    case "?s":
                        guard let selections else { return result }
                        try prepareSelections.call(.string(selections.cacheKey), .json(selections.jsonText))
                        transferCounts.withLock { $0.selections += 1 }
                    default:
                        return result
                    }
                }
                return ""
            }
            if let resolved = CompactResolution(compact)?.resolved(entry: entry, selections: selections) {
                return resolved
            }
            logger.error("unexpected resolution result from the shared core; rendering the baseline",
                         metadata: ["result": "\(compact.prefix(80))", "entry": "\(entry.id)"])
        } catch {
            logger.error("entry resolution failed; rendering the baseline",
                         metadata: ["error": "\(error)", "entry": "\(entry.id)"])
        }
        return ResolvedOptimizedEntry(entry: entry.renderedEntry(at: .baseline) ?? entry.baseline)
    }

    /// Tears down the bridge and releases the engine (cancels its timers and fetches).
    func close() {
        do {
            try engine.call("__bridge.destroy")
        } catch {
            logger.debug("__bridge.destroy failed during close", metadata: ["error": "\(error)"])
        }
        engine.close()
    }
}

/// The compact `resolvePrepared` answer: `"<sel>|<exp>|<var>|<empty>|<contextId>"`
/// (see JSRuntime/README.md).
struct CompactResolution: Equatable {
    var selectionIndex: Int
    var experienceIndex: Int
    var variantIndex: Int
    var isEmptyVariant: Bool
    var contextId: String?

    init?(_ text: String) {
        let fields = text.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, let selection = Int(fields[0]), let experience = Int(fields[1]),
              let variant = Int(fields[2]), fields[3] == "0" || fields[3] == "1"
        else { return nil }
        selectionIndex = selection
        experienceIndex = experience
        variantIndex = variant
        isEmptyVariant = fields[3] == "1"
        contextId = fields[4].isEmpty ? nil : String(fields[4])
    }

    /// Maps indices back onto the caller's own values; nil if they do not fit the documents.
    func resolved(entry: ContentfulEntry, selections: SelectedOptimizations?) -> ResolvedOptimizedEntry? {
        var selection: JSONValue?
        if selectionIndex >= 0 {
            guard let selections, selections.selections.indices.contains(selectionIndex) else { return nil }
            selection = selections.selections[selectionIndex]
        }
        let location: EntryLocation = variantIndex >= 0 && experienceIndex >= 0
            ? .variant(experience: experienceIndex, variant: variantIndex) : .baseline
        guard let rendered = entry.renderedEntry(at: location) else { return nil }
        return ResolvedOptimizedEntry(
            entry: rendered, selectedOptimization: selection, optimizationContextId: contextId,
            isEmptyVariant: isEmptyVariant)
    }
}
