import Logging
import OptimizationJSON
import OrderedCollections
import Synchronization

/// Applies the persistence rules between the engine's state and an ``OptimizationStore``.
///
/// - At start-up it hands the persisted state to the shared core, which resolves it against the
///   configured defaults (configured values win; continuity only with persistence consent).
/// - On every state change: consent is always written (`accepted`/`denied`, removed when
///   unset); continuity is written while persistence consent is `true` (the anonymous id follows
///   the profile id, and is kept when the profile has none), erased when it is `false`, left as
///   is while it is unset. Writes happen only when the persisted state actually changes.
///
/// Thread-safe; state changes arrive on whichever thread runs the engine.
package final class PersistenceCoordinator: Sendable {
    package let store: any OptimizationStore
    private let saved: Mutex<PersistedState>

    package init(store: any OptimizationStore) {
        self.store = store
        saved = Mutex(store.load())
    }

    /// What was persisted, as the bridge's `persisted` configuration object. The shared core
    /// resolves it against the configured defaults (`resolveStatefulDefaults`: configured values win);
    /// the first state push then erases continuity from disk if persistence consent is `false`.
    package var persistedConfiguration: JSONValue {
        let persisted = saved.withLock { $0 }
        var object = OrderedDictionary<String, JSONValue>()
        if let consent = persisted.consent { object["consent"] = .bool(consent) }
        if let persistenceConsent = persisted.persistenceConsent { object["persistenceConsent"] = .bool(persistenceConsent) }
        if let profile = persisted.profile { object["profile"] = profile }
        if let changes = persisted.changes { object["changes"] = changes }
        if let selections = persisted.selectedOptimizations { object["selectedOptimizations"] = selections }
        if let anonymousId = persisted.anonymousId { object["anonymousId"] = .string(anonymousId) }
        return .object(object)
    }

    /// Records the engine's new state (a bridge state JSON object).
    package func stateChanged(_ state: OptimizationState) {
        var next = saved.withLock { $0 }
        next.consent = state.consent
        next.persistenceConsent = state.persistenceConsent
        switch state.persistenceConsent {
        case true?:
            next.profile = state.profile
            next.changes = state.changes
            next.selectedOptimizations = state.selectedOptimizations
            if let id = state.profile?["id"]?.stringValue, !id.isEmpty { next.anonymousId = id }
        case false?:
            next = next.consentOnly
        case nil:
            break
        }
        write(next)
    }

    /// Erases profile continuity, keeping consent (used by `reset()`).
    package func clearProfileContinuity() {
        write(saved.withLock { $0 }.consentOnly)
    }

    private func write(_ state: PersistedState) {
        let changed = saved.withLock { current -> Bool in
            guard current != state else { return false }
            current = state
            return true
        }
        if changed { store.save(state) }
    }
}
