import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

@Suite("Consent through OptimizationClient")
struct ConsentTests {
    @Test func strictOptInBlocksIdentifyPageAndScreen() async throws {
        let client = try makeEventClient(allowedEventTypes: [])
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(try await client.identify(userId: "user-1") == EventResult(outcome: .blocked(.consent)))
        #expect(try await client.page() == EventResult(outcome: .blocked(.consent)))
        #expect(try await client.screen(name: "Home") == EventResult(outcome: .blocked(.consent)))
        let blocked = await probe.newBlocked()
        #expect(blocked.map(\.method) == ["identify", "page", "screen"])
        #expect(blocked.allSatisfy { $0.reason == "consent" })
        #expect(await probe.newEvents().isEmpty)
        #expect(client.queueSizes()! == (0, 0))
    }

    @Test func theNativeDefaultAllowsIdentifyAndScreenOnly() async throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(try await client.identify(userId: "user-1").accepted)
        #expect(try await client.screen(name: "Home").accepted)
        #expect(try await !client.page().accepted)
        #expect(try await !client.track(event: "e").accepted)
        #expect(try await !client.trackView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(1))).accepted)
        #expect(try await !client.trackClick(TrackClickPayload(componentId: "c")).accepted)
        #expect(await probe.newEvents().map { $0["type"]?.stringValue } == ["identify", "screen"])
        #expect(await probe.newBlocked().map(\.method) == ["page", "track", "trackView", "trackClick"])
        #expect(client.state.optimizationPossible)
        #expect(client.state.consent == nil)
    }

    @Test func aBlockedTrackIsReportedOnceWithItsPayload() async throws {
        let client = try makeEventClient(allowedEventTypes: [])
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(try await !client.track(event: "purchase").accepted)
        #expect(await probe.newBlocked() == [BlockedEvent(reason: "consent", method: "track", args: [["event": "purchase"]])])
    }

    @Test func withConsentRepeatedViewsAreNeverBlocked() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        var probe = EventProbe(client)
        let view = TrackViewPayload(componentId: "hero-banner", viewId: "hero-banner-view-id", viewDuration: .milliseconds(1000))
        #expect(try await client.trackView(view).accepted)
        #expect(try await client.trackView(view).accepted)
        #expect(await probe.newBlocked().isEmpty)
        #expect(await probe.newEvents().count == 2)
        #expect(client.queueSizes()! == (0, 2), "held for a profile, not dropped")
    }

    @Test func isConsentGivenIsEvaluatedWhenEachEventIsBuilt() async throws {
        let client = try makeEventClient(allowedEventTypes: ["identify"])
        defer { client.destroy() }
        var probe = EventProbe(client)
        try await client.identify(userId: "user-1")
        client.consent(events: true)
        try await client.identify(userId: "user-2")
        let events = await probe.newEvents()
        try #require(events.count == 2)
        #expect(events[0]["userId"] == "user-1" && events[0]["context"]?["gdpr"]?["isConsentGiven"] == false)
        #expect(events[1]["userId"] == "user-2" && events[1]["context"]?["gdpr"]?["isConsentGiven"] == true)
    }

    @Test func consentWithABoolSetsBothEventAndPersistenceConsent() throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        #expect(client.state.consent == nil && client.state.persistenceConsent == nil)
        client.consent(true)
        #expect(client.state.consent == true && client.state.persistenceConsent == true)
        client.consent(false)
        #expect(client.state.consent == false && client.state.persistenceConsent == false)
    }

    @Test func partialConsentTouchesOnlyItsKey() throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        #expect(client.state.consent == true && client.state.persistenceConsent == true, "persistence defaults to consent")
        client.consent(persistence: false)
        #expect(client.state.consent == true && client.state.persistenceConsent == false)
        client.consent()
        #expect(client.state.consent == true && client.state.persistenceConsent == false, "no keys, no change")
        client.consent(events: false)
        #expect(client.state.consent == false && client.state.persistenceConsent == false)
        client.consent(events: true, persistence: true)
        #expect(client.state.consent == true && client.state.persistenceConsent == true)
    }

    @Test func withdrawingEventConsentPurgesBothQueues() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]))
        defer { client.destroy() }
        client.setOnline(false)
        try await client.track(event: "queued-experience-event")
        try await client.trackClick(TrackClickPayload(componentId: "hero-banner"))
        try await client.trackView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(1), sticky: true))
        #expect(client.queueSizes()! == (2, 2))
        client.consent(persistence: false)
        #expect(client.queueSizes()! == (2, 2), "persistence alone purges nothing")
        client.consent(events: false)
        #expect(client.queueSizes()! == (0, 0))
        try await client.identify(userId: "u")
        #expect(client.queueSizes()! == (1, 0), "identify is allow-listed by default")
        client.consent(false)
        #expect(client.queueSizes()! == (0, 0))
    }

    @Test func optimizationPossibleFollowsConsentAndTheAllowList() throws {
        let strict = try makeEventClient(allowedEventTypes: [])
        defer { strict.destroy() }
        #expect(!strict.state.optimizationPossible)
        let pageOnly = try makeEventClient(allowedEventTypes: ["page"])
        defer { pageOnly.destroy() }
        #expect(pageOnly.state.optimizationPossible)
        strict.consent(true)
        #expect(strict.state.optimizationPossible)
        strict.consent(false)
        #expect(!strict.state.optimizationPossible)
    }

    @Test func offlineAllowListedPageIsAcceptedAndQueued() async throws {
        let client = try makeEventClient(allowedEventTypes: ["page"])
        defer { client.destroy() }
        client.setOnline(false)
        #expect(try await client.page().outcome == .accepted)
        #expect(client.queueSizes()! == (1, 0))
    }

    @Test func aBlockedScreenQueuesNothing() async throws {
        let client = try makeEventClient(allowedEventTypes: [])
        defer { client.destroy() }
        #expect(try await client.screen(name: "Home") == EventResult(outcome: .blocked(.consent)))
        #expect(client.queueSizes()! == (0, 0))
    }

    @Test func aConsentedScreenIsAcceptedAndQueued() async throws {
        // The Experience API's data arrives with the delivery layer; until then the event is queued.
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        let result = try await client.screen(name: "Home", properties: ["tab": "news"])
        #expect(result.accepted)
        #expect(client.queueSizes()! == (1, 0))
    }

    @Test func hasConsentFollowsTheAllowList() throws {
        let client = try makeEventClient(allowedEventTypes: ["component", "flag"], defaults: StorageDefaults(consent: false))
        defer { client.destroy() }
        #expect(client.hasConsent("trackView"))
        #expect(client.hasConsent("trackFlagView"))
        #expect(!client.hasConsent("trackClick"))
        #expect(!client.hasConsent("identify"))
        client.consent(true)
        #expect(client.hasConsent("trackClick") && client.hasConsent("identify") && client.hasConsent("anything"))
    }

    @Test func beforeInitializeAsyncMethodsThrowAndSyncOnesAreNoOps() async throws {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        await #expect(throws: OptimizationError.notInitialized) { try await client.identify(userId: "u") }
        await #expect(throws: OptimizationError.notInitialized) { try await client.page() }
        await #expect(throws: OptimizationError.notInitialized) { try await client.screen(name: "s") }
        await #expect(throws: OptimizationError.notInitialized) { try await client.trackCurrentScreen(name: "s") }
        await #expect(throws: OptimizationError.notInitialized) { try await client.track(event: "e") }
        await #expect(throws: OptimizationError.notInitialized) {
            try await client.trackView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(1)))
        }
        await #expect(throws: OptimizationError.notInitialized) { try await client.trackClick(TrackClickPayload(componentId: "c")) }
        client.consent(true)
        client.consent(events: true)
        client.setOnline(false)
        #expect(!client.hasConsent("identify"))
        #expect(client.state == .empty)
        #expect(client.queueSizes() == nil)
        try client.initialize(config: OptimizationConfig(clientId: "c"))
        #expect(client.state.consent == nil, "the pre-init consent call was dropped, not queued")
        client.destroy()
        #expect(client.state == .empty)
        await #expect(throws: OptimizationError.notInitialized) { try await client.track(event: "e") }
    }

    @Test func defaultsAreSerializedUnderSelectedOptimizationsAndSeedTheState() throws {
        let selections: JSONValue = [["experienceId": "x", "variantIndex": 1, "variants": [:], "sticky": false]]
        let defaults = StorageDefaults(
            consent: false, persistenceConsent: true, profile: ["id": "p-1"], changes: [], selectedOptimizations: selections)
        let config = OptimizationConfig(clientId: "c", defaults: defaults)
        let bridge = config.bridgeConfiguration
        #expect(bridge["defaults"]?["selectedOptimizations"] == selections)
        #expect(bridge["defaults"]?["optimizations"] == nil)
        #expect(try !bridge.jsonText().contains("\"optimizations\""))
        #expect(OptimizationConfig(clientId: "c").bridgeConfiguration["defaults"] == nil)
        #expect(OptimizationConfig(clientId: "c", defaults: StorageDefaults()).bridgeConfiguration["defaults"] == [:])

        let client = try makeEventClient(defaults: defaults)
        defer { client.destroy() }
        let state = client.state
        #expect(state.consent == false && state.persistenceConsent == true)
        #expect(state.profile == ["id": "p-1"])
        #expect(state.selectedOptimizations == selections)
        #expect(state.changes == [])
        #expect(state.canOptimize)
        #expect(state.experienceRequestState == ["status": "idle"])
    }

    @Test func invalidDefaultsAreConfigErrors() {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(throws: OptimizationError.configError("initialize config \"defaults.profile\" must be an object when provided.")) {
            try client.initialize(config: OptimizationConfig(clientId: "c", defaults: StorageDefaults(profile: [1])))
        }
    }
}
