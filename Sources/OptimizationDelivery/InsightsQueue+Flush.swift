import HostPlatform
import OptimizationJSON
import OrderedCollections

/// Flushing: the request, its answer, backoff, the circuit, and the timers.
extension InsightsQueue {
    /// Sends what is queued and returns when it went out or cannot go now: awaits a request in
    /// flight, then sends what was accepted meanwhile, round after round while rounds make
    /// progress. Sends nothing while a backoff wait runs or the circuit is open, after delivery
    /// was disabled, or after ``close()``. Failures are reported as queue events, never thrown.
    public func flush() async {
        await runFlights(begin: { beginFlush() }, remaining: { count }, sent: { state.withLock { $0.sent } })
    }

    /// Starts a flush in a task unless one is in flight or it may not send now.
    func startFlush() {
        _ = beginFlush()
    }

    /// Starts a flush in a task, as the threshold does, unless one is in flight or it may not
    /// send now (a backoff wait, an open circuit, offline); does not wait for it.
    public func startFlushIfAllowed() {
        startFlush()
    }

    /// The flight to await: the one in flight (`started` false), or a new one (`started` true);
    /// nil when nothing may be sent now.
    /// - Parameter despiteOffline: a client's last attempt before it closes (offline counts as
    ///   online; a backoff wait and an open circuit still hold it back).
    func beginFlush(despiteOffline: Bool = false) -> (task: Task<Void, Never>, started: Bool)? {
        let now = clock.now()
        return state.withLock { state -> (task: Task<Void, Never>, started: Bool)? in
            if let active = state.active {
                // A flight reporting its answer cannot take new events: the flush follows it.
                if state.finishing { state.flushRequested = true }
                return (active, false)
            }
            guard !state.closed, state.disabledReason == nil, state.online || despiteOffline else { return nil }
            guard state.retry.allowsFlush(now: now) else { return nil }
            guard !state.buckets.isEmpty else {
                state.retry.cancelRetry()
                return nil
            }
            let snapshot = Snapshot(batches: Array(state.buckets.values), generation: state.generation)
            state.inFlight = Set(snapshot.batches.lazy.flatMap(\.events).map(\.id))
            let task = Task { [self] in await self.send(snapshot) }
            state.active = task
            return (task, true)
        }
    }

    /// One request: the batches as `[{profile, events}, …]`, and what its answer means.
    private func send(_ snapshot: Snapshot) async {
        var body = "["
        for (index, batch) in snapshot.batches.enumerated() {
            if index > 0 { body += "," }
            body += #"{"profile":"# + batch.profileJSON + #","events":["#
            for (position, queued) in batch.events.enumerated() {
                if position > 0 { body += "," }
                body += queued.event.eventJSON
            }
            body += "]}"
        }
        body += "]"
        let outcome: DeliveryOutcome
        do {
            let response = try await transport.send(
                FetchRequest(url: url, method: "POST", headers: ["Content-Type": "application/json"], body: body))
            outcome = DeliveryOutcome(response: response, api: "Insights", now: clock.now())
        } catch {
            outcome = DeliveryOutcome(transportError: error, api: "Insights")
        }
        var pending = Pending()
        state.withLock { state in
            // The flight stays `active` (finishing) until its answer has been reported below: a
            // flush arriving meanwhile awaits it instead of finding nothing in flight.
            state.finishing = true
            state.inFlight = []
            guard snapshot.generation == state.generation else { return }
            handle(outcome, of: snapshot, state: &state, pending: &pending)
            reconcileTimer(&state)
        }
        deliver(pending)
        // Reported: the flight is over, and a flush asked for meanwhile follows it.
        let followUp = state.withLock { state -> Bool in
            defer { state.flushRequested = false }
            state.active = nil
            state.finishing = false
            return state.flushRequested
        }
        if followUp { startFlush() }
    }

    private func handle(_ outcome: DeliveryOutcome, of snapshot: Snapshot, state: inout State, pending: inout Pending) {
        let now = clock.now()
        switch outcome {
        case .delivered:
            pending.removals.append((removeSent(snapshot, from: &state), .delivered))
            recordSuccess(&state, pending: &pending)
        case .drop(let status, let reason):
            let dropped = removeSent(snapshot, from: &state)
            let text = "\(reason); \(dropped.count) event(s) in \(snapshot.batches.count) batch(es) were dropped (the API refuses them)."
            logger.warning("\(text)")
            pending.removals.append((dropped, .dropped))
            pending.queueEvents.append(queueEvent(.batchDropped, [
                "status": .number(JSONNumber(status)), "reason": .string(text), "droppedCount": .number(JSONNumber(dropped.count)),
                "droppedEvents": .array(dropped.map(\.event.eventValue)),
            ]))
            recordSuccess(&state, pending: &pending)
        case .disable(let status, let reason):
            let text = "Insights API delivery disabled: \(reason) (check clientId, environment and the Insights base URL). "
                + "No further Insights requests are made by this queue."
            state.disabledReason = text
            var discarded = state.held + state.buckets.values.flatMap(\.events)
            state.held.removeAll()
            state.buckets.removeAll()
            state.total = 0
            discarded += discardStored(&state)
            state.retry.reset()
            logger.error("\(text) \(discarded.count) queued event(s) discarded.")
            pending.removals.append((discarded, .disabled))
            pending.queueEvents.append(queueEvent(.deliveryDisabled, [
                "status": .number(JSONNumber(status)), "reason": .string(text), "droppedCount": .number(JSONNumber(discarded.count)),
            ]))
        case .retry(_, let reason, let retryAfter):
            let queued = state.total - state.held.count
            logger.warning("\(reason); \(queued) event(s) stay queued for retry.")
            guard !state.closed else { return }
            let failure = state.retry.recordFailure(now: now, retryAfter: retryAfter, policy: policy, random: random(), clock: clock) {
                [weak self] in self?.retryFired()
            }
            for (type, context) in failure.reportContexts(queuedBatches: state.buckets.count, queuedEvents: queued) {
                pending.queueEvents.append(queueEvent(type, context))
            }
        }
    }

    /// Removes exactly the sent events that are still queued (erasure may have taken some).
    private func removeSent(_ snapshot: Snapshot, from state: inout State) -> [Queued] {
        var removed: [Queued] = []
        for batch in snapshot.batches {
            guard let first = batch.events.first, let key = Optional(first.event.profileId), var bucket = state.buckets[key] else { continue }
            let sent = Set(batch.events.map(\.id))
            bucket.events.removeAll { queued in
                guard sent.contains(queued.id) else { return false }
                removed.append(queued)
                return true
            }
            state.buckets[key] = bucket.events.isEmpty ? nil : bucket
        }
        state.total -= removed.count
        state.sent &+= UInt64(removed.count)
        refill(&state)
        return removed
    }

    private func recordSuccess(_ state: inout State, pending: inout Pending) {
        guard !state.closed, let recovered = state.retry.recordSuccess() else { return }
        pending.queueEvents.append(queueEvent(.flushRecovered, recovered))
    }

    /// Arms the periodic flush while events are queued and delivery goes on; stops it otherwise.
    func reconcileTimer(_ state: inout State) {
        if state.closed || state.disabledReason != nil || state.total - state.held.count == 0 {
            state.periodicTimer?.cancel()
            state.periodicTimer = nil
            return
        }
        if state.periodicTimer == nil {
            state.periodicTimer = clock.schedule(after: policy.flushInterval) { [weak self] in self?.periodicFired() }
        }
    }

    private func periodicFired() {
        state.withLock { $0.periodicTimer = nil }
        startFlush()
        state.withLock { reconcileTimer(&$0) }
    }

    private func retryFired() {
        state.withLock { $0.retry.retryFired() }
        startFlush()
    }
}
