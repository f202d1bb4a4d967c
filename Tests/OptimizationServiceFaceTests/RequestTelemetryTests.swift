import InMemoryTracing
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceDelivery
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing
import Tracing

/// Issue 47, the library half: an `optimization.request` span per request call with its
/// Experience request as child, OpenTelemetry HTTP attributes without visitor data,
/// `feature_flag.evaluation` events and the bounded metrics (the article “Observability”).
@Suite("OptimizationRequest telemetry: spans, flag events, bounded metrics", .hangBound)
struct RequestTelemetryTests {
    typealias Key = OptimizationTelemetry.Attribute

    /// Every attribute value of every finished span and of its events, as text.
    private static func attributeTexts(_ spans: [FinishedInMemorySpan]) -> [String] {
        var texts: [String] = []
        for span in spans {
            span.attributes.forEach { key, value in texts.append(key + "=" + text(value)) }
            for event in span.events {
                texts.append(event.name)
                event.attributes.forEach { key, value in texts.append(key + "=" + text(value)) }
            }
        }
        return texts
    }

    private static func text(_ span: FinishedInMemorySpan?, _ key: String) -> String? {
        span?.attributes.get(key).map(text)
    }

    /// A string attribute as it is, a number or a boolean as its digits or `true`/`false`.
    private static func text(_ attribute: SpanAttribute) -> String {
        switch attribute {
        case .string(let text): return text
        case .int64(let number): return String(number)
        case .int32(let number): return String(number)
        case .bool(let flag): return String(flag)
        case .double(let number): return String(number)
        default: return "\(attribute)"
        }
    }

    @Test func aCallIsARequestSpanWhoseChildIsItsExperienceRequestWithTemplatedHTTPAttributes() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-profile-7"))
                let parent = try await tracer.withSpan("GET /page") { span -> String in
                    let result = try await request.page()
                    #expect(result.outcome == .delivered)
                    return span.context.inMemorySpanContext?.spanID ?? "?"
                }
                let spans = tracer.finishedSpans
                let call = try #require(spans.first { $0.operationName == OptimizationTelemetry.requestSpanName })
                let experience = try #require(spans.first { $0.operationName == OptimizationTelemetry.experienceRequestSpanName })
                #expect(call.parentSpanID == parent)
                #expect(call.kind == .internal)
                #expect(experience.parentSpanID == call.spanID, "the Experience client span is a child of the request span")
                #expect(Self.text(call, Key.requestMethod) == "page")
                #expect(Self.text(call, Key.outcome) == "delivered")
                #expect(Self.text(call, Key.budgetMilliseconds) == "1500")
                #expect(Self.text(call, Key.callsExperience) == "true")
                #expect(Self.text(call, Key.engineWaited) != nil)
                #expect(experience.kind == .client)
                #expect(Self.text(experience, Key.httpRequestMethod) == "POST")
                #expect(Self.text(experience, Key.urlTemplate)
                    == "/experience/v2/organizations/{organization}/environments/{environment}/profiles/{profileId}")
                #expect(Self.text(experience, Key.serverAddress) == "127.0.0.1")
                #expect(Self.text(experience, Key.serverPort).flatMap(Int.init) != nil)
                #expect(Self.text(experience, Key.httpResponseStatusCode) == "200")
                #expect(Self.text(experience, Key.httpRequestResendCount) == nil, "a first attempt is no resend")
            }
        }
    }

    @Test func noSpanAttributeOrEventValueCarriesVisitorData() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let changes = try #require(VisitorData.identified["changes"]?.arrayValue)
                let request = service.forRequest(RequestOptions(consent: true, profileId: "secret-profile-id", changes: changes))
                try await tracer.withSpan("POST /checkout") { _ in
                    _ = try await request.identify(userId: "secret-user-id", traits: ["email": "secret@example.com"])
                    _ = try await request.track(event: "Bought", properties: ["card": "secret-card"])
                    _ = try await request.trackClick(TrackClickPayload(componentId: "hero"))
                    _ = request.getFlag("hero-cta-color")
                    await service.flush()
                }
                let spans = tracer.finishedSpans
                #expect(spans.contains { $0.operationName == OptimizationTelemetry.experienceRequestSpanName })
                #expect(spans.contains { $0.operationName == OptimizationTelemetry.insightsRequestSpanName })
                let texts = Self.attributeTexts(spans)
                #expect(texts.contains { $0.hasPrefix(Key.urlTemplate + "=") }, "the URLs are described, as templates")
                #expect(texts.contains(OptimizationTelemetry.featureFlagEvaluationEventName))
                let profileIds = ["secret-profile-id", VisitorData.identified["profile"]?["id"]?.stringValue ?? "secret"]
                for text in texts {
                    #expect(!text.contains("secret"), "visitor data in a span: \(text)")
                    for id in profileIds { #expect(!text.contains(id), "a profile id in a span: \(text)") }
                    #expect(!text.hasPrefix(Key.featureFlagContextId), "the context id is never recorded")
                }
            }
        }
    }

    @Test func flagReadsAreEvaluationEventsOnTheCurrentSpanAndAreCountedByKeyVariantAndReason() async throws {
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, metrics: metrics, tracer: tracer) { service in
                let changes = try #require(VisitorData.identified["changes"]?.arrayValue)
                let request = service.forRequest(RequestOptions(profileId: "p-1", changes: changes))
                tracer.withSpan("GET /flags") { _ in
                    #expect(request.getFlag("hero-cta-color") == "#d73a49")
                    #expect(request.getFlag("absent-flag") == .null)
                }
                let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET /flags" })
                let events = span.events.filter { $0.name == OptimizationTelemetry.featureFlagEvaluationEventName }
                try #require(events.count == 2)
                #expect(events[0].attributes.get(Key.featureFlagKey) == "hero-cta-color")
                #expect(events[0].attributes.get(Key.featureFlagResultVariant) == "variant-1")
                #expect(events[0].attributes.get(Key.featureFlagResultReason) == "targeting_match")
                #expect(events[0].attributes.get(Key.featureFlagProviderName) == "Contentful Optimization")
                #expect(events[0].attributes.get(Key.errorType) == nil)
                #expect(events[1].attributes.get(Key.featureFlagKey) == "absent-flag")
                #expect(events[1].attributes.get(Key.featureFlagResultVariant) == nil)
                #expect(events[1].attributes.get(Key.featureFlagResultReason) == "error")
                #expect(events[1].attributes.get(Key.errorType) == "flag_not_found")
                #expect(events.allSatisfy { $0.attributes.get(Key.featureFlagContextId) == nil })
                let label = OptimizationTelemetry.Metric.flagEvaluations
                #expect(metrics.counterTotal(
                    label: label, dimensions: [("key", "hero-cta-color"), ("variant", "variant-1"), ("reason", "targeting_match")]) == 1)
                #expect(metrics.counterTotal(label: label, dimensions: [("key", "absent-flag"), ("variant", "none"), ("reason", "error")]) == 1)
            }
        }
    }

    @Test func resolutionsAreCountedByExperienceAndVariantIndexAndABaselineWithoutSelectionIsNot() async throws {
        let metrics = TestMetrics()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, metrics: metrics) { service in
                let identified = try SelectedOptimizations(json: VisitorData.identified["experiences"]!)
                let resolved = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: identified)
                _ = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: identified)
                _ = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: .empty)
                let experienceId = try #require(resolved.selectedOptimization?["experienceId"]?.stringValue)
                let index = try #require(resolved.selectedOptimization?["variantIndex"]?.intValue)
                let label = OptimizationTelemetry.Metric.variantResolutions
                #expect(metrics.counterTotal(label: label, dimensions: [("experience", experienceId), ("variant", String(index))]) == 2)
                #expect(metrics.counters.filter { $0.label == label }.count == 1, "the baseline without a selection counts nothing")
            }
        }
    }

    @Test func aLabelledMetricKeepsAtMostItsCapacityOfSeriesAndCountsTheRestAsOther() throws {
        let metrics = TestMetrics()
        let counters = BoundedCounters(label: "bounded_total", dimensionNames: ["experience", "variant"], capacity: 2, factory: metrics)
        for experience in ["a", "b", "c", "d", "a"] { counters.increment([experience, "1"]) }
        #expect(metrics.counterTotal(label: "bounded_total", dimensions: [("experience", "a"), ("variant", "1")]) == 2)
        #expect(metrics.counterTotal(label: "bounded_total", dimensions: [("experience", "b"), ("variant", "1")]) == 1)
        #expect(metrics.counterTotal(label: "bounded_total", dimensions: [("experience", "_other"), ("variant", "_other")]) == 2)
        #expect(metrics.counters.filter { $0.label == "bounded_total" }.count == 3)
    }

    @Test func aPreparedHandoffAndACommittedReplayAreEventsOfTheirCallSpans() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let prepared = try await service.forRequest(RequestOptions(consent: true)).prepareRequestHandoff(routeKey: "/home")
                let replay = try #require(prepared.handoff.replay)
                _ = try await service.forRequest(RequestOptions(consent: true)).commitReplay(replay)
                let calls = tracer.finishedSpans.filter { $0.operationName == OptimizationTelemetry.requestSpanName }
                let prepare = try #require(calls.first { Self.text($0, Key.requestMethod) == "prepareRequestHandoff" })
                let commit = try #require(calls.first { Self.text($0, Key.requestMethod) == "commitReplay" })
                let handoff = try #require(prepare.events.first { $0.name == OptimizationTelemetry.handoffPreparedEventName })
                #expect(handoff.attributes.get(Key.replayEventCount) == .int64(Int64(replay.events.count)))
                #expect(handoff.attributes.get(Key.handoffCacheScope) == "private-request")
                let committed = try #require(commit.events.first { $0.name == OptimizationTelemetry.replayCommittedEventName })
                #expect(committed.attributes.get(Key.replayEventCount) == .int64(Int64(replay.events.count)))
                #expect(committed.attributes.get(Key.outcome) == "delivered")
                #expect(Self.text(commit, Key.outcome) == "delivered")
            }
        }
    }

    @Test func anInsightsResendCarriesItsResendCountAndTheAnswersRetryAfter() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        try await LocalOptimizationAPIServer.withRunning { server in
            let policy = QueuePolicy(flush: QueueFlushPolicy(
                baseBackoff: .milliseconds(1000), maxBackoff: .milliseconds(1000), jitterRatio: 0, maxConsecutiveFailures: 1,
                circuitOpenDuration: .milliseconds(5000)))
            try await withService(server, clock: clock, queuePolicy: policy, tracer: tracer) { service in
                try await service.forRequest(RequestOptions(consent: true, profileId: "p-2")).trackClick(TrackClickPayload(componentId: "c"))
                server.enqueue(.retryAfter(seconds: 2, status: 503), for: .insights)
                await service.flush()
                clock.advance(by: .milliseconds(5000))
                await service.flush()
                let insights = tracer.finishedSpans.filter { $0.operationName == OptimizationTelemetry.insightsRequestSpanName }
                try #require(insights.count == 2)
                #expect(Self.text(insights[0], Key.httpResponseStatusCode) == "503")
                #expect(Self.text(insights[0], Key.retryAfterMilliseconds) == "2000")
                #expect(Self.text(insights[0], Key.errorType) == "503")
                #expect(Self.text(insights[0], Key.httpRequestResendCount) == nil)
                #expect(Self.text(insights[1], Key.httpRequestResendCount) == "1")
                #expect(Self.text(insights[1], Key.urlTemplate) == "/insights/v1/organizations/{organization}/environments/{environment}/events")
            }
        }
    }

    @Test func byDefaultARequestTracesNothingAndFlagsBuildNoEvaluation() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // Nil: the process-wide tracer and metrics factory, no-ops unless bootstrapped.
            try await withService(server) { service in
                #expect(!service.tracesRequests)
                #expect(!service.metrics.flagEvaluations.isRecording)
                let result = try await service.forRequest(RequestOptions(consent: true)).page()
                #expect(result.outcome == .delivered)
            }
        }
    }

    @Test(arguments: [
        ("https://experience.ninetailed.co/v2/organizations/org-1/environments/main/profiles/abc-123?locale=de&type=preflight",
         "experience.ninetailed.co", nil, "/v2/organizations/{organization}/environments/{environment}/profiles/{profileId}"),
        ("http://127.0.0.1:8080/experience/v3/spaces/space-9/environments/master/profiles", "127.0.0.1", 8080,
         "/experience/v3/spaces/{space}/environments/{environment}/profiles"),
        ("https://proxy.example/custom-mount/v1/organizations/o/environments/e/events", "proxy.example", nil,
         "/{segment}/v1/organizations/{organization}/environments/{environment}/events"),
    ] as [(String, String, Int?, String)])
    func aRequestTargetKeepsTheHostAndTemplatesEveryIdentifier(url: String, host: String, port: Int?, template: String) {
        let target = APIRequestTarget(url: url)
        #expect(target.serverAddress == host)
        #expect(target.serverPort == port)
        #expect(target.urlTemplate == template)
    }
}
