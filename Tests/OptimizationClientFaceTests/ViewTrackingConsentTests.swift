import Foundation
import JavaScriptHost
import Testing
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace

/// View tracking through a real client: every event goes through `trackView` / `trackClick`, so
/// the engine's consent gate applies unchanged (the tracker itself never checks consent).
@Suite("View tracking: consent through the client")
struct ViewTrackingConsentTests {
    private func manualClock(of client: OptimizationClient) throws -> ManualClock {
        try #require(client.environment.clock as? ManualClock)
    }

    @Test("Without consent (component not allow-listed) views are reported blocked and nothing is queued; after consent(true) the next cycle is sent")
    func blockedThenSent() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(profile: ["id": "p"]))
        defer { client.destroy() }
        let clock = try manualClock(of: client)
        var probe = EventProbe(client)
        #expect(!client.hasConsent("trackView"))

        let tracker = try ViewTrackingController(
            client: client, componentId: "baseline-1", experienceId: "exp-1", variantIndex: 1, optimizationContextId: nil)
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(2000))
        tracker.setVisible(false)

        let blocked = await probe.newBlocked()
        #expect(blocked.map(\.method) == ["trackView", "trackView"])
        #expect(blocked.allSatisfy { $0.reason == "consent" })
        #expect(blocked.first?.args.first?["componentId"] == "baseline-1")
        #expect(blocked.first?.args.first?["viewDurationMs"] == 2000)
        #expect(await probe.newEvents().isEmpty)
        #expect(client.queueSizes()! == (0, 0))

        client.consent(true)
        tracker.setVisible(true)
        let viewId = try #require(tracker.currentViewId)
        clock.advance(by: .milliseconds(2000))
        let events = await probe.newEvents()
        try #require(events.count == 1)
        #expect(events[0]["type"] == "component")
        #expect(events[0]["componentId"] == "baseline-1")
        #expect(events[0]["viewId"] == .string(viewId))
        #expect(events[0]["viewDurationMs"] == 2000)
        #expect(await probe.newBlocked().isEmpty)
        #expect(client.queueSizes()!.insights == 1)
        tracker.stop()
    }

    @Test("With component allow-listed, views pass before consent; clicks still need component_click")
    func allowListed() async throws {
        let client = try makeEventClient(allowedEventTypes: ["component"], defaults: StorageDefaults(profile: ["id": "p"]))
        defer { client.destroy() }
        let clock = try manualClock(of: client)
        var probe = EventProbe(client)
        let tracker = try ViewTrackingController(client: client, componentId: "baseline-2")
        tracker.updateVisibility(ratio: 0.8)
        clock.advance(by: .milliseconds(7000))
        tracker.updateVisibility(ratio: 0.2)
        let events = await probe.newEvents()
        #expect(events.map { $0["viewDurationMs"] } == [2000, 7000, 7000])
        #expect(Set(events.map { $0["viewId"] }).count == 1)
        tracker.trackClick()
        #expect(await probe.newBlocked().map(\.method) == ["trackClick"])
    }

    @Test("The entry-based initializer reports against the baseline with the resolved selection")
    func fromResolution() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p"]))
        defer { client.destroy() }
        let clock = try manualClock(of: client)
        var probe = EventProbe(client)
        let baseline = try ContentfulEntry(json: ["sys": ["id": "baseline-3", "type": "Entry"], "fields": [:]])
        let resolved = ResolvedOptimizedEntry(
            entry: ["sys": ["id": "variant-3"]], selectedOptimization: ["experienceId": "exp-3", "variantIndex": 1])
        let tracker = try ViewTrackingController(client: client, baseline: baseline, resolved: resolved)
        #expect(tracker.componentId == "baseline-3")
        tracker.setVisible(true)
        clock.advance(by: .milliseconds(2000))
        tracker.trackClick()
        let events = await probe.newEvents()
        #expect(events.map { $0["type"] } == ["component", "component_click"])
        #expect(events.allSatisfy { $0["componentId"] == "baseline-3" && $0["experienceId"] == "exp-3" && $0["variantIndex"] == 1 })
        tracker.stop()
    }

    @Test("stop() and releasing the last reference send the final update through the client")
    func finalUpdateThroughClient() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p"]))
        defer { client.destroy() }
        let clock = try manualClock(of: client)
        var probe = EventProbe(client)
        let stopped = try ViewTrackingController(client: client, componentId: "stopped")
        var released: ViewTrackingController? = try ViewTrackingController(client: client, componentId: "released")
        stopped.setVisible(true)
        released?.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        stopped.stop()
        released = nil
        let events = await probe.newEvents()
        for componentId: JSONValue in ["stopped", "released"] {
            let own = events.filter { $0["componentId"] == componentId }
            #expect(own.map { $0["viewDurationMs"] } == [2000, 3000])
            #expect(Set(own.map { $0["viewId"] }).count == 1)
        }
        #expect(events.count == 4)
        #expect(events.allSatisfy { $0["type"] == "component" })
        #expect(await probe.newBlocked().isEmpty)
    }

    @Test("Releasing a visible controller after the client was destroyed sends nothing and does not fail")
    func releaseAfterDestroy() throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p"]))
        let clock = try manualClock(of: client)
        var tracker: ViewTrackingController? = try ViewTrackingController(client: client, componentId: "c")
        tracker?.setVisible(true)
        clock.advance(by: .milliseconds(3000))
        client.destroy()
        tracker = nil
        #expect(client.queueSizes() == nil)
    }

    @Test("Controllers use the client's clock; invalid options throw before anything is scheduled")
    func clientClockAndValidation() throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        let clock = try manualClock(of: client)
        #expect(throws: ViewTrackingError.invalidOption(.dwellTime, value: 0)) {
            try ViewTrackingController(client: client, componentId: "c", options: .init(dwellTime: .milliseconds(0)))
        }
        let tracker = try ViewTrackingController(client: client, componentId: "c")
        let before = clock.pendingTimerCount
        tracker.setVisible(true)
        #expect(clock.pendingTimerCount == before + 1)
        tracker.stop()
        #expect(clock.pendingTimerCount == before)
    }
}
