import Foundation
import JavaScriptHost
@testable import Optimization
import OptimizationTesting
import Testing

/// The client offers the service's event methods with the same argument types: `trackHover` and
/// `trackFlagView` build the same Insights events, gated by the same allow-list entries.
@Suite("Event parity between OptimizationClient and OptimizationService")
struct EventParityTests {
    @Test func trackHoverAndTrackFlagViewBuildTheServicesEventsOnTheClient() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(try await client.trackHover(componentId: "hero", hoverId: "h-1", hoverDurationMs: 1_250, experienceId: "exp", variantIndex: 1).accepted)
        #expect(try await client.trackFlagView(componentId: "flag-a", experienceId: "exp", variantIndex: 0).accepted)
        let events = await probe.newEvents()
        #expect(events.count == 2)
        #expect(events.first?["type"] == "component_hover")
        #expect(events.first?["componentType"] == "Entry")
        #expect(events.first?["hoverId"] == "h-1")
        #expect(events.first?["hoverDurationMs"]?.intValue == 1_250)
        #expect(events.first?["variantIndex"]?.intValue == 1)
        #expect(events.last?["type"] == "component")
        #expect(events.last?["componentType"] == "Variable")
        #expect(events.last?["componentId"] == "flag-a")
        #expect(client.queueSizes()?.insights == 2, "both go to the Insights queue")
    }

    @Test func beforeConsentTheyAreBlockedUnlessTheAllowListNamesThem() async throws {
        let strict = try makeEventClient(allowedEventTypes: [])
        defer { strict.destroy() }
        var probe = EventProbe(strict)
        #expect(try await strict.trackHover(componentId: "hero", hoverId: "h", hoverDurationMs: 10).accepted == false)
        #expect(try await strict.trackFlagView(componentId: "flag-a").accepted == false)
        #expect(await probe.newBlocked().map(\.method) == ["trackHover", "trackFlagView"])

        let allowing = try makeEventClient(allowedEventTypes: ["component_hover", "flag"])
        defer { allowing.destroy() }
        #expect(try await allowing.trackHover(componentId: "hero", hoverId: "h", hoverDurationMs: 10).accepted)
        #expect(try await allowing.trackFlagView(componentId: "flag-a").accepted)
    }
}
