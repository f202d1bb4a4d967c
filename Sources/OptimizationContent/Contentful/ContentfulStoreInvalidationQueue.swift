import Logging
import OrderedCollections
import Synchronization

/// The invalidations a ``ContentfulDeliverySource`` still has to pass to its entry store: run in
/// call order, one at a time, by one task, in bounded memory however slow the store is.
///
/// An invalidation already waiting covers an identical one queued after it (it has not started,
/// so it runs after both calls). When ``maximumPending`` are waiting, they are replaced by one
/// invalidation of everything of the space and environment: the store ends up at least as
/// invalidated as the calls asked.
///
/// **Threading.** Thread-safe; the store is called from one task at a time.
final class ContentfulStoreInvalidationQueue: Sendable {
    /// Most invalidations waiting for the store.
    static let maximumPending = 1000

    private struct State {
        var pending: OrderedSet<ContentfulInvalidation> = []
        /// The task passing `pending` to the store; nil when it is empty and nothing runs.
        var worker: Task<Void, Never>?
    }

    private let store: any ContentfulEntryStore
    private let logger: Logger
    private let state = Mutex(State())

    init(store: any ContentfulEntryStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Queues `invalidation` after the ones queued before (see the type for what is merged).
    func enqueue(_ invalidation: ContentfulInvalidation) {
        let collapsed = state.withLock { state -> Int? in
            var collapsed: Int?
            if !state.pending.contains(invalidation) {
                if state.pending.count >= Self.maximumPending {
                    collapsed = state.pending.count + 1
                    state.pending.removeAll { $0.spaceId == invalidation.spaceId && $0.environment == invalidation.environment }
                    state.pending.append(ContentfulInvalidation(
                        spaceId: invalidation.spaceId, environment: invalidation.environment, entryId: nil))
                } else {
                    state.pending.append(invalidation)
                }
            }
            if state.worker == nil {
                state.worker = Task { await self.drain() }
            }
            return collapsed
        }
        if let collapsed {
            logger.warning("the entry store is behind; its waiting invalidations were replaced by one of everything",
                           metadata: ["waiting": "\(collapsed)"])
        }
    }

    /// Number of invalidations waiting (not counting one the store is running).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Returns once nothing is waiting or running.
    func waitUntilEmpty() async {
        while let worker = state.withLock({ $0.worker }) {
            await worker.value
        }
    }

    private func drain() async {
        while let next = state.withLock({ state -> ContentfulInvalidation? in
            guard !state.pending.isEmpty else {
                state.worker = nil
                return nil
            }
            return state.pending.removeFirst()
        }) {
            await store.invalidate(next)
        }
    }
}
