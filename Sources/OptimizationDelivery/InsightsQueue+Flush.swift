import HostPlatform
import OptimizationJSON
import OrderedCollections

/// Flushing: the requests of a flight, their answers (bisection, credential refusals) and the
/// periodic timer. The flight in progress, backoff, the circuit and disabling are
/// ``DeliveryQueueCore``'s.
extension InsightsQueue {
    /// Sends what is queued and returns when it went out or cannot go now: awaits a request in
    /// flight, then sends what was accepted meanwhile, round after round while rounds make
    /// progress. Sends nothing while a backoff wait runs or the circuit is open, after delivery
    /// was disabled, or after ``close()``. Failures are reported as queue events, never thrown.
    package func flush() async {
        await runFlights(begin: { beginFlush() }, remaining: { count }, sent: { state.withLock { $0.core.sent } })
    }

    /// Starts a flush in a task unless one is in flight or it may not send now.
    func startFlush() {
        _ = beginFlush()
    }

    /// Starts a flush in a task, as the threshold does, unless one is in flight or it may not
    /// send now (a backoff wait, an open circuit, offline); does not wait for it.
    package func startFlushIfAllowed() {
        startFlush()
    }

    /// The flight to await: the one in flight (`started` false), or a new one (`started` true);
    /// nil when nothing may be sent now.
    /// - Parameter despiteOffline: a client's last attempt before it closes (offline counts as
    ///   online; a backoff wait and an open circuit still hold it back).
    func beginFlush(despiteOffline: Bool = false) -> (task: Task<Void, Never>, started: Bool)? {
        let now = clock.now()
        return state.withLock { state -> (task: Task<Void, Never>, started: Bool)? in
            switch state.core.gate(now: now, despiteOffline: despiteOffline, hasEvents: !state.core.events.buckets.isEmpty) {
            case .inProgress(let active): return (active, false)
            case .shut: return nil
            case .open: break
            }
            let snapshot = Snapshot(
                batches: Array(state.core.events.buckets.values), generation: state.core.generation,
                resends: state.core.retry.circuit.consecutiveFailures)
            let task = Task { [self] in await self.send(snapshot) }
            state.core.launch(task, carrying: Set(snapshot.batches.lazy.flatMap(\.events).map(\.id)))
            return (task, true)
        }
    }

    /// One flight: the snapshot's requests (``InsightsFlight``: packed within the byte bound,
    /// refused multi-profile requests bisected), sent one after the other, and what their answers
    /// mean for the queue. After the first request, each is sent only with the events that are
    /// still queued (an erasure or an outbox drop meanwhile takes them out), and none after a
    /// ``purge()`` or ``close()``.
    private func send(_ snapshot: Snapshot) async {
        var flight = InsightsFlight(batches: snapshot.batches, maxBytes: policy.insightsMaxRequestBytes)
        while !Task.isCancelled, var request = flight.next() {
            if flight.sentRequests > 1 {
                guard let current = stillQueued(request, generation: snapshot.generation) else { break }
                guard !current.batches.isEmpty else { continue }
                request = current
            }
            let outcome: DeliveryOutcome
            do {
                let response = try await DeliveryAttempt.$resendCount.withValue(snapshot.resends) {
                    try await transport.send(
                        FetchRequest(url: url, method: "POST", headers: ["Content-Type": "application/json"], body: request.body))
                }
                outcome = DeliveryOutcome(response: response, api: "Insights", now: clock.now())
            } catch {
                outcome = DeliveryOutcome(transportError: error, api: "Insights")
            }
            flight.record(outcome, for: request)
        }
        var pending = Pending()
        state.withLock { state in
            // The flight stays `active` (finishing) until its answer has been reported below: a
            // flush arriving meanwhile awaits it instead of finding nothing in flight.
            guard state.core.answered(generation: snapshot.generation) else { return }
            handle(flight, state: &state, pending: &pending)
            reconcileTimer(&state)
        }
        deliver(pending)
        // Reported: the flight is over, and a flush asked for meanwhile follows it.
        let followUp = state.withLock { $0.core.end() }
        if followUp { startFlush() }
    }

    /// `request` with only the events still queued; nil when the flight must stop (purged or
    /// closed since it began).
    private func stillQueued(_ request: InsightsFlight.Request, generation: Int) -> InsightsFlight.Request? {
        state.withLock { state -> InsightsFlight.Request? in
            guard state.core.generation == generation, !state.core.closed else { return nil }
            var batches: [Bucket] = []
            for batch in request.batches {
                guard let key = batch.events.first?.event.profileId, let bucket = state.core.events.buckets[key] else { continue }
                let queued = Set(bucket.events.lazy.map(\.id))
                let kept = batch.events.filter { queued.contains($0.id) }
                if !kept.isEmpty { batches.append(Bucket(profileJSON: batch.profileJSON, events: kept)) }
            }
            return InsightsFlight.Request(batches: batches)
        }
    }

    /// What the flight's answers mean: accepted events leave the queue (delivered), refused and
    /// oversized ones are dropped and reported, then the retry, a credential refusal, or success.
    private func handle(_ flight: InsightsFlight, state: inout State, pending: inout Pending) {
        if !flight.delivered.isEmpty {
            pending.report.removals.append((removeSent(flight.delivered, from: &state), .delivered))
            state.credentialRefusals = 0
        }
        for refusal in flight.refused {
            let dropped = removeSent(refusal.batches, from: &state)
            guard !dropped.isEmpty else { continue }
            let text = "\(refusal.reason); \(dropped.count) event(s) in \(refusal.batches.count) batch(es) were dropped (the API refuses them)."
            logger.warning("\(text)")
            reportDropped(dropped, status: refusal.status, reason: text, state: state, pending: &pending)
        }
        if !flight.oversized.isEmpty {
            let dropped = removeSent(flight.oversized.map { Bucket(profileJSON: "", events: [$0]) }, from: &state)
            if !dropped.isEmpty {
                let text = "\(dropped.count) Insights event(s) larger than a request may be "
                    + "(\(policy.insightsMaxRequestBytes) bytes with their profile) were dropped, not sent."
                logger.warning("\(text)")
                reportDropped(dropped, status: 413, reason: text, state: state, pending: &pending)
            }
        }
        if let retry = flight.retry {
            recordFailure(status: retry.status, reason: retry.reason, retryAfter: retry.retryAfterMilliseconds, state: &state, pending: &pending)
        } else if let refusal = flight.credentialRefusal {
            refusedCredential(refusal, suspects: flight.suspects, state: &state, pending: &pending)
        } else if !flight.delivered.isEmpty || !flight.refused.isEmpty {
            state.core.recordSuccess(report: &pending.report)
            // The flight ran out of requests while it made progress: the next one follows it.
            if !flight.pending.isEmpty { state.core.flushRequested = true }
        }
    }

    /// Reports events that left the queue unsent or refused: `onRemoved` (`dropped`) and one
    /// `batchDropped` (the events' payloads are in its context, never in a log).
    private func reportDropped(_ dropped: [Queued], status: Int, reason: String, state: State, pending: inout Pending) {
        pending.report.removals.append((dropped, .dropped))
        pending.report.report(state.core.queueEvent(.batchDropped, [
            "status": .number(JSONNumber(status)), "reason": .string(reason), "droppedCount": .number(JSONNumber(dropped.count)),
            "droppedEvents": .array([]),
        ]), listing: dropped)
    }

    /// A retryable answer: the events stay queued, the backoff (and maybe the circuit) starts.
    /// - Parameter credentialRefusals: set for a 401/403/404 that did not disable delivery (its
    ///   count goes into the `flushFailure` report with the status).
    private func recordFailure(
        status: Int, reason: String, retryAfter: Double?, credentialRefusals: Int? = nil, state: inout State, pending: inout Pending
    ) {
        var extra: OrderedDictionary<String, JSONValue> = [:]
        if let credentialRefusals {
            extra["status"] = .number(JSONNumber(status))
            extra["credentialRefusals"] = .number(JSONNumber(credentialRefusals))
        }
        state.core.recordFailure(
            reason: reason, retryAfter: retryAfter, queuedBatches: state.core.events.buckets.count, queuedEvents: state.core.events.sendable,
            random: random, extra: extra, report: &pending.report
        ) { [weak self] in self?.retryFired() }
    }

    /// A 401/403/404 that no 2xx of its flight contradicted: counted; below
    /// ``DeliveryPolicy/maxConsecutiveCredentialRefusals`` in a row it is retried with the backoff
    /// (the refused profiles' batches move to the end, so the retry's first half is other
    /// visitors' events); at the limit delivery is disabled and everything queued is discarded.
    private func refusedCredential(
        _ refusal: InsightsFlight.Refusal, suspects: [InsightsFlight.Refusal], state: inout State, pending: inout Pending
    ) {
        state.credentialRefusals += 1
        let limit = policy.maxConsecutiveCredentialRefusals
        guard state.credentialRefusals >= limit else {
            for suspect in suspects {
                for key in suspect.batches.compactMap(\.events.first?.event.profileId) {
                    if let bucket = state.core.events.buckets.removeValue(forKey: key) { state.core.events.buckets[key] = bucket }
                }
            }
            let reason = "\(refusal.reason) (\(state.credentialRefusals) of \(limit) in a row before Insights delivery is disabled)"
            recordFailure(
                status: refusal.status, reason: reason, retryAfter: nil, credentialRefusals: state.credentialRefusals, state: &state,
                pending: &pending)
            return
        }
        let text = "Insights API delivery disabled: \(refusal.reason), \(limit) time(s) in a row (check clientId, environment and "
            + "the Insights base URL). No further Insights requests are made by this queue."
        state.core.disable(status: refusal.status, text: text, report: &pending.report)
    }

    /// Removes exactly these events where they are still queued (erasure may have taken some).
    private func removeSent(_ batches: [Bucket], from state: inout State) -> [Queued] {
        state.core.sentOut(state.core.events.remove(batches))
    }

    /// Arms the periodic flush while events are queued and delivery goes on; stops it otherwise.
    func reconcileTimer(_ state: inout State) {
        if state.core.closed || state.core.disabled || state.core.events.sendable == 0 {
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
        state.withLock { $0.core.retry.retryFired() }
        startFlush()
    }
}
