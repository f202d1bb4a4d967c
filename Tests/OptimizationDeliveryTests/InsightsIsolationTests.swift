import JavaScriptHost
import OptimizationDelivery
import OptimizationJSON
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// One visitor's events cannot take other visitors' events down with them (issue 46, F7): requests
/// are bounded in bytes, a refused request of several visitors is bisected, and one 401/403/404
/// does not disable Insights for the process. Time is a `ManualClock`; refusals come from the
/// local API server (scripted by a marker in the refused visitor's event) or a scripted transport.
@Suite("Insights queue: one visitor cannot hurt another's events", .hangBound)
struct InsightsIsolationTests {
    /// Runs `body` with an Insights queue delivering to the test kit's API server over HTTP, on a
    /// manual clock, and the queue's reports.
    private func withQueueOfLocalServer(_ body: (LocalOptimizationAPIServer, InsightsQueue, Reports) async throws -> Void) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let reports = Reports()
                let queue = makeQueue(
                    transport: transport, clock: ManualClock(), reports: reports,
                    url: server.insightsBaseURL + "v1/organizations/org/environments/main/events")
                try await body(server, queue, reports)
            }
        }
    }

    @Test func a413ForOneVisitorsEventLosesNoOtherVisitorsEvents() async throws {
        try await withQueueOfLocalServer { server, queue, reports in
            try queue.enqueue(events(2, profile: "victim-a") + events(1, profile: "attacker") + events(2, profile: "victim-b"))
            // Every request that carries the attacker's event is refused: the whole batch, the
            // half holding it, and its own request.
            server.enqueue(.status(413), .status(413), .status(413), for: .bodyContains("attacker-e0"))
            await queue.flush()

            #expect(server.pendingScriptedResponseCount == 0, "the three requests carrying the refused event were sent")
            #expect(server.requests(matching: .insights).count == 5, "the batch, its halves, the refused half's halves")
            #expect(queue.count == 0 && !queue.isDisabled)
            let delivered = reports.removed.filter { $0.reason == .delivered }.flatMap(\.ids)
            #expect(delivered.sorted() == ["victim-a-e0", "victim-a-e1", "victim-b-e0", "victim-b-e1"])
            #expect(reports.removed.filter { $0.reason == .dropped }.flatMap(\.ids) == ["attacker-e0"])
            let dropped = try #require(reports.queueEvents.first { $0.type == .batchDropped })
            #expect(dropped.context["status"] == 413 && dropped.context["droppedCount"] == 1)
            #expect(reports.types == [.batchDropped], "one report: the refused visitor's batch")
            // What the server accepted: both victims' events, nothing of the attacker's.
            let accepted = server.requests(matching: .insights).filter { !$0.body.contains("attacker-e0") }.flatMap(\.deliveredEvents)
            #expect(accepted.compactMap { $0["messageId"]?.stringValue }.sorted() == delivered.sorted())
        }
    }

    @Test func aWAFRefusingOneVisitorWith403DropsOnlyThatVisitorsEventsAndDeliveryGoesOn() async throws {
        try await withQueueOfLocalServer { server, queue, reports in
            try queue.enqueue(events(1, profile: "attacker") + events(2, profile: "victim"))
            server.enqueue(.status(403), .status(403), for: .bodyContains("attacker-e0"))
            await queue.flush()

            #expect(server.pendingScriptedResponseCount == 0)
            #expect(!queue.isDisabled && queue.count == 0 && queue.consecutiveCredentialRefusals == 0)
            #expect(reports.removed.filter { $0.reason == .delivered }.flatMap(\.ids) == ["victim-e0", "victim-e1"])
            #expect(reports.removed.filter { $0.reason == .dropped }.flatMap(\.ids) == ["attacker-e0"])
            #expect(reports.types == [.batchDropped])
            #expect(reports.queueEvents.first?.context["status"] == 403)
            try queue.enqueue(events(1, profile: "victim", from: 2))
            await queue.flush()
            #expect(reports.removed.last?.ids == ["victim-e2"] && reports.removed.last?.reason == .delivered, "delivery goes on")
        }
    }

    @Test func aSingle403OnATwoVisitorBatchDoesNotDisableInsights() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: ManualClock(), reports: reports)
        transport.script(.status(403))
        try queue.enqueue(events(2, profile: "a") + events(2, profile: "b"))
        await queue.flush()
        #expect(!queue.isDisabled)
        #expect(queue.count == 0, "both visitors' events were delivered by the halves")
        #expect(transport.requests.map(messageIds) == [["a-e0", "a-e1", "b-e0", "b-e1"], ["a-e0", "a-e1"], ["b-e0", "b-e1"]])
        #expect(reports.removed.allSatisfy { $0.reason == .delivered })
        #expect(!reports.types.contains(.deliveryDisabled) && !reports.types.contains(.batchDropped))
        #expect(queue.consecutiveCredentialRefusals == 0)
    }

    @Test func aCredentialRefusedAgainAndAgainDisablesDeliveryOnlyAtTheLimitWithBackoffBetween() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: clock, reports: reports)
        transport.script(.status(401), .status(401), .status(401), .status(401), .status(401), .status(401), .status(401), .status(401), .status(401))
        try queue.enqueue(events(1, profile: "a") + events(1, profile: "b"))
        await queue.flush()
        // The batch, then each visitor's half: two refused halves and no 2xx is the credential.
        #expect(transport.requests.count == 3)
        #expect(!queue.isDisabled && queue.count == 2 && queue.consecutiveCredentialRefusals == 1)
        let first = try #require(reports.queueEvents.first)
        #expect(first.type == .flushFailure && first.context["status"] == 401 && first.context["credentialRefusals"] == 1)
        #expect(first.context["retryDelayMs"] == 500)
        await queue.flush()
        #expect(transport.requests.count == 3, "nothing leaves during the backoff")
        clock.advance(by: .milliseconds(500))
        await transport.waitForRequests(4)
        await queue.flush()
        #expect(transport.requests.count == 6 && queue.consecutiveCredentialRefusals == 2 && !queue.isDisabled)
        clock.advance(by: .milliseconds(1_000))
        await transport.waitForRequests(7)
        await queue.flush()
        #expect(queue.isDisabled && queue.count == 0)
        #expect(reports.types == [.flushFailure, .flushFailure, .deliveryDisabled])
        #expect(reports.queueEvents.last?.context["droppedCount"] == 2)
        #expect(reports.removed.map(\.reason) == [.disabled])
    }

    @Test func aTwoXXBetweenRefusalsStartsTheCountAgain() async throws {
        let transport = ScriptedTransport()
        let clock = ManualClock()
        let reports = Reports()
        let queue = makeQueue(transport: transport, clock: clock, reports: reports)
        transport.script(.status(403), .status(403), .status(200), .status(403))
        try queue.enqueue(events(1, profile: "a"))
        await queue.flush()
        #expect(queue.consecutiveCredentialRefusals == 1)
        clock.advance(by: .milliseconds(500))
        await transport.waitForRequests(2)
        await queue.flush()
        #expect(queue.consecutiveCredentialRefusals == 2)
        clock.advance(by: .milliseconds(1_000))
        await transport.waitForRequests(3)
        await queue.flush()
        #expect(queue.consecutiveCredentialRefusals == 0 && queue.count == 0, "the 2xx delivered and reset the count")
        try queue.enqueue(events(1, profile: "a", from: 1))
        await queue.flush()
        #expect(queue.consecutiveCredentialRefusals == 1 && !queue.isDisabled)
        #expect(reports.types == [.flushFailure, .flushFailure, .flushRecovered, .flushFailure])
    }

    @Test func requestsStayWithinTheByteBoundAndAnEventTooLargeForOneIsDroppedUnsent() async throws {
        let transport = ScriptedTransport()
        let reports = Reports()
        let bound = 1_024
        let queue = makeQueue(transport: transport, clock: ManualClock(), policy: .with { $0.insightsMaxRequestBytes = bound }, reports: reports)
        let padding = String(repeating: "x", count: 300)
        var accepted: [InsightsEvent] = []
        for profile in ["p", "q", "r"] {
            for index in 0..<4 {
                let id = "\(profile)-e\(index)"
                accepted.append(InsightsEvent(
                    profileId: profile, profileJSON: #"{"id":"\#(profile)"}"#, messageId: id, consent: true,
                    eventJSON: #"{"type":"component","messageId":"\#(id)","pad":"\#(padding)"}"#))
            }
        }
        let huge = InsightsEvent(
            profileId: "q", profileJSON: #"{"id":"q"}"#, messageId: "q-huge", consent: true,
            eventJSON: #"{"type":"component","messageId":"q-huge","pad":"\#(String(repeating: "y", count: 2_000))"}"#)
        accepted.insert(huge, at: 5)
        try queue.enqueue(accepted)
        await queue.flush()

        #expect(transport.requests.count > 1)
        for request in transport.requests {
            #expect((request.body?.utf8.count ?? 0) <= bound)
            #expect((try? JSONValue(jsonText: request.body ?? "")) != nil, "each request is a whole JSON body")
        }
        let sent = transport.requests.flatMap(messageIds)
        #expect(sent == accepted.map(\.messageId).filter { $0 != "q-huge" }, "every other event once, in order")
        #expect(queue.count == 0)
        #expect(reports.removed.filter { $0.reason == .dropped }.flatMap(\.ids) == ["q-huge"])
        let dropped = try #require(reports.queueEvents.first { $0.type == .batchDropped })
        #expect(dropped.context["status"] == 413 && dropped.context["droppedCount"] == 1)
        #expect(dropped.context["droppedEvents"]?[0]?["messageId"] == "q-huge")
    }
}
