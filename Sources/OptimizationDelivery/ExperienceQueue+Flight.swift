import HostPlatform
import OptimizationJSON
import OrderedCollections

/// Flights: the upsert, its answer, and what the answer means for the waiting senders. The flight
/// in progress, backoff, the circuit and disabling are ``DeliveryQueueCore``'s.
extension ExperienceQueue {
    /// Sends what is queued and returns when it went out or cannot go now: awaits a flight in
    /// progress, then sends what was accepted meanwhile, round after round while rounds make
    /// progress. Sends nothing while a backoff wait runs or the circuit is open, offline, after
    /// delivery was disabled, or after ``close()``. Failures are reported as queue events, never
    /// thrown.
    package func flush() async {
        await runFlights(begin: { beginFlush() }, remaining: { count }, sent: { state.withLock { $0.sent } })
    }

    /// Starts a flight unless one is in progress or it may not send now.
    func startFlush() {
        _ = beginFlush()
    }

    /// The flight to await: the one in progress (`started` false) or a new one (`started` true);
    /// nil when nothing may be sent now (then every waiting sender is released). A new flight's
    /// request is built here, on the caller's thread, outside the lock.
    func beginFlush(despiteOffline: Bool = false) -> (task: Task<Void, Never>, started: Bool)? {
        let now = clock.now()
        enum Decision {
            case running(Task<Void, Never>)
            case started(Task<Void, Never>, Snapshot, AsyncStream<FetchRequest?>.Continuation)
            case none(released: [UInt64])
        }
        let decision = state.withLock { state -> Decision in
            switch state.gate(now: now, despiteOffline: despiteOffline, hasEvents: state.events.count > 0) {
            case .inProgress(let active): return .running(active)
            case .shut: return .none(released: releaseWaiting(&state))
            case .open: break
            }
            let snapshot = Snapshot(events: state.events.items, generation: state.generation)
            let (requests, handOver) = AsyncStream.makeStream(of: FetchRequest?.self, bufferingPolicy: .bufferingOldest(1))
            let task = Task { [self] in
                var request: FetchRequest?
                for await built in requests {
                    request = built
                    break
                }
                await self.send(snapshot, request: request)
            }
            state.launch(task, carrying: Set(snapshot.events.map(\.id)))
            return .started(task, snapshot, handOver)
        }
        switch decision {
        case .running(let task):
            return (task, false)
        case .none(let released):
            if !released.isEmpty { handler.withLock { $0 }?.released(tickets: released) }
            return nil
        case .started(let task, let snapshot, let handOver):
            handOver.yield(buildRequest(snapshot))
            handOver.finish()
            return (task, true)
        }
    }

    /// The handler's request for a flight; nil (logged) when it could not build one.
    private func buildRequest(_ snapshot: Snapshot) -> FetchRequest? {
        guard let handler = handler.withLock({ $0 }) else { return nil }
        do {
            return try handler.request(carrying: snapshot.events.map(\.eventJSON))
        } catch {
            logger.error("the Experience request could not be built; the events stay queued", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// One flight: the request, then what its answer means for the queue and its senders.
    private func send(_ snapshot: Snapshot, request: FetchRequest?) async {
        var response: FetchResponse?
        var failure: String?
        var timedOut = false
        let outcome: DeliveryOutcome
        if let request {
            do {
                let answer = try await transport.send(request)
                response = answer
                outcome = DeliveryOutcome(response: answer, api: "Experience", now: clock.now())
            } catch {
                failure = String(describing: error)
                timedOut = (error as? any FetchTimeoutReporting)?.isTimeout == true
                outcome = DeliveryOutcome(transportError: error, api: "Experience")
            }
        } else {
            failure = "the request could not be built"
            outcome = .retry(status: 0, reason: "Experience API request could not be built", retryAfterMilliseconds: nil)
        }
        var pending = Pending()
        let sentIds = Set(snapshot.events.map(\.id))
        let answer = state.withLock { state -> ExperienceFlightAnswer in
            // The flight stays `active` (finishing) until its answer has been reported below:
            // a flush arriving meanwhile awaits it instead of finding nothing in progress.
            guard state.answered(generation: snapshot.generation) else {
                // Purged meanwhile: its senders were released by the purge; events accepted since
                // go out with the next flight.
                return ExperienceFlightAnswer(disposition: .stale, tickets: [], status: outcome.status, reason: "",
                                              response: response, failure: failure, timedOut: timedOut)
            }
            // The flight settles its own senders (found by id: the queue may have changed meanwhile).
            var tickets: [UInt64] = []
            for index in state.events.items.indices
            where state.events.items[index].awaited && sentIds.contains(state.events.items[index].id) {
                tickets.append(state.events.items[index].id)
                state.events.items[index].awaited = false
            }
            return handle(
                outcome, of: snapshot, tickets: tickets, response: response, failure: failure, timedOut: timedOut, state: &state,
                pending: &pending)
        }
        // The flight's own senders first, then acknowledgements, reports and the other senders.
        handler.withLock { $0 }?.answered(answer)
        deliver(pending)
        finish(continuing: answer.disposition == .delivered || answer.disposition == .dropped || answer.disposition == .stale)
    }

    /// Ends the finishing flight, its answer reported: the next flight follows at once when this
    /// one moved events out (`continuing`) or a flush was asked for meanwhile, and may start now;
    /// otherwise every waiting sender is released first (outside the lock, round after round:
    /// senders may arrive while the handler is told), and only then is the flight over.
    private func finish(continuing: Bool) {
        while true {
            let now = clock.now()
            let (followUp, released) = state.withLock { state -> (Bool, [UInt64]) in
                let followUp = (continuing || state.flushRequested) && state.events.count > 0 && state.mayFlush(now: now)
                if !followUp {
                    let released = releaseWaiting(&state)
                    if !released.isEmpty { return (false, released) }
                }
                _ = state.end()
                return (followUp, [])
            }
            if !released.isEmpty {
                handler.withLock { $0 }?.released(tickets: released)
                continue
            }
            if followUp { startFlush() }
            return
        }
    }

    private func handle(
        _ outcome: DeliveryOutcome, of snapshot: Snapshot, tickets: [UInt64], response: FetchResponse?, failure: String?, timedOut: Bool,
        state: inout State, pending: inout Pending
    ) -> ExperienceFlightAnswer {
        switch outcome {
        case .delivered(let status):
            pending.report.removals.append((removeSent(snapshot, from: &state), .delivered))
            state.recordSuccess(report: &pending.report)
            return ExperienceFlightAnswer(disposition: .delivered, tickets: tickets, status: status, reason: "", response: response, failure: nil)
        case .drop(let status, let reason):
            let dropped = removeSent(snapshot, from: &state)
            let text = "\(reason); the batch of \(dropped.count) event(s) was dropped (the API refuses it)."
            logger.warning("\(text)")
            pending.report.removals.append((dropped, .dropped))
            pending.report.report(state.queueEvent(.batchDropped, [
                "status": .number(JSONNumber(status)), "reason": .string(text), "droppedCount": .number(JSONNumber(dropped.count)),
                "droppedEvents": .array([]),
            ]), listing: dropped)
            state.recordSuccess(report: &pending.report)
            return ExperienceFlightAnswer(disposition: .dropped, tickets: tickets, status: status, reason: text, response: response, failure: nil)
        case .disable(let status, let reason):
            let text = "Experience API delivery disabled: \(reason) (check clientId, environment and the Experience base URL). "
                + "No further Experience requests are made by this client instance."
            // Every waiting sender learns of the refusal, not only this flight's.
            let waiting = tickets + releaseWaiting(&state)
            state.disable(status: status, text: text, report: &pending.report)
            return ExperienceFlightAnswer(disposition: .disabled, tickets: waiting, status: status, reason: text, response: response, failure: nil)
        case .retry(let status, let reason, let retryAfter):
            let queued = state.events.count
            state.recordFailure(
                reason: reason, retryAfter: retryAfter, queuedBatches: queued > 0 ? 1 : 0, queuedEvents: queued, random: random,
                report: &pending.report
            ) { [weak self] in self?.retryFired() }
            return ExperienceFlightAnswer(
                disposition: .retrying, tickets: tickets, status: status, reason: reason, response: response, failure: failure, timedOut: timedOut)
        }
    }

    /// Removes exactly the sent events that are still queued (a removal may have taken some).
    private func removeSent(_ snapshot: Snapshot, from state: inout State) -> [Queued] {
        let sent = Set(snapshot.events.map(\.id))
        return state.sentOut(state.events.removeAll { sent.contains($0.id) })
    }

    private func retryFired() {
        state.withLock { $0.retry.retryFired() }
        startFlush()
    }
}
