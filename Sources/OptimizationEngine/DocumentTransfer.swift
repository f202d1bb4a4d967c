import JavaScriptHost
import OptimizationContent
import Synchronization

/// Hands prepared documents (`ContentfulEntry`, `SelectedOptimizations`) to one engine by
/// handle: adopted from equal content the engine already holds (by content key), or transferred
/// as JSON. Call with the engine lock held. The counters are relaxed atomics (no lock on the
/// resolve path), readable from any thread.
package final class DocumentTransfer: Sendable {
    /// How many entries and selection sets were handed to the engine as JSON (each one costs a
    /// parse inside JavaScript; an entry the engine already holds costs none), and how often the
    /// resolver ran in the engine.
    package struct Counts: Sendable, Equatable {
        package var entries = 0
        package var selections = 0
        /// Calls of `resolvePrepared` (a memoized answer makes none).
        package var resolveCalls = 0
    }

    private let prepareEntry: JavaScriptFunction
    private let prepareSelections: JavaScriptFunction
    private let adoptEntry: JavaScriptFunction
    private let adoptSelections: JavaScriptFunction
    private let entriesTransferred = Atomic<Int>(0)
    private let selectionsTransferred = Atomic<Int>(0)
    private let resolveCalls = Atomic<Int>(0)

    /// Hands documents to `engine` through the resolution functions of `functions` (the face of
    /// the engine's role).
    package init(engine: JavaScriptEngine, functions: EngineRole.ResolutionFunctions) throws {
        prepareEntry = try engine.function(functions.prepareEntry)
        prepareSelections = try engine.function(functions.prepareSelections)
        adoptEntry = try engine.function(functions.adoptEntry)
        adoptSelections = try engine.function(functions.adoptSelections)
    }

    package var counts: Counts {
        Counts(
            entries: entriesTransferred.load(ordering: .relaxed), selections: selectionsTransferred.load(ordering: .relaxed),
            resolveCalls: resolveCalls.load(ordering: .relaxed))
    }

    package func countResolveCall() {
        resolveCalls.wrappingAdd(1, ordering: .relaxed)
    }

    /// Makes the engine hold `entry` under its handle.
    package func handOver(_ entry: ContentfulEntry) throws {
        let entryHandle = JavaScriptValue.number(Double(entry.handle))
        let key = JavaScriptValue.string(entry.cacheKey)
        if try adoptEntry.call(entryHandle, key) != .bool(true) {
            try prepareEntry.call(entryHandle, .json(entry.jsonText), entry.isCollection ? .string(entry.id) : .undefined, key)
            entriesTransferred.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Makes the engine hold `selections` under their handle.
    package func handOver(_ selections: SelectedOptimizations) throws {
        let selectionsHandle = JavaScriptValue.number(Double(selections.handle))
        let key = JavaScriptValue.string(selections.cacheKey)
        if try adoptSelections.call(selectionsHandle, key) != .bool(true) {
            try prepareSelections.call(selectionsHandle, .json(selections.jsonText), key)
            selectionsTransferred.wrappingAdd(1, ordering: .relaxed)
        }
    }
}
