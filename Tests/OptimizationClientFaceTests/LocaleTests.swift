import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

@Suite("Locale and reset through OptimizationClient")
struct LocaleTests {
    @Test func theConfiguredLocaleIsNormalisedAndUsedByEvents() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true), locale: " de_DE ")
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(client.state.locale == "de-DE")
        _ = try await client.page()
        #expect(await probe.newEvents().first?["context"]?["locale"] == "de-DE")
        var states = client.stateChanges.makeAsyncIterator()
        #expect(try client.setLocale(" fr_FR ") == "fr-FR")
        #expect(client.state.locale == "fr-FR", "updated before setLocale returns")
        #expect(await states.next()?.locale == "fr-FR")
        _ = try await client.page()
        #expect(await probe.newEvents().first?["context"]?["locale"] == "fr-FR")
    }

    @Test(arguments: ["*", "und", "UND", "", "not a locale", "  "])
    func invalidLocalesThrowAConfigErrorAndLeaveTheStateUnchanged(_ locale: String) throws {
        let client = try makeEventClient(locale: "en-US")
        defer { client.destroy() }
        #expect(throws: OptimizationError.configError("locale must be a valid locale string, received \"\(locale)\".")) {
            try client.setLocale(locale)
        }
        #expect(client.state.locale == "en-US")
    }

    @Test func anInvalidConfiguredLocaleFailsInitialize() {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(throws: OptimizationError.self) { try client.initialize(config: OptimizationConfig(clientId: "c", locale: "*")) }
        #expect(!client.isInitialized)
    }

    @Test func setLocaleBeforeInitializeThrowsNotInitialized() {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(throws: OptimizationError.notInitialized) { try client.setLocale("de-DE") }
        client.reset()
        #expect(!client.isInitialized)
    }

    @Test func resetForgetsTheVisitorButKeepsConsentLocaleAndQueuedEvents() async throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults(), locale: "en-GB")
        defer { client.destroy() }
        var probe = EventProbe(client)
        let hero = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        let selections = try SelectedOptimizations(client.state.selectedOptimizations?.arrayValue ?? [])
        let resolved = client.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
        let contextId = try #require(resolved.optimizationContextId)
        _ = try await client.trackCurrentScreen(name: "Home")
        _ = try await client.track(event: "queued")
        let queued = try #require(client.queueSizes())
        #expect(queued.experience > 0)
        client.overrideVariant(experienceId: heroExperienceId, variantIndex: 2)
        _ = await probe.newEvents()

        client.reset()
        let state = client.state
        #expect(state.profile == nil && state.changes == nil && state.selectedOptimizations == nil)
        #expect(!state.canOptimize)
        #expect(state.experienceRequestState == ["status": "idle"])
        #expect(state.consent == true && state.persistenceConsent == true)
        #expect(state.locale == "en-GB")
        #expect(client.queueSizes()! == queued, "queues are not purged")
        #expect(client.previewState?.variantOverrides == [:])
        #expect(client.getFlag("hero-cta-color") == .null)
        // Contexts and the current-screen de-dupe are forgotten.
        try await client.trackClick(TrackClickPayload(componentId: "c", optimizationContextId: contextId))
        #expect(try await client.trackCurrentScreen(name: "Home").accepted)
        let events = await probe.newEvents()
        #expect(events.first?["optimization"] == nil)
        #expect(events.filter { $0["type"] == "screen" }.count == 1)
    }
}
