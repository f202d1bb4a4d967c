import EventOutbox
import OptimizationJSON

/// Taking events into memory: the cap without an outbox, the window over the stored backlog with
/// one. Every function here runs under the queue's lock.
extension ExperienceQueue {
    /// Puts one event at the end of the queue. - Returns: its id.
    @discardableResult
    func take(_ eventJSON: String, messageId: String, sequence: UInt64?, into state: inout State) -> UInt64 {
        state.nextId &+= 1
        state.events.append(Queued(id: state.nextId, messageId: messageId, eventJSON: eventJSON, sequence: sequence))
        return state.nextId
    }

    /// Without an outbox: drops the oldest events not in flight until one more fits, reporting
    /// one `offlineDrop`; their waiting senders go to `pending.released`.
    func makeRoom(in state: inout State, pending: inout Pending) {
        let capacity = policy.experienceMaxEvents
        guard state.events.count >= capacity else { return }
        var excess = state.events.count - capacity + 1
        var dropped: [Queued] = []
        state.events.removeAll { queued in
            guard excess > 0, !state.inFlight.contains(queued.id) else { return false }
            dropped.append(queued)
            excess -= 1
            return true
        }
        guard !dropped.isEmpty else { return }
        logger.warning("the Experience queue is full: dropped the oldest events", metadata: [
            "maxEvents": "\(capacity)", "dropped": "\(dropped.count)",
        ])
        pending.removals.append((dropped, .capped))
        pending.released += dropped.filter(\.awaited).map(\.id)
        pending.queueEvents.append(queueEvent(.offlineDrop, [
            "droppedCount": .number(JSONNumber(dropped.count)), "droppedEvents": .array(dropped.map(\.eventValue)),
            "maxEvents": .number(JSONNumber(capacity)), "queuedEvents": .number(JSONNumber(state.events.count + 1)),
        ]))
    }

    /// With an outbox: stores the event, then keeps it in memory when the window has room and no
    /// older event waits on disk only; else it waits on disk and the window loads in order.
    /// - Returns: its id when it is in memory.
    func store(
        _ eventJSON: String, messageId: String, consent: Bool, profileId: String?, outbox: DurableOutbox, into state: inout State
    ) throws(OutboxError) -> UInt64? {
        let record = try outbox.append(OutboxEvent(
            queue: .experience, messageId: messageId, profileId: profileId.flatMap { $0.isEmpty ? nil : $0 }, consent: consent,
            acceptedAt: clock.now(), payload: Array(eventJSON.utf8)))
        // A messageId stored before (a retried call) is not queued twice.
        guard record.sequence > state.residentThrough else { return nil }
        if !state.spilled && state.events.count < policy.experienceMaxEvents {
            state.residentThrough = record.sequence
            return take(eventJSON, messageId: messageId, sequence: record.sequence, into: &state)
        }
        state.spilled = true
        refill(&state)
        return state.events.last(where: { $0.sequence == record.sequence })?.id
    }

    /// With an outbox: loads stored events, in order, while the window has room and events wait
    /// on disk only.
    func refill(_ state: inout State) {
        guard let outbox else { return }
        while state.spilled && !state.closed && state.events.count < policy.experienceMaxEvents {
            let room = policy.experienceMaxEvents - state.events.count
            let records = outbox.pendingRecords(queue: .experience, after: state.residentThrough, limit: room)
            for record in records {
                state.residentThrough = max(state.residentThrough, record.sequence)
                take(String(decoding: record.payload, as: UTF8.self), messageId: record.messageId, sequence: record.sequence, into: &state)
            }
            if records.count < room { state.spilled = false }
        }
    }

    /// With an outbox, delivery disabled: every event waiting on disk only, for acknowledgement.
    func discardStored(_ state: inout State) -> [Queued] {
        guard let outbox else { return [] }
        var gone: [Queued] = []
        while state.spilled {
            let records = outbox.pendingRecords(queue: .experience, after: state.residentThrough, limit: policy.experienceMaxEvents)
            if records.isEmpty { break }
            for record in records {
                state.residentThrough = max(state.residentThrough, record.sequence)
                gone.append(Queued(id: 0, messageId: record.messageId, eventJSON: "{}", sequence: record.sequence))
            }
        }
        state.spilled = false
        return gone
    }
}
