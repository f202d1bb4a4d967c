import HostPlatform
import OptimizationContent
import OptimizationDelivery
import OptimizationEngine
import OptimizationJSON
import OptimizationServiceDelivery
import OptimizationVocabulary
import OrderedCollections
import Tracing

extension OptimizationRequest {
    // MARK: Calls of one method together

    /// Reports the views of a rendered page together: one crossing into the engine for all of
    /// them, where each view alone makes its own (the request's scope and its event builder are
    /// made once, and the events go to the Insights queue in one hand-over).
    ///
    /// Each result is what ``trackView(_:)`` would have returned or thrown for that view, in the
    /// order of `views`: a view is accepted, blocked by consent or fails on its own (an invalid
    /// payload, no profile id on the request), and a sticky view goes to the Experience API
    /// alone, as ``trackView(_:)`` sends it, after the others. A failure of the whole call (the service shut down)
    /// is every view's.
    /// - Parameter views: the views, at most one per rendered entry; none: no call.
    /// - Returns: one result per view, in order.
    public func trackViews(_ views: [TrackViewPayload]) async -> [Result<EventResult, OptimizationError>] {
        await record(.trackView, payloads: views.map { $0.jsonValue.objectValue ?? [:] })
    }

    /// Sends several calls of one event method together: the calls that go to Insights
    /// (`trackView` that is not sticky, `trackClick`, `trackHover`, `trackFlagView`, the node
    /// events) in one crossing into the engine (one per 64 calls), then the others one by one,
    /// as ``record(_:payload:)`` sends them.
    ///
    /// Each result is what ``record(_:payload:)`` would have returned or thrown for that
    /// payload, in the order of `payloads`. One `optimization.request` span covers the calls of
    /// a crossing.
    /// - Parameters:
    ///   - method: the calls' method.
    ///   - payloads: their arguments, as the shared core reads them.
    /// - Returns: one result per payload, in order.
    public func record(_ method: EventMethod, payloads: [OrderedDictionary<String, JSONValue>]) async -> [Result<EventResult, OptimizationError>] {
        guard !payloads.isEmpty else { return [] }
        let routing = service.experienceRouting.withLock { $0 }
        var results = [Result<EventResult, OptimizationError>?](repeating: nil, count: payloads.count)
        var together: [Int] = []
        for (index, payload) in payloads.enumerated() {
            if routing.route(method.rawValue, payload: payload) == .insights { together.append(index) }
        }
        // At most `callsPerCrossing` in one crossing, so that no request holds an engine long.
        for start in stride(from: 0, to: together.count, by: Self.callsPerCrossing) {
            let crossing = Array(together[start..<min(start + Self.callsPerCrossing, together.count)])
            guard crossing.count > 1 else {
                results[crossing[0]] = await recordAlone(method, payloads[crossing[0]])
                continue
            }
            let answers: [Result<EventResult, OptimizationError>]
            do {
                answers = try await traced(method.rawValue, outcome: Self.sharedOutcome) { span throws(OptimizationError) in
                    span?.attributes[OptimizationTelemetry.Attribute.callCount] = crossing.count
                    return try await callEach(method, crossing.map { payloads[$0] }, span: span)
                }
            } catch {
                answers = Array(repeating: .failure(error), count: crossing.count)
            }
            for (index, answer) in zip(crossing, answers) { results[index] = answer }
        }
        // The calls that go to the Experience API, one by one, in order.
        for index in payloads.indices where results[index] == nil {
            results[index] = await recordAlone(method, payloads[index])
        }
        return results.map { $0! }
    }

    /// The most calls that go into the engine in one crossing (more go in several): an engine
    /// builds a view in about 12 µs, so a crossing holds it for about a millisecond at most.
    static let callsPerCrossing = 64

    /// ``record(_:payload:)``, its error as a result.
    private func recordAlone(_ method: EventMethod, _ payload: OrderedDictionary<String, JSONValue>) async -> Result<EventResult, OptimizationError> {
        do throws(OptimizationError) {
            return .success(try await record(method, payload: payload))
        } catch {
            return .failure(error)
        }
    }

    /// The span outcome of calls that went together: theirs when every one returned the same
    /// outcome, else `mixed` (some differ or failed).
    private static func sharedOutcome(_ results: [Result<EventResult, OptimizationError>]) -> String {
        var shared: String?
        for result in results {
            guard case .success(let event) = result, shared == nil || shared == event.outcome.telemetryName else { return "mixed" }
            shared = event.outcome.telemetryName
        }
        return shared ?? "mixed"
    }

    /// `__service.callEach`: `payloads` (each one that goes to Insights) in one crossing; an
    /// answer per payload, in order. Every accepted event is handed on at once.
    /// - Throws: what fails every call: the service not running, an engine failure, a batch
    ///   the engine refused.
    private func callEach(
        _ event: EventMethod, _ payloads: [OrderedDictionary<String, JSONValue>], span: (any Span)?
    ) async throws(OptimizationError) -> [Result<EventResult, OptimizationError>] {
        let running = try service.requireRunning()
        let method = event.rawValue
        let payloadsText: String
        do {
            payloadsText = try JSONValue.array(payloads.map(JSONValue.object)).jsonText()
        } catch {
            throw .bridgeError("\(method) payloads cannot be serialized: \(error)")
        }
        // Insights calls never wait for a profile, so an exchange always answers.
        guard let exchange = try await exchange(
            BridgeContract.Service.callEach, [.string(method), .json(payloadsText)], method: method, callsExperience: false,
            running: running, span: span)
        else {
            return Array(repeating: .success(EventResult(outcome: .timedOut(after: budget))), count: payloads.count)
        }
        guard let answers = exchange.answer["answers"]?.elements, answers.count == payloads.count else {
            throw .bridgeError("\(method): the shared core answered a batch of \(payloads.count) calls without an answer for each")
        }
        let events = exchange.answer["events"]
        var results: [Result<EventResult, OptimizationError>] = []
        results.reserveCapacity(answers.count)
        var insights: [InsightsEvent] = []
        for answer in answers {
            if let failed = answer["failed"] {
                // The one code a service call fails with (experienceEventNotStored is the client's).
                let code = failed["code"]?.stringValue.flatMap(BridgeFailureCode.init(rawValue:))
                results.append(.failure(code == .profileIdRequired
                    ? .profileIdRequired(method: method)
                    : .bridgeError(failed["message"]?.stringValue ?? "\(method) failed")))
            } else if answer["accepted"]?.boolValue == true {
                service.metrics.event(method, accepted: true)
                let items = answer["insights"]?.elements ?? []
                do throws(OptimizationError) {
                    insights += try insightsEvents(items, events: events)
                    let index = items.first?["event"]?.value.intValue
                    results.append(.success(EventResult(outcome: .accepted, eventIn: index.flatMap { events?[$0] })))
                } catch {
                    results.append(.failure(error))
                }
            } else {
                report(blocked: answer["blocked"]?.value, method: method)
                service.metrics.event(method, accepted: false)
                results.append(.success(EventResult(outcome: .blocked(.consent))))
            }
        }
        try await hand(insights, running: running)
        return results
    }
}
