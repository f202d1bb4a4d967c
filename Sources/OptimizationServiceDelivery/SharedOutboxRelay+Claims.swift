import OptimizationDelivery
import Logging
import Synchronization
import HostPlatform
import OptimizationVocabulary

extension SharedOutboxRelay {
    /// One claim of what fits into the queues; true when more may be claimable and fit.
    func claimRound() async -> Bool {
        guard let delivery = state.withLock({ $0.closed || $0.deliveryDisabled ? nil : $0.delivery }) else { return false }
        let room = capacity - delivery.queuedCount
        guard room > 0 else { return false }
        let limit = min(room, max(1, configuration.claimBatchSize))
        let records: [OutboxRecord]
        do {
            records = try await configuration.store.claim(queue: .insights, limit: limit)
        } catch {
            reportWorkerFailure("claim", error)
            return false
        }
        reportWorkerSuccess()
        guard !records.isEmpty else { return false }
        state.withLock { state in
            for record in records {
                state.held[record.messageId] = Held(sequence: record.sequence, profileId: record.profileId ?? "")
            }
        }
        let fates = delivery.admit(records.map { String(decoding: $0.payload, as: UTF8.self) })
        return await settleAdmission(of: records, fates) && records.count == limit
    }

    /// Keeps the claimed events the queues took; gives back those they did not (an engine
    /// closing) and those they refused, and moves to the dead letters the ones refused
    /// ``SharedOutbox/deadLetterAfterRefusals`` times. Events already queued are never given
    /// back here (that would deliver them twice).
    /// - Returns: false when an engine did not take its events (it is closing: claiming stops);
    ///   refused events do not stop it (each is refused a bounded number of times).
    private func settleAdmission(of records: [OutboxRecord], _ fates: [ServiceDelivery.Admitted]) async -> Bool {
        let limit = max(1, configuration.deadLetterAfterRefusals)
        let (notQueued, refused, deadLettered, reason) = state.withLock { state -> (Int, Int, Int, String?) in
            var notQueued = 0, refused = 0, deadLettered = 0
            var reason: String?
            for (record, fate) in zip(records, fates) {
                switch fate {
                case .queued:
                    state.refusals.removeValue(forKey: record.sequence)
                    continue
                case .notQueued:
                    notQueued += 1
                    guard state.held.removeValue(forKey: record.messageId) != nil else { continue }
                    state.released.append(record.sequence)
                case .refused(let why):
                    refused += 1
                    reason = reason ?? why
                    guard state.held.removeValue(forKey: record.messageId) != nil else { continue }
                    let count = state.refusals[record.sequence, default: 0] + 1
                    if count >= limit {
                        state.refusals.removeValue(forKey: record.sequence)
                        state.deadLetters.append(record.sequence)
                        deadLettered += 1
                    } else {
                        state.refusals[record.sequence] = count
                        state.released.append(record.sequence)
                    }
                }
            }
            return (notQueued, refused, deadLettered, reason)
        }
        if notQueued > 0 {
            logger.error("claimed shared-outbox events could not be queued; they are given back", metadata: ["count": "\(notQueued)"])
        }
        if refused > deadLettered {
            logger.warning("the delivery queue refused claimed shared-outbox events; they are given back", metadata: [
                "count": "\(refused - deadLettered)", "reason": "\(reason ?? "refused")",
            ])
        }
        guard notQueued > 0 || refused > 0 else { return true }
        await settle()
        return notQueued == 0
    }

    /// Deletes acknowledged events and gives released ones back; what fails is kept for the next
    /// wake (the leases of acknowledged events keep being renewed meanwhile, so no other replica
    /// sends them again).
    func settle() async {
        let (acknowledged, released, deadLetters) = state.withLock { state in
            defer {
                state.acknowledged.removeAll()
                state.released.removeAll()
                state.deadLetters.removeAll()
            }
            return (state.acknowledged, state.released, state.deadLetters)
        }
        if !deadLetters.isEmpty {
            do {
                let moved = try await configuration.store.deadLetter(deadLetters)
                reportWorkerSuccess()
                metrics.sharedOutboxDeadLettered(count: deadLetters.count)
                logger.error("shared-outbox events the delivery queue kept refusing were moved to the store's dead letters",
                             metadata: ["count": "\(deadLetters.count)", "moved": "\(moved)"])
            } catch {
                state.withLock { $0.deadLetters.append(contentsOf: deadLetters) }
                reportWorkerFailure("dead letter", error)
            }
        }
        if !acknowledged.isEmpty {
            do {
                try await configuration.store.acknowledge(acknowledged)
                reportWorkerSuccess()
            } catch {
                state.withLock { $0.acknowledged.append(contentsOf: acknowledged) }
                reportWorkerFailure("acknowledge", error)
            }
        }
        if !released.isEmpty {
            do {
                try await configuration.store.release(released)
            } catch {
                // Retried on the next wake: while this replica renews its leases (which the
                // store does for every event it holds) they would not expire.
                state.withLock { $0.released.append(contentsOf: released) }
                reportWorkerFailure("release", error)
            }
        }
    }

    func renewLeasesIfDue() async {
        let now = clock.now()
        let due = state.withLock { state -> Bool in
            guard !state.held.isEmpty || !state.acknowledged.isEmpty,
                  now - state.lastRenewal >= configuration.leaseRenewalInterval.inMilliseconds else { return false }
            state.lastRenewal = now
            return true
        }
        guard due else { return }
        do {
            try await configuration.store.renewLeases()
        } catch {
            reportWorkerFailure("lease renewal", error)
        }
    }
}
