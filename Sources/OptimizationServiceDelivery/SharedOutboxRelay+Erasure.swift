import OptimizationDelivery
import Logging
import Synchronization
import HostPlatform
import OptimizationVocabulary

extension SharedOutboxRelay {
    /// Erases the profile from this replica's queues first (whatever the store answers, none of
    /// its queued events leaves this replica after this), then from the store (which records it
    /// in the erasure log the other replicas read). No claim runs in between (one worker).
    func erase(_ profileId: String) async -> Result<Int, OptimizationError> {
        let delivery = state.withLock { state -> ServiceDelivery? in
            state.held = state.held.filter { $0.value.profileId != profileId }
            return state.delivery
        }
        _ = delivery?.eraseQueuedEvents(of: profileId)
        do {
            return .success(try await configuration.store.eraseProfile(profileId))
        } catch {
            return .failure(.bridgeError("the shared outbox could not erase the profile's events: \(error)"))
        }
    }

    /// When a poll tick passed (or the cursor is not known yet), reads the profiles erased since
    /// the last read from the store's erasure log and drops them from this replica: their events
    /// leave the Insights queues' memory (all of that profile's queued events, including ones
    /// queued in memory while the store was away), and their claimed events are forgotten and
    /// given back (`release`: the erased ones are gone from the store, so it changes nothing for
    /// them; one of the profile's events stored after the erasure becomes claimable again and is
    /// delivered later). A cursor that fell behind the log's pruning falls back to the store's
    /// `SharedOutboxStore/storedSequences(among:)`: a profile with a held event no longer
    /// stored is treated as erased. What fails is retried on the next tick.
    /// - Returns: whether the cursor is known, so claims may run (a claim before the first read
    ///   could take events of a profile erased before that read started).
    func readErasuresIfDue() async -> Bool {
        let (cursor, due) = state.withLock { ($0.erasureCursor, $0.erasureCheckDue || $0.erasureCursor == nil) }
        guard due else { return true }
        let read: SharedOutboxErasures
        do {
            read = try await configuration.store.erasures(after: cursor)
        } catch {
            reportWorkerFailure("erasure log", error)
            return cursor != nil
        }
        var erased = Set(read.profileIds)
        if !read.isComplete {
            let held = state.withLock { Array($0.held.values) }
            do {
                let stored = Set(try await configuration.store.storedSequences(among: held.map(\.sequence)))
                erased.formUnion(held.filter { !stored.contains($0.sequence) }.map(\.profileId))
            } catch {
                reportWorkerFailure("erasure check", error)
                return cursor != nil
            }
            logger.warning("this replica read the shared outbox's erasure log too late to see every erasure; it checked which of its claimed events are still stored instead",
                           metadata: ["held": "\(held.count)", "gone": "\(erased.count)"])
        }
        reportWorkerSuccess()
        let delivery = state.withLock { state -> ServiceDelivery? in
            state.erasureCursor = read.cursor
            state.erasureCheckDue = false
            guard !erased.isEmpty else { return nil }
            for (messageId, held) in state.held where erased.contains(held.profileId) {
                state.held.removeValue(forKey: messageId)
                state.released.append(held.sequence)
            }
            return state.delivery
        }
        guard let delivery else { return true }
        var removed = 0
        for profileId in erased {
            let count = delivery.eraseQueuedEvents(of: profileId)
            removed += count
            if count > 0 {
                logger.debug("dropped the queued events of a profile another replica erased", metadata: ["profileId": "\(profileId)", "count": "\(count)"])
            }
        }
        if removed > 0 {
            metrics.sharedOutboxErasedInMemory(count: removed)
            logger.info("dropped queued events of profiles erased through the shared outbox", metadata: ["events": "\(removed)", "profiles": "\(erased.count)"])
        }
        await settle()
        return true
    }
}
