import OptimizationContent
import OptimizationJSON
import Synchronization

/// The visitor's current selected optimizations as a prepared `SelectedOptimizations`, kept in
/// step with the engine's state pushes, for resolutions that pass no explicit selections.
///
/// ``update(_:)`` runs on every state push (inside the engine call) and rebuilds the value only
/// when the selections changed; ``current`` is one lock read. Thread-safe.
package final class CurrentSelections: Sendable {
    private struct Cache {
        var json: JSONValue?
        var selections: SelectedOptimizations?
    }

    private let cache = Mutex(Cache())

    package init() {}

    /// The current selections; nil when none are known (nothing is selected).
    package var current: SelectedOptimizations? {
        cache.withLock { $0.selections }
    }

    /// Takes the state's `selectedOptimizations` (nil or JSON null: none known).
    package func update(_ json: JSONValue?) {
        let value = json.flatMap { $0.isNull ? nil : $0 }
        guard value != cache.withLock({ $0.json }) else { return }
        let selections = value?.arrayValue.flatMap { try? SelectedOptimizations($0) }
        cache.withLock { $0 = Cache(json: value, selections: selections) }
    }
}
