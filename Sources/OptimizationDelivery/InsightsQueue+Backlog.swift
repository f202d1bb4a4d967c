import EventOutbox
import OptimizationJSON

/// Taking events into memory: the cap without an outbox, the window over the stored backlog with
/// one. Every function here runs under the queue's lock.
extension InsightsQueue {
    /// Puts one event at the end of its profile's batch.
    func take(_ event: InsightsEvent, sequence: UInt64?, into state: inout State) {
        state.nextId &+= 1
        let queued = Queued(id: state.nextId, event: event, sequence: sequence)
        if state.buckets[event.profileId] == nil {
            state.buckets[event.profileId] = Bucket(profileJSON: event.profileJSON, events: [queued])
        } else {
            state.buckets[event.profileId]!.profileJSON = event.profileJSON
            state.buckets[event.profileId]!.events.append(queued)
        }
        state.total += 1
    }

    /// Without an outbox: drops the oldest events not in flight until one more fits.
    func makeRoom(in state: inout State, pending: inout Pending) {
        guard state.total >= policy.insightsMaxEvents else { return }
        var dropped: [Queued] = []
        while state.total >= policy.insightsMaxEvents, let oldest = dropOldest(&state) {
            dropped.append(oldest)
        }
        guard !dropped.isEmpty else { return }
        logger.warning("the Insights queue is full: dropped the oldest events", metadata: [
            "maxEvents": "\(policy.insightsMaxEvents)", "dropped": "\(dropped.count)",
        ])
        pending.removals.append((dropped, .capped))
    }

    /// The oldest event that is not in flight, removed; nil when everything is in flight.
    private func dropOldest(_ state: inout State) -> Queued? {
        for key in state.buckets.keys {
            guard let index = state.buckets[key]!.events.firstIndex(where: { !state.inFlight.contains($0.id) }) else { continue }
            let dropped = state.buckets[key]!.events.remove(at: index)
            if state.buckets[key]!.events.isEmpty { state.buckets.removeValue(forKey: key) }
            state.total -= 1
            return dropped
        }
        return nil
    }

    /// With an outbox: stores the event, then keeps it in memory when the window has room and no
    /// older event waits on disk only; else it waits on disk and the window loads in order.
    func accept(_ event: InsightsEvent, outbox: DurableOutbox, into state: inout State) throws(OutboxError) {
        let record = try outbox.append(OutboxEvent(
            queue: .insights, messageId: event.messageId, profileId: event.profileId.isEmpty ? nil : event.profileId,
            consent: event.consent, acceptedAt: clock.now(), payload: Array(event.itemJSON.utf8)))
        // A messageId stored before (a retried call) is not queued twice.
        guard record.sequence > state.residentThrough else { return }
        if !state.spilled && state.total < policy.insightsMaxEvents {
            take(event, sequence: record.sequence, into: &state)
            state.residentThrough = record.sequence
            return
        }
        state.spilled = true
        refill(&state, accepting: (record.sequence, event))
    }

    /// With an outbox: loads stored events, in order, while the window has room and events wait on
    /// disk only. `accepting` is the event being accepted (taken as it is, not read back).
    func refill(_ state: inout State, accepting: (sequence: UInt64, event: InsightsEvent)? = nil) {
        guard let outbox else { return }
        while state.spilled && !state.closed && state.total < policy.insightsMaxEvents {
            let room = policy.insightsMaxEvents - state.total
            let records = outbox.pendingRecords(queue: .insights, after: state.residentThrough, limit: room)
            var unreadable: [UInt64] = []
            for record in records {
                state.residentThrough = max(state.residentThrough, record.sequence)
                if let accepting, accepting.sequence == record.sequence {
                    take(accepting.event, sequence: record.sequence, into: &state)
                } else if let event = try? InsightsEvent(itemJSON: String(decoding: record.payload, as: UTF8.self)) {
                    take(event, sequence: record.sequence, into: &state)
                } else {
                    unreadable.append(record.sequence)
                }
            }
            if !unreadable.isEmpty {
                // Not an Insights item: it can never be sent. Acknowledged so it stops occupying the backlog.
                outbox.acknowledge(sequences: unreadable)
                logger.error("stored Insights events that cannot be read were removed from the outbox", metadata: ["count": "\(unreadable.count)"])
            }
            if records.count < room { state.spilled = false }
        }
    }

    /// With an outbox, delivery disabled: every event waiting on disk only, for acknowledgement.
    func discardStored(_ state: inout State) -> [Queued] {
        guard let outbox else { return [] }
        var gone: [Queued] = []
        while state.spilled {
            let records = outbox.pendingRecords(queue: .insights, after: state.residentThrough, limit: policy.insightsMaxEvents)
            if records.isEmpty { break }
            for record in records {
                state.residentThrough = max(state.residentThrough, record.sequence)
                let event = (try? InsightsEvent(itemJSON: String(decoding: record.payload, as: UTF8.self)))
                    ?? InsightsEvent(profileId: "", profileJSON: "{}", messageId: record.messageId, consent: false, eventJSON: "{}")
                gone.append(Queued(id: 0, event: event, sequence: record.sequence))
            }
        }
        state.spilled = false
        return gone
    }
}
