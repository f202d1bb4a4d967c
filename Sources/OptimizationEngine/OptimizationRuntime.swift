import OptimizationDelivery
import Foundation
import JavaScriptHost
import Logging
import OptimizationContent
import OptimizationJSON
import OptimizationTransport
import Synchronization
import HostPlatform

/// One JavaScript engine with the shared core loaded and started in its ``EngineRole``: the Swift
/// side of `__bridge` (a client engine) or of `__service` (a service engine). Thread-safe (the
/// engine's lock); every method is synchronous.
package final class OptimizationRuntime: Sendable {
    package let engine: JavaScriptEngine
    /// What the engine loaded and how it was started.
    package let role: EngineRole
    /// What the role's start call (`__bridge.initialize`, `__service.configure`) returned.
    package let startAnswer: JavaScriptValue
    /// Applies the persistence rules to every state change; nil when storage is disabled.
    package let persistence: PersistenceCoordinator?
    /// Keeps accepted events on disk until delivered; nil without a storage directory.
    package let outbox: OutboxLink?
    /// A client's Insights queue (Swift), fed by `bridge/insights-link.js`; nil for a service
    /// engine.
    package let insights: InsightsLink?
    /// A client's Experience queue (Swift), fed by `bridge/experience-link.js`; nil for a
    /// service engine.
    package let experience: ExperienceLink?
    /// The transport `initialize` created for this engine (shut down by ``close()``); nil when
    /// the host injected one.
    package let ownedTransport: HTTPFetchTransport?
    package let logger: Logger
    /// Async bridge calls and push-backs (settles, events, blocked events, state).
    package let channel: BridgeChannel
    private let resolvePrepared: JavaScriptFunction
    /// Hands entries and selections to the engine (and counts the transfers).
    private let documents: DocumentTransfer
    /// Replays the context registrations of memoized resolves (the engine's entry hook).
    private let replay: DeferredContextReplay
    /// Whether warm resolves are answered from ``memo`` (off while the engine logs at debug level).
    private let memoizesAnswers: Bool
    private let memo = ResolutionMemo.Storage()
    /// The engine's clock (read on every memoized resolve that registers a context).
    private let clock: any HostClock
    /// Distinguishes runtimes for `ContentfulEntry/knownRuntimes`.
    /// Consecutive per process, so the engines of one pool (created together) get distinct bits.
    private let identifier = OptimizationRuntime.identifiers.wrappingAdd(1, ordering: .relaxed).newValue
    private static let identifiers = Atomic<Int>(0)
    /// This runtime's bit in `ContentfulEntry/knownRuntimes`.
    private var runtimeBit: UInt64 { 1 << UInt64(identifier % 64) }

    package var transfers: DocumentTransfer.Counts { documents.counts }

    /// Creates an engine, evaluates `scripts` (default: the role's embedded scripts, in load
    /// order) and starts it as `role` says (`__bridge.initialize` or `__service.configure` with
    /// the role's configuration).
    /// - Throws: `OptimizationError.resourceLoadError` when a script fails to load,
    ///   `OptimizationError.configError` when the start call refuses the configuration,
    ///   `OptimizationError.bridgeError` when the role's face is missing.
    package init(
        configuration: JavaScriptEngine.Configuration, role: EngineRole,
        channel: BridgeChannel = BridgeChannel(), persistence: PersistenceCoordinator? = nil,
        outbox: OutboxLink? = nil, insights: InsightsLink? = nil, experience: ExperienceLink? = nil,
        ownedTransport: HTTPFetchTransport? = nil, scripts: [EmbeddedScript]? = nil
    ) throws(OptimizationError) {
        logger = configuration.logger
        self.role = role
        clock = configuration.clock
        self.channel = channel
        self.persistence = persistence
        self.outbox = outbox
        self.insights = insights
        self.experience = experience
        self.ownedTransport = ownedTransport
        do {
            engine = try JavaScriptEngine(configuration: configuration)
        } catch {
            throw .resourceLoadError("cannot create a JavaScript engine: \(error)")
        }
        do {
            for script in scripts ?? role.scripts {
                try engine.evaluate(script.source, sourceURL: "JSRuntime/\(script.path)")
            }
        } catch {
            engine.close()
            throw .resourceLoadError("JSRuntime failed to load: \(error)")
        }
        do {
            guard try engine.evaluate("typeof \(role.start.object)") == .string("object") else {
                throw OptimizationError.bridgeError("\(role.start.object) not found after loading JSRuntime")
            }
            let functions = role.resolution
            resolvePrepared = try engine.function(functions.resolvePrepared)
            documents = try DocumentTransfer(engine: engine, functions: functions)
            replay = DeferredContextReplay(
                registerDeferred: try engine.function(functions.registerDeferred), documents: documents, memo: memo, logger: logger)
        } catch {
            engine.close()
            throw error as? OptimizationError ?? .bridgeError("\(error)")
        }
        do {
            try channel.install(on: engine)
            try outbox?.install(on: engine)
            try insights?.install(on: engine)
            try experience?.install(on: engine)
            if let experience {
                channel.readExperienceStoreFailures { [weak experience] in experience?.lastStoreFailure }
            }
        } catch {
            engine.close()
            throw .bridgeError("cannot install the bridge push-backs: \(error)")
        }
        do {
            startAnswer = try engine.call(role.start, .json(role.configuration.jsonText()))
        } catch JavaScriptError.exception(let exception) {
            engine.close()
            throw .configError(exception.message)
        } catch {
            engine.close()
            throw .bridgeError("\(error)")
        }
        // The resolver logs its reasoning at debug level: then every resolve goes to the engine.
        memoizesAnswers = (try? engine.call(BridgeContract.Host.isLogEnabled, .string("debug"))) != .bool(true)
        // Weak to the replay, not to the runtime: an object with a weak reference counts its
        // references in a side table, and the pool retains the runtime on every call.
        engine.setEntryHook { [weak replay] in replay?.run() }
    }

    /// Runs `body` holding this runtime's engine lock (waiting for it).
    package func exclusively<Result>(_ body: () throws -> Result) rethrows -> Result {
        // Through the runtime (a guaranteed `self`), so the engine object, whose reference count
        // lives in a side table shared with nothing else, is not retained per call.
        try engine.withExclusiveAccess(body)
    }

    /// Runs `body` holding this runtime's engine lock, or returns nil at once while another
    /// thread holds it.
    package func tryExclusively<Result>(_ body: () throws -> Result) rethrows -> Result? {
        try engine.tryWithExclusiveAccess(body)
    }

    /// Resolves `entry` for `selections` (nil = nothing selected). Never throws: any engine
    /// failure is logged and the baseline is returned.
    package func resolve(_ entry: ContentfulEntry, selections: SelectedOptimizations?) -> ResolvedOptimizedEntry {
        resolveReportingOutcome(entry, selections: selections).resolved
    }

    /// What a resolve rendered, for metrics.
    package typealias Outcome = ResolutionOutcome

    /// ``resolve(_:selections:)`` that also tells what was rendered (for metrics), without reading
    /// the result (which would touch memory other threads share).
    ///
    /// A pair of documents this runtime resolved before is answered from its ``ResolutionMemo``
    /// without entering JavaScript (unless the engine logs at debug level, so that every resolve
    /// shows up in its diagnostics).
    /// - Parameter memoized: false always asks the engine (for the benchmark's engine-path figure).
    package func resolveReportingOutcome(
        _ entry: ContentfulEntry, selections: SelectedOptimizations?, memoized: Bool = true
    ) -> (resolved: ResolvedOptimizedEntry, outcome: Outcome) {
        let memoizes = memoized && memoizesAnswers
        do {
            let resolved = try engine.withExclusiveAccess { () throws -> (ResolvedOptimizedEntry, Outcome)? in
                if memoizes, let pair = memo.state.withLock({ $0.remembered(entry: entry, selections: selections) }) {
                    return serve(pair)
                }
                let (text, entryWasKnown) = try resolveInEngine(entry, selections: selections)
                guard let answer = CompactResolution(text) else {
                    logger.error("unexpected resolution result from the shared core; rendering the baseline",
                                 metadata: ["result": "\(text.prefix(80))", "entry": "\(entry.id)"])
                    return nil
                }
                guard let resolved = answer.resolved(entry: entry, selections: selections) else {
                    logger.error("the shared core's answer does not fit the entry; rendering the baseline", metadata: ["entry": "\(entry.id)"])
                    return nil
                }
                // Remembered from the second resolve of an entry on: a one-off entry (a document
                // wrapped per call) would only keep memory alive in the memo.
                if memoizes && entryWasKnown {
                    let pair = ResolutionMemo.Remembered(answer: answer, result: resolved, entry: entry, selections: selections)
                    memo.state.withLock { $0.remember(pair) }
                }
                return (resolved, answer.outcome)
            }
            if let resolved { return resolved }
        } catch {
            logger.error("entry resolution failed; rendering the baseline",
                         metadata: ["error": "\(error)", "entry": "\(entry.id)"])
        }
        return (ResolvedOptimizedEntry(entry: entry.renderedBaseline), .fallback)
    }

    /// A remembered result, with a fresh context id whose registration is deferred (engine lock
    /// held, so ids and times are noted in the order the engine would have registered them).
    private func serve(_ pair: ResolutionMemo.Remembered) -> (ResolvedOptimizedEntry, Outcome) {
        guard pair.hasContext else { return (pair.result(contextId: nil), pair.outcome) }
        let id = engine.randomUUID()
        let registration = ResolutionMemo.DeferredRegistration(pair: pair, time: clock.now(), id: id)
        memo.state.withLock { $0.note(registration) }
        return (pair.result(contextId: id), pair.outcome)
    }

    /// `resolvePrepared` in the engine, handing it the documents it does not hold yet (engine
    /// lock held). Returns the compact answer text, and whether this runtime had been handed the
    /// entry before this call.
    private func resolveInEngine(_ entry: ContentfulEntry, selections: SelectedOptimizations?) throws -> (text: String, entryWasKnown: Bool) {
        let entryHandle = JavaScriptValue.number(Double(entry.handle))
        let selectionsHandle = selections.map { JavaScriptValue.number(Double($0.handle)) } ?? .null
        // An entry never handed to this runtime cannot be known by handle: go straight to
        // adopting or preparing it.
        let seenBefore = entry.knownRuntimes.load(ordering: .relaxed) & runtimeBit != 0
        if !seenBefore { entry.knownRuntimes.bitwiseOr(runtimeBit, ordering: .relaxed) }
        for attempt in 0..<3 {
            let result: String
            if attempt == 0 && !seenBefore {
                result = "?e"
            } else {
                result = try resolvePrepared.call(entryHandle, selectionsHandle).stringValue ?? ""
                documents.countResolveCall()
            }
            switch result {
            case "?e":
                try documents.handOver(entry)
            case "?s":
                guard let selections else { return (result, seenBefore) }
                try documents.handOver(selections)
            default:
                return (result, seenBefore)
            }
        }
        return ("", seenBefore)
    }

    /// Tears down the face (a client's `__bridge.destroy`; nothing for a service engine) and
    /// releases the engine: its timers are cancelled. With `cancellingFetches` false (the
    /// default: an engine that delivers events) the client's Experience and Insights queues make
    /// a last best-effort flush, which finishes in the background (bounded by the transport
    /// timeout) with its result discarded; with `cancellingFetches` true they are closed at once
    /// and a request of theirs still in flight is cancelled. An owned transport is shut down once
    /// the kept requests are done.
    package func close(cancellingFetches: Bool = false) {
        // The client's Experience queue: its last flight is built while the engine still runs.
        var finalFlights: [Task<Void, Never>] = []
        if let experience {
            if cancellingFetches {
                experience.queue.close()
            } else if let flight = experience.queue.closeAfterFinalFlush() {
                finalFlights.append(flight)
            }
            experience.detach()
        }
        if let teardown = role.teardown {
            do {
                try engine.call(teardown)
            } catch {
                logger.debug("\(teardown.path) failed during close", metadata: ["error": "\(error)"])
            }
        }
        engine.close()
        var inFlight = finalFlights
        // The client's Insights queue: a last best-effort flush, then closed (its request, if
        // any, finishes in the background like the Experience queue's).
        if let insights {
            if cancellingFetches {
                insights.queue.close()
            } else if let flight = insights.queue.closeAfterFinalFlush() {
                inFlight.append(flight)
            }
        }
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
