import Foundation
import InMemoryTracing
import JavaScriptHost
import Logging
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import ServiceLifecycle
import Testing
import Tracing

/// Lifecycle under swift-service-lifecycle, metrics, tracing, and
/// request-scoped logging.
@Suite("OptimizationService in a Swift service: lifecycle, metrics, tracing, logging")
struct ServiceObservabilityTests {
    @Test func gracefulShutdownOfTheServiceGroupFlushesEverythingAcceptedBeforeIt() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = makeService(server)
            let group = ServiceGroup(services: [service], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            let running = Task { try await group.run() }
            try await eventually("service running") { service.isRunning }
            for index in 0..<40 {
                let request = service.forRequest(RequestOptions(consent: true, profileId: "visitor-\(index % 4)"))
                #expect(try await request.trackClick(TrackClickPayload(componentId: "c\(index)")).accepted)
            }
            #expect(service.queuedEventCount == 40 - server.insightsEvents.count)
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(server.insightsEvents.count == 40, "nothing accepted before the signal is lost")
            #expect(!service.isRunning)
            await #expect(throws: OptimizationError.shutDown) {
                try await service.forRequest(RequestOptions(consent: true, profileId: "late")).trackClick(TrackClickPayload(componentId: "c"))
            }
        }
    }

    @Test func metricsCoverResolvesEventsExperienceCallsBatchesQueueAndCircuits() async throws {
        let metrics = TestMetrics()
        let clock = ManualClock()
        try await LocalOptimizationAPIServer.withRunning { server in
            let policy = QueuePolicy(flush: QueueFlushPolicy(baseBackoff: .milliseconds(1000), maxBackoff: .milliseconds(1000), jitterRatio: 0, maxConsecutiveFailures: 1, circuitOpenDuration: .milliseconds(5000)))
            try await withService(server, clock: clock, queuePolicy: policy, experienceTimeout: .milliseconds(200), metrics: metrics) { service in
                let identified = try SelectedOptimizations(json: VisitorData.identified["experiences"]!)
                _ = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: identified)
                _ = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: .empty)
                #expect(metrics.counterTotal(label: "optimization_resolves_total", dimensions: [("outcome", "variant")]) == 1)
                #expect(metrics.counterTotal(label: "optimization_resolves_total", dimensions: [("outcome", "baseline")]) == 1)
                #expect(try metrics.expectTimer("optimization_resolve_duration").values.count == 2)

                let request = service.forRequest(RequestOptions(profileId: "p-1"))
                try await request.page()
                try await request.track(event: "blocked")
                #expect(metrics.counterTotal(label: "optimization_events_total", dimensions: [("method", "page"), ("result", "accepted")]) == 1)
                #expect(metrics.counterTotal(label: "optimization_events_total", dimensions: [("method", "track"), ("result", "blocked")]) == 1)
                #expect(metrics.counterTotal(label: "optimization_experience_requests_total", dimensions: [("outcome", "success")]) == 1)
                #expect(try metrics.expectTimer("optimization_experience_request_duration").values.count == 1)

                // A timed-out call opens the Experience circuit (one failure allowed); the next fails fast.
                server.enqueue(.delay(.milliseconds(20_000)), for: .experience)
                let slow = Task { try await service.forRequest(RequestOptions(consent: true)).page() }
                try await server.waitForRequests(count: 2, matching: .experience)
                clock.advance(by: .milliseconds(200))
                _ = try await slow.value
                _ = try await service.forRequest(RequestOptions(consent: true)).page()
                #expect(metrics.counterTotal(label: "optimization_experience_requests_total", dimensions: [("outcome", "timeout")]) == 1)
                #expect(metrics.counterTotal(label: "optimization_experience_requests_total", dimensions: [("outcome", "circuit_open")]) == 1)
                #expect(try metrics.expectGauge("optimization_circuit_open", [("api", "experience")]).lastValue == 1)

                // Insights: one retried batch (503), its retry sent, then a dropped one (400).
                let consented = service.forRequest(RequestOptions(consent: true, profileId: "p-2"))
                try await consented.trackClick(TrackClickPayload(componentId: "c"))
                #expect(try metrics.expectGauge("optimization_insights_queue_depth").lastValue == 1)
                server.enqueue(.status(503), for: .insights)
                await service.flush()
                #expect(metrics.counterTotal(label: "optimization_insights_batches_total", dimensions: [("result", "retried")]) == 1)
                #expect(try metrics.expectGauge("optimization_circuit_open", [("api", "insights")]).lastValue == 1)
                await service.flush()
                #expect(metrics.counterTotal(label: "optimization_insights_batches_total", dimensions: [("result", "sent")]) == 0,
                        "nothing leaves while the circuit is open, even when asked")
                clock.advance(by: .milliseconds(5000))  // the circuit's window has passed: the retry goes out
                await service.flush()
                #expect(metrics.counterTotal(label: "optimization_insights_batches_total", dimensions: [("result", "sent")]) == 1)
                #expect(try metrics.expectGauge("optimization_circuit_open", [("api", "insights")]).lastValue == 0)
                try await consented.trackClick(TrackClickPayload(componentId: "c"))
                server.enqueue(.status(400), for: .insights)
                await service.flush()
                #expect(metrics.counterTotal(label: "optimization_insights_batches_total", dimensions: [("result", "dropped")]) == 1)
                #expect(try metrics.expectGauge("optimization_engine_pool_busy").lastValue == 0)
            }
        }
    }

    @Test func experienceAndInsightsRequestsAreSpansUnderTheCallersContext() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let request = service.forRequest(RequestOptions(consent: true))
                let parent = try await tracer.withSpan("GET /page") { span -> String in
                    try await request.page()
                    try await request.trackClick(TrackClickPayload(componentId: "hero"))
                    await service.flush()
                    return span.context.inMemorySpanContext?.spanID ?? "?"
                }
                server.enqueue(.status(500), for: .experience)
                _ = try await service.forRequest(RequestOptions(consent: true)).page()
                let spans = tracer.finishedSpans
                let experience = spans.filter { $0.operationName == "Experience API request" }
                let insights = spans.filter { $0.operationName == "Insights API request" }
                let calls = spans.filter { $0.operationName == "optimization.request" }
                #expect(experience.count == 2 && insights.count == 1 && calls.count == 3)
                #expect(calls.first?.parentSpanID == parent, "the request's call is a child of the caller's span")
                #expect(experience.first?.parentSpanID == calls.first?.spanID, "the Experience request is a child of its call's span")
                #expect(insights.first?.parentSpanID == parent, "flush() called inside the span")
                #expect(experience.first?.kind == .client)
                #expect(experience.first?.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
                #expect(experience.first?.attributes["optimization.outcome"]?.toSpanAttribute() == "success")
                #expect(insights.first?.attributes["http.response.status_code"]?.toSpanAttribute() == 204)
                #expect(experience.last?.attributes["http.response.status_code"]?.toSpanAttribute() == 500)
                #expect(experience.last?.attributes["optimization.outcome"]?.toSpanAttribute() == "retry")
                #expect(experience.last?.status?.code == .error)
                #expect(calls.last?.parentSpanID == nil, "no caller span: the call's span is a root span")
                #expect(experience.last?.parentSpanID == calls.last?.spanID)
            }
        }
    }

    @Test func everyLineLoggedForARequestCarriesItsRequestIdAndNoVisitorDataAboveDebug() async throws {
        let recorder = LogRecorder()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, logger: recorder.logger) { service in
                server.enqueue(.status(500), for: .experience)
                let request = service.forRequest(RequestOptions(profileId: "secret-profile", requestId: "req-42"))
                _ = try await request.page()
                _ = try await request.track(event: "Bought", properties: ["card": "4111-secret"])
            }
        }
        let lines = recorder.all.filter { $0.metadata["request-id"] != nil }
        #expect(lines.count >= 2, "the failed call and the blocked call are logged")
        #expect(lines.allSatisfy { $0.metadata["request-id"] == "req-42" })
        for record in recorder.all where record.level > .debug {
            let text = record.message + " " + record.metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            #expect(!text.contains("secret"), "visitor data above debug: \(text)")
        }
        #expect(recorder.all.contains { $0.level == .debug && "\($0.metadata)".contains("4111-secret") }, "the payload is available at debug")
    }
}
