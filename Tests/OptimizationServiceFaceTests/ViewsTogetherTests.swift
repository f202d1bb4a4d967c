import InMemoryTracing
import Optimization
import OptimizationTestSupport
import OptimizationTesting
import Testing
import Tracing
@testable import OptimizationServiceFace

/// `OptimizationRequest.trackViews(_:)`: the views of a page in one crossing into the engine,
/// each with the result `trackView(_:)` would have given it.
@Suite struct ViewsTogetherTests {
    typealias Key = OptimizationTelemetry.Attribute

    static func view(_ id: String, duration: Duration = .milliseconds(0), sticky: Bool? = nil) -> TrackViewPayload {
        TrackViewPayload(componentId: "entry-\(id)", viewId: "view-\(id)", experienceId: "experience-1", variantIndex: 1, viewDuration: duration, sticky: sticky)
    }

    @Test func eachViewGetsItsOwnResultInOrderAndTheAcceptedOnesAreQueuedOnce() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, deliveryShards: 1, tracer: tracer) { service in
                let request = service.forRequest(RequestOptions(consent: true, profileId: "alice"))
                let results = await request.trackViews([
                    Self.view("1"), Self.view("bad", duration: .milliseconds(-5)), Self.view("2"), Self.view("sticky", sticky: true), Self.view("3"),
                ])
                #expect(results.count == 5)
                #expect(try results[0].get().outcome == .accepted)
                guard case .failure(.bridgeError(let message)) = results[1] else {
                    Issue.record("an invalid view fails alone, as trackView fails it: \(results[1])")
                    return
                }
                #expect(message.contains("viewDurationMs"), "the field is named: \(message)")
                #expect(try results[2].get().outcome == .accepted)
                #expect(try results[3].get().outcome == .delivered, "a sticky view goes to the Experience API alone")
                #expect(try results[4].get().outcome == .accepted)
                #expect(try results[0].get().event?["messageId"] != results[2].get().event?["messageId"], "each view its own event")
                #expect(try results[0].get().event?["componentId"] == "entry-1")

                await service.flush()
                let batches = server.requests(matching: .insights).compactMap { $0.json?.arrayValue }.flatMap { $0 }
                let viewed = batches.flatMap { $0["events"]?.arrayValue ?? [] }.compactMap { $0["componentId"]?.stringValue }
                #expect(viewed.sorted() == ["entry-1", "entry-2", "entry-3", "entry-sticky"], "each accepted view once, the invalid one never")
                #expect(server.requests(matching: .experience).count == 1, "the sticky view's upsert only")

                // One span for the views that went together (the invalid one among them), one for
                // the sticky view.
                let spans = tracer.finishedSpans.filter { $0.operationName == OptimizationTelemetry.requestSpanName }
                #expect(spans.count == 2)
                let together = try #require(spans.first { $0.attributes[Key.callCount] != nil })
                #expect(together.attributes[Key.callCount]?.toSpanAttribute() == .int64(4))
                #expect(together.attributes[Key.outcome]?.toSpanAttribute() == .string("mixed"))
                #expect(together.attributes[Key.requestMethod]?.toSpanAttribute() == .string("trackView"))
            }
        }
    }

    @Test func consentAndTheProfileIdDecideForEachViewAsForOne() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, deliveryShards: 1) { service in
                var blocked = StreamProbe(service.blockedEvents) { service.blockedEventBroadcaster.yieldedCount }
                // No consent yet: views are not on the default allow-list.
                let undecided = service.forRequest(RequestOptions(profileId: "bob"))
                let views = [Self.view("1"), Self.view("2")]
                let gated = await undecided.trackViews(views)
                let outcomes = try gated.map { try $0.get().outcome }
                #expect(outcomes == [.blocked(.consent), .blocked(.consent)])
                let reports = await blocked.newElements()
                #expect(reports.count == 2 && reports.allSatisfy { $0.method == "trackView" }, "each blocked view reported once")
                #expect(service.queuedEventCount == 0, "nothing queued")

                let anonymous = service.forRequest(RequestOptions(consent: true))
                for result in await anonymous.trackViews(views) {
                    #expect(throws: OptimizationError.profileIdRequired(method: "trackView")) { try result.get() }
                }
                #expect(await anonymous.trackViews([]).isEmpty, "no views, no call")
                #expect(service.queuedEventCount == 0)
            }
        }
    }

    @Test func manyViewsGoInCrossingsOfAtMost64() async throws {
        let tracer = InMemoryTracer()
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, tracer: tracer) { service in
                let request = service.forRequest(RequestOptions(consent: true, profileId: "dave"))
                let results = await request.trackViews((0..<130).map { Self.view("\($0)") })
                #expect(results.count == 130)
                let accepted = results.filter { result in
                    if case .success(let event) = result { return event.outcome == .accepted }
                    return false
                }
                #expect(accepted.count == 130)
                let last = try results[129].get()
                #expect(last.event?["componentId"] == "entry-129", "in order across crossings")
                let counts = tracer.finishedSpans.filter { $0.operationName == OptimizationTelemetry.requestSpanName }
                    .map { $0.attributes[Key.callCount]?.toSpanAttribute() }
                #expect(counts.count == 3, "64 + 64 + 2")
                #expect(counts.filter { $0 == .int64(64) }.count == 2 && counts.contains(.int64(2)))
                #expect(service.queuedEventCount == 130)
            }
        }
    }

    @Test func aServiceThatStoppedFailsEveryView() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = makeService(server)
            try await service.start()
            let request = service.forRequest(RequestOptions(consent: true, profileId: "carol"))
            await service.shutdown()
            for result in await request.trackViews([Self.view("1"), Self.view("2")]) {
                #expect(throws: OptimizationError.shutDown) { try result.get() }
            }
        }
    }
}
