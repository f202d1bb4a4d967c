import DequeModule
import Synchronization
import HostPlatform
import OptimizationJSON
import OptimizationContent

/// The evaluated flags of recently asked profiles, for an ``OFREPEvaluator``: each kept for a
/// time to live on the service clock, at most `capacity` of them (the oldest go first), and one
/// evaluation in flight per profile (concurrent callers for a profile share it).
///
/// **Threading.** Safe from any task; the lock is never held across an `await`.
final class OFREPAnswerCache: Sendable {
    /// What an evaluation of one profile gave.
    struct Answer: Sendable {
        var selectedOptimizations: SelectedOptimizations?
        var changes: [JSONValue]
        /// True when the answer was served from the cache (evaluated for an earlier request).
        var isCached = false
    }

    private enum Slot {
        case ready(Answer, expiresAt: Double, stamp: UInt64)
        case pending(Task<Result<Answer, OFREPEvaluationFailure>, Never>, stamp: UInt64)

        var stamp: UInt64 {
            switch self {
            case .ready(_, _, let stamp), .pending(_, let stamp): return stamp
            }
        }
    }

    private struct State {
        var slots: [String: Slot] = [:]
        /// Keys in insertion order with the stamp they were inserted under.
        var order: Deque<(key: String, stamp: UInt64)> = []
        var nextStamp: UInt64 = 0
    }

    private let state = Mutex(State())
    private let clock: any HostClock
    private let timeToLive: Double
    private let capacity: Int

    init(clock: any HostClock, timeToLive: Duration, capacity: Int) {
        self.clock = clock
        self.timeToLive = timeToLive.inMilliseconds
        self.capacity = capacity
    }

    /// The answer for `key`: from memory while it is fresh, else from `evaluate` (shared with
    /// every caller that asks for the same key meanwhile). Failures are not kept.
    func answer(
        for key: String, evaluate: @escaping @Sendable () async -> Result<Answer, OFREPEvaluationFailure>
    ) async -> Result<Answer, OFREPEvaluationFailure> {
        let now = clock.now()
        enum Lookup {
            case fresh(Answer)
            case join(Task<Result<Answer, OFREPEvaluationFailure>, Never>)
            case start(Task<Result<Answer, OFREPEvaluationFailure>, Never>, stamp: UInt64)
        }
        let lookup = state.withLock { state -> Lookup in
            switch state.slots[key] {
            case .ready(let answer, let expiresAt, _) where expiresAt > now:
                return .fresh(answer)
            case .pending(let task, _):
                return .join(task)
            default:
                let stamp = state.nextStamp
                state.nextStamp += 1
                let task = Task { await evaluate() }
                insert(.pending(task, stamp: stamp), for: key, stamp: stamp, into: &state)
                return .start(task, stamp: stamp)
            }
        }
        let task: Task<Result<Answer, OFREPEvaluationFailure>, Never>
        let stamp: UInt64
        switch lookup {
        case .fresh(var answer):
            answer.isCached = true
            return .success(answer)
        case .join(let joined): return await joined.value
        case .start(let started, let startedStamp): (task, stamp) = (started, startedStamp)
        }
        let result = await task.value
        state.withLock { state in
            // Only the evaluation this caller started settles its slot (a newer one may replace it).
            guard case .pending(_, let current)? = state.slots[key], current == stamp else { return }
            switch result {
            case .success(let answer):
                state.slots[key] = .ready(answer, expiresAt: clock.now() + timeToLive, stamp: stamp)
            case .failure:
                state.slots[key] = nil
            }
        }
        return result
    }

    /// How many profiles are kept or being evaluated.
    var count: Int { state.withLock { $0.slots.count } }

    private func insert(_ slot: Slot, for key: String, stamp: UInt64, into state: inout State) {
        state.slots[key] = slot
        state.order.append((key, stamp))
        while state.slots.count > capacity, let oldest = state.order.popFirst() {
            if state.slots[oldest.key]?.stamp == oldest.stamp { state.slots[oldest.key] = nil }
        }
        // Entries replaced under a newer stamp leave stale keys behind; keep the deque bounded.
        if state.order.count > capacity * 2 {
            state.order = Deque(state.order.filter { state.slots[$0.key]?.stamp == $0.stamp })
        }
    }
}
