import EventOutbox
import OptimizationJSON

/// Taking events into memory: the cap without an outbox, the window over the stored backlog with
/// one. Every function here runs under the queue's lock.
extension InsightsQueue {
    /// Puts one event at the end of its profile's batch (`held`: with the events that wait for
    /// the visitor's first profile).
    func take(_ event: InsightsEvent, sequence: UInt64?, held: Bool = false, into state: inout State) {
        state.nextId &+= 1
        let queued = Queued(id: state.nextId, event: event, sequence: sequence)
        state.total += 1
        if held {
            state.held.append(queued)
            return
        }
        if state.buckets[event.profileId] == nil {
            state.buckets[event.profileId] = Bucket(profileJSON: event.profileJSON, events: [queued])
        } else {
            state.buckets[event.profileId]!.profileJSON = event.profileJSON
            state.buckets[event.profileId]!.events.append(queued)
        }
    }

    /// Moves the held events into the batch of the visitor's profile, once one exists.
    func adoptHeld(_ state: inout State) {
        guard !state.held.isEmpty, let profile = state.visitorProfile else { return }
        let held = state.held
        state.held.removeAll()
        state.total -= held.count
        for queued in held {
            var event = queued.event
            event.profileId = profile.id
            event.profileJSON = profile.json
            take(event, sequence: queued.sequence, into: &state)
        }
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

    /// The oldest held event, else the oldest queued event that is not in flight, removed; nil
    /// when everything is in flight.
    private func dropOldest(_ state: inout State) -> Queued? {
        if !state.held.isEmpty {
            state.total -= 1
            return state.held.removeFirst()
        }
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
    func accept(_ event: InsightsEvent, held: Bool, outbox: DurableOutbox, into state: inout State) throws(OutboxError) {
        let record = try outbox.append(OutboxEvent(
            queue: .insights, messageId: event.messageId, profileId: held || event.profileId.isEmpty ? nil : event.profileId,
            consent: event.consent, acceptedAt: clock.now(), payload: Array((held ? event.heldItemJSON : event.itemJSON).utf8)))
        // A messageId stored before (a retried call) is not queued twice.
        guard record.sequence > state.residentThrough else { return }
        if !state.spilled && state.total < policy.insightsMaxEvents {
            take(event, sequence: record.sequence, held: held, into: &state)
            state.residentThrough = record.sequence
            return
        }
        state.spilled = true
        refill(&state, accepting: (record.sequence, event, held))
    }

    /// With an outbox: loads stored events, in order, while the window has room and events wait on
    /// disk only. `accepting` is the event being accepted (taken as it is, not read back).
    func refill(_ state: inout State, accepting: (sequence: UInt64, event: InsightsEvent, held: Bool)? = nil) {
        guard let outbox else { return }
        while state.spilled && !state.closed && state.total < policy.insightsMaxEvents {
            let room = policy.insightsMaxEvents - state.total
            let records = outbox.pendingRecords(queue: .insights, after: state.residentThrough, limit: room)
            var unreadable: [UInt64] = []
            for record in records {
                state.residentThrough = max(state.residentThrough, record.sequence)
                if let accepting, accepting.sequence == record.sequence {
                    take(accepting.event, sequence: record.sequence, held: accepting.held, into: &state)
                } else if let stored = InsightsEvent.stored(String(decoding: record.payload, as: UTF8.self)) {
                    take(stored.event, sequence: record.sequence, held: stored.held, into: &state)
                } else {
                    unreadable.append(record.sequence)
                }
            }
            adoptHeld(&state)
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
                let event = InsightsEvent.stored(String(decoding: record.payload, as: UTF8.self))?.event
                    ?? InsightsEvent(profileId: "", profileJSON: "{}", messageId: record.messageId, consent: false, eventJSON: "{}")
                gone.append(Queued(id: 0, event: event, sequence: record.sequence))
            }
        }
        state.spilled = false
        return gone
    }
}
