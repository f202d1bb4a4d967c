import Foundation
import JavaScriptHost
import Logging
import Synchronization

/// One JavaScript engine with the shared core loaded and initialized: the Swift side of
/// `__bridge`. Thread-safe (the engine's lock); every method is synchronous.
final class OptimizationRuntime: Sendable {
    let engine: JavaScriptEngine
    /// Applies the persistence rules to every state change; nil when storage is disabled.
    let persistence: PersistenceCoordinator?
    /// Keeps accepted events on disk until delivered; nil without a storage directory.
    let outbox: ClientOutbox?
    /// The transport `initialize` created for this engine (shut down by ``close()``); nil when
    /// the host injected one.
    let ownedTransport: HTTPFetchTransport?
    let logger: Logger
    /// Async bridge calls and push-backs (settles, events, blocked events, state).
    let channel: BridgeChannel
    private let resolvePrepared: JavaScriptFunction
    private let prepareEntry: JavaScriptFunction
    private let prepareSelections: JavaScriptFunction
    private let adoptEntry: JavaScriptFunction
    private let adoptSelections: JavaScriptFunction
    private let transferCounts = Mutex(TransferCounts())
    /// Distinguishes runtimes for ``ContentfulEntry/knownRuntimes``.
    /// Consecutive per process, so the engines of one pool (created together) get distinct bits.
    private let identifier = OptimizationRuntime.identifiers.wrappingAdd(1, ordering: .relaxed).newValue
    private static let identifiers = Atomic<Int>(0)

    /// How many entries and selection sets were handed to the engine as JSON (each one costs a
    /// parse inside JavaScript; an entry the engine already holds costs none).
    struct TransferCounts: Sendable, Equatable {
        var entries = 0
        var selections = 0
    }

    var transfers: TransferCounts { transferCounts.withLock { $0 } }

    /// Creates an engine, evaluates the embedded JSRuntime in manifest order and calls
    /// `__bridge.initialize(config)`.
    init(
        configuration: JavaScriptEngine.Configuration, bridgeConfiguration: JSONValue,
        channel: BridgeChannel = BridgeChannel(), persistence: PersistenceCoordinator? = nil,
        outbox: ClientOutbox? = nil, ownedTransport: HTTPFetchTransport? = nil, scripts: [EmbeddedScript] = EmbeddedJSRuntime.scripts
    ) throws(OptimizationError) {
        logger = configuration.logger
        self.channel = channel
        self.persistence = persistence
        self.outbox = outbox
        self.ownedTransport = ownedTransport
        do {
            engine = try JavaScriptEngine(configuration: configuration)
        } catch {
            throw .resourceLoadError("cannot create a JavaScript engine: \(error)")
        }
        do {
            for script in scripts {
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
            adoptEntry = try engine.function("__bridge.adoptEntry")
            adoptSelections = try engine.function("__bridge.adoptSelections")
        } catch {
            engine.close()
            throw error as? OptimizationError ?? .bridgeError("\(error)")
        }
        do {
            try channel.install(on: engine)
            try outbox?.install(on: engine)
        } catch {
            engine.close()
            throw .bridgeError("cannot install the bridge push-backs: \(error)")
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
        resolveReportingFailure(entry, selections: selections).resolved
    }

    /// ``resolve(_:selections:)`` that also tells whether it fell back to the baseline because
    /// of a failure (for metrics).
    func resolveReportingFailure(_ entry: ContentfulEntry, selections: SelectedOptimizations?) -> (resolved: ResolvedOptimizedEntry, failed: Bool) {
        do {
            let compact = try engine.withExclusiveAccess { () throws -> String in
                let entryHandle = JavaScriptValue.number(Double(entry.handle))
                let selectionsHandle = selections.map { JavaScriptValue.number(Double($0.handle)) } ?? .null
                // An entry never handed to this runtime cannot be known by handle: go straight to
                // adopting or preparing it.
                let bit: UInt64 = 1 << UInt64(identifier % 64)
                let seenBefore = entry.knownRuntimes.load(ordering: .relaxed) & bit != 0
                if !seenBefore { entry.knownRuntimes.bitwiseOr(bit, ordering: .relaxed) }
                for attempt in 0..<3 {
                    let result = attempt == 0 && !seenBefore
                        ? "?e" : try resolvePrepared.call(entryHandle, selectionsHandle).stringValue ?? ""
                    switch result {
                    case "?e":
                        let key = JavaScriptValue.string(entry.cacheKey)
                        if try adoptEntry.call(entryHandle, key) != .bool(true) {
                            try prepareEntry.call(entryHandle, .json(entry.jsonText), entry.isCollection ? .string(entry.id) : .undefined, key)
                            transferCounts.withLock { $0.entries += 1 }
                        }
                    case "?s":
                        guard let selections else { return result }
                        let key = JavaScriptValue.string(selections.cacheKey)
                        if try adoptSelections.call(selectionsHandle, key) != .bool(true) {
                            try prepareSelections.call(selectionsHandle, .json(selections.jsonText), key)
                            transferCounts.withLock { $0.selections += 1 }
                        }
                    default:
                        return result
                    }
                }
                return ""
            }
            if let resolved = CompactResolution(compact)?.resolved(entry: entry, selections: selections) {
                return (resolved, false)
            }
            logger.error("unexpected resolution result from the shared core; rendering the baseline",
                         metadata: ["result": "\(compact.prefix(80))", "entry": "\(entry.id)"])
        } catch {
            logger.error("entry resolution failed; rendering the baseline",
                         metadata: ["error": "\(error)", "entry": "\(entry.id)"])
        }
        return (ResolvedOptimizedEntry(entry: entry.renderedBaseline), true)
    }

    /// Tears down the bridge (which fires forced best-effort flushes of both delivery queues) and
    /// releases the engine: its timers are cancelled; requests already in flight, those final
    /// flushes included, finish in the background (bounded by the transport timeout) with their
    /// results discarded. An owned transport is shut down once they are done.
    func close() {
        do {
            try engine.call("__bridge.destroy")
        } catch {
            logger.debug("__bridge.destroy failed during close", metadata: ["error": "\(error)"])
        }
        let inFlight = engine.close(keepingFetchesInFlight: true)
        channel.close()
        // After the final flushes were started: what they carry stays on disk until the next
        // start (at-least-once, same messageId).
        outbox?.close()
        if let ownedTransport {
            Task {
                for request in inFlight { await request.value }
                try? await ownedTransport.shutdown()
            }
        }
    }
}
