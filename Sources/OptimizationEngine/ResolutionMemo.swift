import OptimizationContent
import OptimizationJSON
import OrderedCollections
import Synchronization

/// What one runtime remembers of the shared resolver's answers, so a warm resolve does not enter
/// JavaScript at all, and the optimization-context registrations of the answers it served that
/// way, which the engine has not seen yet.
///
/// The resolver's answer (which selection, experience and variant) is a pure function of the
/// entry document and the selections, and both are immutable objects with process-unique
/// handles, so an answer keyed by the pair of handles never goes stale. Pairs are remembered from
/// an entry's second resolve on, so entries wrapped once per call are never kept here.
///
/// What is not pure is the context registration: every resolve that finds a selection
/// registers its context under a fresh id. For an answer served from here the runtime draws that id itself, from the
/// engine's own id source, notes the registration with the engine clock's time, and replays the
/// notes, in order and at their own times, before anything else enters JavaScript (the engine's
/// entry hook). Nothing in the VM can observe the registry between a note and its replay, so the
/// registry ends up exactly as eager registration would have left it.
///
/// Not thread-safe on its own: the runtime keeps it in a `Mutex` and touches it with the engine
/// lock held.
package struct ResolutionMemo {
    /// One remembered pair of documents: the result the resolver's answer maps to, what it
    /// renders, whether it has a context (then every resolve registers one), and the documents
    /// themselves, kept so the engine can be handed them again if its bounded caches dropped them
    /// before a deferred registration is replayed.
    ///
    /// The result's top-level containers are this runtime's own copies (the values inside are
    /// shared), so serving it retains only memory no other engine's thread touches: threads
    /// resolving one shared entry on different engines do not contend for its reference counts.
    package final class Remembered: @unchecked Sendable {
        /// Keeps the reference count (written on every resolve served from here) off the cache
        /// lines of objects another engine's thread writes (padding; never read).
        private let padding = cacheLinePadding
        package let result: ResolvedOptimizedEntry
        package let outcome: OptimizationRuntime.Outcome
        package let hasContext: Bool
        package let entry: ContentfulEntry
        package let selections: SelectedOptimizations?

        /// - Parameter result: what `answer` resolved to (with the context id it registered).
        package init(answer: CompactResolution, result: ResolvedOptimizedEntry, entry: ContentfulEntry, selections: SelectedOptimizations?) {
            outcome = answer.outcome
            hasContext = answer.contextId != nil
            self.result = ResolvedOptimizedEntry(
                entry: result.entry.withOwnTopLevel, selectedOptimization: result.selectedOptimization?.withOwnTopLevel,
                isEmptyVariant: result.isEmptyVariant)
            self.entry = entry
            self.selections = selections
        }

        /// The remembered result with `contextId`.
        package func result(contextId: String?) -> ResolvedOptimizedEntry {
            ResolvedOptimizedEntry(
                entry: result.entry, selectedOptimization: result.selectedOptimization,
                optimizationContextId: contextId, isEmptyVariant: result.isEmptyVariant)
        }
    }

    /// The memo of one runtime, on cache lines of its own: every memoized resolve writes its lock,
    /// and the objects of another engine may be allocated right next to the runtime.
    package final class Storage: Sendable {
        private let leadingPadding = cacheLinePadding
        package let state = Mutex(ResolutionMemo())
        private let trailingPadding = cacheLinePadding
    }

    /// A registration to replay: the context of resolving `pair`, under `id`, registered at `time`
    /// (engine clock, ms).
    package struct DeferredRegistration {
        package let pair: Remembered
        package let time: Double
        package let id: String
    }

    private struct Key: Hashable {
        let entry: Int
        let selections: Int
    }

    /// The same pair by the selections' content: a service typically decodes each request's
    /// selections into a new object, equal in content to one seen before.
    private struct ContentKey: Hashable {
        let entry: Int
        let selections: String
    }

    /// Handles kept before the memo starts over (a dropped pair only costs one more call into the
    /// engine; the documents it keeps alive are bounded by this).
    package static let pairLimit = 4_096
    /// Registrations kept for replay: the context registry's capacity (`DEFAULT_CAPACITY` in
    /// JSRuntime/core/context-registry.js). Older ones would be evicted by these anyway, so
    /// dropping them changes nothing the engine can observe; it must never be smaller.
    package static let registrationLimit = 1_000

    private var pairs: [Key: Remembered] = [:]
    private var pairsByContent: [ContentKey: Remembered] = [:]
    private var deferred: [DeferredRegistration] = []

    /// The pair remembered for `entry` and `selections` (nil selections: nothing selected), by
    /// handle or else by the selections' content key (then also remembered under the new handle,
    /// so the next resolve with that object takes the fast path).
    package mutating func remembered(entry: ContentfulEntry, selections: SelectedOptimizations?) -> Remembered? {
        let key = Key(entry: entry.handle, selections: selections?.handle ?? 0)
        if let pair = pairs[key] { return pair }
        guard let selections, let pair = pairsByContent[ContentKey(entry: entry.handle, selections: selections.cacheKey)] else { return nil }
        store(pair, under: key)
        return pair
    }

    package mutating func remember(_ pair: Remembered) {
        store(pair, under: Key(entry: pair.entry.handle, selections: pair.selections?.handle ?? 0))
        if let selections = pair.selections {
            pairsByContent[ContentKey(entry: pair.entry.handle, selections: selections.cacheKey)] = pair
        }
    }

    private mutating func store(_ pair: Remembered, under key: Key) {
        if pairs.count >= Self.pairLimit {
            pairs.removeAll(keepingCapacity: true)
            pairsByContent.removeAll(keepingCapacity: true)
        }
        pairs[key] = pair
    }

    package mutating func note(_ registration: DeferredRegistration) {
        if deferred.count >= 2 * Self.registrationLimit { deferred.removeFirst(deferred.count - Self.registrationLimit) }
        deferred.append(registration)
    }

    /// The registrations to replay, oldest first (at most ``registrationLimit``); empties the list.
    package mutating func takeDeferred() -> ArraySlice<DeferredRegistration> {
        guard !deferred.isEmpty else { return [] }
        let taken = deferred.suffix(Self.registrationLimit)
        deferred = []
        return taken
    }
}

/// 64 bytes that are never read: stored before and after state that one thread writes on every
/// resolve, so objects of another engine allocated next to it do not share its cache line.
private let cacheLinePadding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

extension CompactResolution {
    /// What this answer renders.
    package var outcome: OptimizationRuntime.Outcome {
        isEmptyVariant ? .emptyVariant : variantIndex >= 0 && experienceIndex >= 0 ? .variant : .baseline
    }
}

private extension JSONValue {
    /// The same value with its outermost array or object storage newly allocated (the members are
    /// shared), so retaining it never touches the original's reference counts. The storage is
    /// allocated with room for at least 16 members, so its reference count does not share a
    /// cache line with small objects of another engine's thread allocated next to it.
    var withOwnTopLevel: JSONValue {
        switch self {
        case .array(let elements):
            return .array(Self.paddedCopy(elements))
        case .object(let members):
            return .object(OrderedDictionary(
                uncheckedUniqueKeys: Self.paddedCopy(Array(members.keys)), values: Self.paddedCopy(members.values.elements)))
        default:
            return self
        }
    }

    static func paddedCopy<Element>(_ elements: [Element]) -> [Element] {
        var copy: [Element] = []
        copy.reserveCapacity(Swift.max(16, elements.count))
        copy.append(contentsOf: elements)
        return copy
    }
}
