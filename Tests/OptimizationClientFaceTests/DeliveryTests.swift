import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import OptimizationTesting
import Synchronization
import Testing

// MARK: - Support for the delivery tests

private let hero = "entries/hero-optimized.json"

// MARK: - Delivery over HTTP

@Suite("Delivery over HTTP to the local API server")
struct DeliveryTests {
    @Test func onlineIdentifyUpsertsAndResolutionThenUsesTheCurrentSelections() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try makeDeliveryClient(
                server, defaults: StorageDefaults(consent: true, persistenceConsent: true), locale: "de_DE")
            defer { client.destroy() }
            let entry = try ContentfulEntry(jsonData: fixtureData(hero))
            #expect(client.resolveOptimizedEntry(baseline: entry).entryId == entry.id, "nothing selected yet")

            let result = try await client.identify(userId: "user-123", traits: ["plan": "pro"])
            #expect(result.accepted)
            let profileID = try #require(result.data?["profile"]?["id"]?.stringValue)
            let sent = try #require(server.requests(matching: .experience).first)
            #expect(sent.method == "POST")
            #expect(sent.path == "/experience/v2/organizations/org-1/environments/main/profiles")
            #expect(sent.queryItems == [URLQueryItem(name: "locale", value: "de-DE")])
            #expect(sent.header("content-type") == "text/plain")
            #expect(sent.json?["options"] == ["features": ["ip-enrichment", "location"]], "A3")
            #expect(sent.deliveredEvents.first?["type"] == "identify")
            #expect(sent.deliveredEvents.first?["userId"] == "user-123")

            #expect(client.state.profile?["id"]?.stringValue == profileID)
            #expect(client.state.experienceRequestState == ["status": "success"])
            #expect(client.state.canOptimize)
            // After the accepted call, resolution without explicit selections uses the new ones.
            let current = try SelectedOptimizations(try #require(client.state.selectedOptimizations?.arrayValue))
            let implicit = client.resolveOptimizedEntry(baseline: entry)
            let explicit = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: current)
            #expect(implicit.entryId != entry.id, "the identified visitor sees a variant")
            #expect(implicit.entryId == explicit.entryId)
            #expect(implicit.selectedOptimization == explicit.selectedOptimization)
            #expect(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: .empty).entryId == entry.id)

            // Continuity: the next event updates the same profile.
            try await client.track(event: "bought")
            let update = try #require(server.requests(matching: .experience).last)
            #expect(update.path == "/experience/v2/organizations/org-1/environments/main/profiles/\(profileID)")
        }
    }

    @Test func theExperienceRequestStateReportsSuccessAPIErrorAndTimeoutOverHTTP() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let ok = try makeDeliveryClient(server)
            try await ok.page()
            #expect(ok.state.experienceRequestState == ["status": "success"])
            #expect(ok.state.selectedOptimizations != nil)
            ok.destroy()

            server.enqueue(.status(500), for: .experience)
            let failing = try makeDeliveryClient(server)
            #expect(try await failing.page().accepted, "queued for retry")
            #expect(failing.state.experienceRequestState == ["status": "failed", "reason": "api-error"])
            #expect(failing.state.selectedOptimizations == nil)
            #expect(failing.queueSizes()?.experience == 1, "kept for the retry after the backoff")
            failing.destroy()

            // destroy() fires a last best-effort flush of what waits, also while offline.
            let offline = try makeDeliveryClient(server)
            offline.setOnline(false)
            #expect(try await offline.page().outcome == .accepted, "queued while offline")
            offline.destroy()
            try await server.waitForRequests(count: 3, matching: .experience)

            // The transport enforces the timeout and cancels the request.
            server.enqueue(.delay(.milliseconds(20_000)), for: .experience)
            let slow = try makeDeliveryClient(server, api: OptimizationAPIConfig(requestTimeout: .milliseconds(60)))
            defer { slow.destroy() }
            try await slow.page()
            #expect(slow.state.experienceRequestState == ["status": "failed", "reason": "timeout"])
            #expect(slow.queueSizes()?.experience == 1)
        }
    }

    @Test func enabledFeaturesPreflightAndInsightsBatchesReachTheAPIOverHTTP() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // Bases without the trailing slash join the same way.
            let client = try makeDeliveryClient(
                server, defaults: StorageDefaults(consent: true),
                api: OptimizationAPIConfig(
                    experienceBaseURL: String(server.experienceBaseURL.dropLast()), insightsBaseURL: String(server.insightsBaseURL.dropLast()),
                    enabledFeatures: ["location"], preflight: true))
            defer { client.destroy() }
            try await client.track(event: "viewed")
            let experience = try #require(server.requests(matching: .experience).first)
            #expect(experience.path == "/experience/v2/organizations/org-1/environments/main/profiles")
            #expect(experience.queryItems == [URLQueryItem(name: "type", value: "preflight")], "no locale configured")
            #expect(experience.json?["options"] == ["features": ["location"]])

            try await client.trackClick(TrackClickPayload(componentId: "c-1", experienceId: "x", variantIndex: 1))
            try await client.trackView(TrackViewPayload(componentId: "c-2", viewId: "v", variantIndex: 0, viewDuration: .milliseconds(1200)))
            #expect(server.requests(matching: .insights).isEmpty, "Insights is batched")
            try await client.flush()
            let insights = try #require(server.requests(matching: .insights).first)
            #expect(insights.method == "POST")
            #expect(insights.path == "/insights/v1/organizations/org-1/environments/main/events")
            #expect(insights.header("content-type") == "application/json")
            let batches = try #require(insights.json?.arrayValue)
            #expect(batches.count == 1)
            #expect(batches[0]["profile"]?["id"] == client.state.profile?["id"])
            #expect(batches[0]["events"]?.arrayValue?.map { $0["componentId"] } == ["c-1", "c-2"])
            #expect(client.queueSizes()! == (0, 0))
        }
    }

    @Test func insightsFlushesEveryIntervalOnTheInjectedClockAndHonoursRetryAfter() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let client = try makeDeliveryClient(
                server, clock: clock, defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]),
                queuePolicy: QueuePolicy(flush: QueueFlushPolicy(flushInterval: .milliseconds(5000), baseBackoff: .milliseconds(10), maxBackoff: .milliseconds(10), jitterRatio: 0)))
            defer { client.destroy() }
            var probe = client.queueProbe()
            server.enqueue(.retryAfter(seconds: 2, status: 429), for: .insights)
            try await client.trackClick(TrackClickPayload(componentId: "c"))
            clock.advance(by: .milliseconds(4999))
            #expect(server.requests(matching: .insights).isEmpty, "no flush before the interval")
            clock.advance(by: .milliseconds(1))
            try await server.waitForRequests(count: 1, matching: .insights)
            try await client.flush()
            let failure = try #require(await probe.newElements().first)
            #expect(failure.type == .flushFailure && failure.queue == .insights)
            #expect(failure.context["retryDelayMs"] == 2000, "Retry-After is the minimum next delay")
            #expect(failure.timestamp == clock.now())
            clock.advance(by: .milliseconds(1999))
            try await client.flush()
            #expect(server.requests(matching: .insights).count == 1)
            clock.advance(by: .milliseconds(1))
            try await server.waitForRequests(count: 2, matching: .insights)
            try await client.flush()
            #expect(client.queueSizes()! == (0, 0))
            #expect(await probe.newElements().map(\.type) == [.flushRecovered])
        }
    }

    @Test func goingOnlineEndsTheClientsInsightsBackoffAndOfflineHoldsItsRequests() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let client = try makeDeliveryClient(
                server, clock: clock, defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]),
                queuePolicy: QueuePolicy(flush: QueueFlushPolicy(baseBackoff: .seconds(60), maxBackoff: .seconds(60), jitterRatio: 0)))
            defer { client.destroy() }
            server.enqueue(.status(503), for: .insights)
            try await client.trackClick(TrackClickPayload(componentId: "c-1"))
            try await client.flush()
            #expect(server.requests(matching: .insights).count == 1, "the first request failed: a 60 s backoff wait runs")
            try await client.flush()
            #expect(server.requests(matching: .insights).count == 1, "no request during the wait")

            client.setOnline(false)
            clock.advance(by: .seconds(61))
            try await client.flush()
            #expect(server.requests(matching: .insights).count == 1, "offline: the retry and flush() send nothing")

            client.setOnline(true)
            let sent = try await server.waitForRequests(count: 2, matching: .insights)
            #expect(sent[1].json?.arrayValue?.first?["events"]?.arrayValue?.map { $0["componentId"] } == ["c-1"])
            try await client.flush()
            #expect(client.queueSizes()?.insights == 0)
        }
    }

    @Test func offline150EventsKeepTheNewest100AndGoingOnlineSendsThemInOneRequest() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let drops = Mutex(0)
            let client = try makeDeliveryClient(
                server, queuePolicy: QueuePolicy(onOfflineDrop: { event in
                    drops.withLock { $0 += event.context["droppedCount"]?.intValue ?? 0 }
                }))
            defer { client.destroy() }
            var probe = client.queueProbe()
            client.setOnline(false)
            for index in 0..<150 {
                #expect(try await client.track(event: "e\(index)").outcome == .accepted)
            }
            #expect(client.queueSizes()?.experience == 100)
            let reports = await probe.newElements()
            #expect(reports.allSatisfy { $0.type == .offlineDrop && $0.queue == .experience })
            #expect(reports.reduce(0) { $0 + ($1.context["droppedCount"]?.intValue ?? 0) } == 50)
            #expect(reports.first?.context["droppedEvents"]?[0]?["event"] == "e0")
            #expect(reports.last?.context["maxEvents"] == 100 && reports.last?.context["queuedEvents"] == 100)
            #expect(drops.withLock { $0 } == 50, "the QueuePolicy callback saw the same reports")
            #expect(server.requests.isEmpty, "nothing is sent offline")

            client.setOnline(true)
            let sent = try await server.waitForRequests(count: 1, matching: .experience)
            try await client.flush()
            #expect(server.requests(matching: .experience).count == 1, "one request")
            #expect(sent[0].deliveredEvents.map { $0["event"]?.stringValue ?? "?" } == (50..<150).map { "e\($0)" })
            #expect(client.queueSizes()?.experience == 0)
        }
    }

    @Test func setOnlineBeforeInitializeHoldsForEveryNewEngine() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
            defer { client.destroy() }
            let config = OptimizationConfig(clientId: "org-1", defaults: StorageDefaults(consent: true), api: server.apiConfig())
            client.setOnline(false)
            try client.initialize(config: config)
            #expect(try await client.track(event: "a").accepted)
            try client.initialize(config: config)   // the old engine's final flush is forced
            try await server.waitForRequests(count: 1, matching: .experience)
            #expect(try await client.track(event: "b").accepted)
            try await client.flush()
            #expect(server.requests.count == 1, "the new engine is offline too")
            client.setOnline(true)
            let sent = try await server.waitForRequests(count: 2, matching: .experience)
            #expect(sent[1].deliveredEvents.map { $0["event"] } == ["b"])
        }
    }

    @Test func unauthorizedDisablesExperienceDeliveryWithAClearError() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let logs = LogRecorder()
            let client = try makeDeliveryClient(server, logger: logs.logger)
            defer { client.destroy() }
            var probe = client.queueProbe()
            server.enqueue(.status(401, body: #"{"message":"Unauthorized"}"#), for: .experience)
            let first = try await client.track(event: "first")
            guard case .refused(status: 401, code: nil, let message) = first.outcome else {
                Issue.record("expected a refusal, got \(first.outcome)")
                return
            }
            #expect(message.hasPrefix("Experience API delivery disabled: Experience API answered 401 Unauthorized"))
            #expect(message.contains("check clientId, environment and the Experience base URL"))
            let reports = await probe.newElements()
            #expect(reports.map(\.type) == [.deliveryDisabled])
            #expect(reports.first?.queue == .experience && reports.first?.context["status"] == 401)
            #expect(logs.all.contains { $0.level == .error && $0.text.contains("Experience API delivery disabled") })
            #expect(client.state.experienceRequestState == ["status": "failed", "reason": "api-error"])

            guard case .refused(status: 401, _, _) = try await client.track(event: "second").outcome else {
                Issue.record("a later event must be refused at once")
                return
            }
            try await client.flush()
            #expect(server.requests(matching: .experience).count == 1, "no further requests")
            #expect(client.queueSizes()?.experience == 0)
        }
    }

    @Test func theCreatedTransportAllowsExactlyTheConfiguredBasesAndRefusesEverythingElse() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try makeDeliveryClient(server)
            defer { client.destroy() }
            let runtime = try #require(client.currentRuntime)
            let transport = try #require(runtime.ownedTransport, "nil transport ⇒ initialize creates one")
            #expect(transport.allowList.bases.map(\.description) == [
                "http://127.0.0.1:\(server.port)/experience/", "http://127.0.0.1:\(server.port)/insights/",
            ])
            let outside = [server.baseURL + "/contentful/spaces/s/entries", "http://127.0.0.1:\(server.port)/experience-evil/x", "https://example.com/"]
            var messages: Set<String> = []
            for url in outside {
                do {
                    _ = try await transport.send(FetchRequest(url: url, method: "POST", body: "{}"))
                    messages.insert("sent")
                } catch {
                    messages.insert("\(error)")
                }
            }
            #expect(messages == Set(outside.map { HTTPTransportError.urlNotAllowed($0).description }))
            #expect(server.requests.isEmpty)
            #expect(server.acceptedConnectionCount == 0, "no network attempt at all")

            let defaultClient = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
            try defaultClient.initialize(config: OptimizationConfig(clientId: "org-1"))
            #expect(defaultClient.currentRuntime?.ownedTransport?.allowList.bases.map(\.description) == [
                "https://experience.ninetailed.co:443/", "https://ingest.insights.ninetailed.co:443/",
            ])
            defaultClient.destroy()
            #expect(throws: OptimizationError.configError("invalid base URL: ftp://nowhere")) {
                try defaultClient.initialize(config: OptimizationConfig(
                    clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: "ftp://nowhere")))
            }
        }
    }

    @Test func destroyFiresForcedBestEffortFlushesOfBothQueues() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try makeDeliveryClient(server, defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]))
            client.setOnline(false)
            try await client.trackClick(TrackClickPayload(componentId: "c"))
            try await client.track(event: "last-words")
            #expect(server.requests.isEmpty)
            client.destroy()
            let sent = try await server.waitForRequests(count: 2)
            let mounts: Set<String> = Set(sent.map { request -> String in request.path.split(separator: "/").first.map(String.init) ?? "" })
            #expect(mounts == ["experience", "insights"])
            #expect(server.requests(matching: .experience).first?.deliveredEvents.first?["event"] == "last-words")
        }
    }

    @Test func configurationReachesTheBridgeWithoutCallbacks() throws {
        var config = OptimizationConfig(clientId: "c")
        #expect(config.bridgeConfiguration["api"] == nil)
        #expect(config.bridgeConfiguration["queuePolicy"] == nil)
        config.api = OptimizationAPIConfig(requestTimeout: .milliseconds(10))
        config.queuePolicy = QueuePolicy(onOfflineDrop: { _ in })
        #expect(config.bridgeConfiguration["api"] == nil, "only the transport reads the timeout")
        #expect(config.bridgeConfiguration["queuePolicy"] == nil, "callbacks are never serialized")
        config.api = OptimizationAPIConfig(
            experienceBaseURL: "http://h/experience", insightsBaseURL: "", enabledFeatures: ["location"], preflight: false)
        config.queuePolicy = QueuePolicy(
            flush: QueueFlushPolicy(flushInterval: .milliseconds(1000), jitterRatio: 0.5, circuitOpenDuration: .milliseconds(10)), offlineMaxEvents: 5,
            onFlushFailure: { _ in })
        #expect(config.bridgeConfiguration["api"] == [
            "experienceBaseUrl": "http://h/experience", "enabledFeatures": ["location"], "preflight": false,
        ])
        #expect(config.bridgeConfiguration["queuePolicy"] == nil, "the host's queues read the policy; the engine never does")
        let policy = DeliveryPolicy(config.queuePolicy)
        #expect(policy.experienceMaxEvents == 5 && policy.flushInterval == .seconds(1) && policy.jitterRatio == 0.5)
        #expect(policy.circuitOpenDuration == .milliseconds(10))
        #expect(QueuePolicy(offlineMaxEvents: 5, onOfflineDrop: { _ in }) == QueuePolicy(offlineMaxEvents: 5))
        #expect(config.api?.effectiveInsightsBaseURL == OptimizationAPIConfig.defaultInsightsBaseURL)
    }
}
