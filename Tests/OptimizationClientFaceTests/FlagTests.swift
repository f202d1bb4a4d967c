import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

/// The visitor of Fixtures/selections/new-visitor.json as client defaults.
func newVisitorDefaults(consent: Bool? = true) throws -> StorageDefaults {
    let data = try JSONValue(jsonData: fixtureData("selections/new-visitor.json"))["data"]
    return StorageDefaults(
        consent: consent, profile: data?["profile"], changes: data?["changes"], selectedOptimizations: data?["experiences"])
}

let heroExperienceId = "4HsYb1VmKr6PfQz9LdXe3T"

/// Flag views (Insights `component` events of componentType `Variable`) among `events`.
func flagViews(_ events: [JSONValue]) -> [JSONValue] {
    events.filter { $0["type"] == "component" && $0["componentType"] == "Variable" }
}

/// Reads the next `count` values of a flag stream.
func next(_ count: Int, of iterator: inout AsyncStream<JSONValue>.AsyncIterator) async -> [JSONValue] {
    var values: [JSONValue] = []
    for _ in 0..<count {
        guard let value = await iterator.next() else { break }
        values.append(value)
    }
    return values
}

@Suite("Custom flags through OptimizationClient")
struct FlagTests {
    @Test func beforeInitializeAFlagIsNullAndItsStreamFinishesAtOnce() async throws {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(client.getFlag("hero-cta-color") == .null)
        var values: [JSONValue] = []
        for await value in client.flagValues("hero-cta-color") { values.append(value) }
        #expect(values.isEmpty)
    }

    @Test func getFlagReturnsTheUnwrappedValueAndSendsOneDeduplicatedFlagView() async throws {
        var defaults = try newVisitorDefaults()
        defaults.changes = [
            ["key": "dark-mode", "type": "Variable", "value": true, "meta": ["experienceId": "6IueRX1pS3iMJncbhUQTba", "variantIndex": 0]],
            ["key": "price", "type": "Variable", "value": ["value": ["amount": 10, "currency": "USD"]],
             "meta": ["experienceId": "6IueRX1pS3iMJncbhUQTba", "variantIndex": 1]],
        ]
        let client = try makeEventClient(defaults: defaults)
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(client.getFlag("dark-mode") == true)
        #expect(client.getFlag("dark-mode") == true)
        #expect(client.getFlag("price") == ["amount": 10, "currency": "USD"])
        #expect(client.getFlag("missing") == .null)
        let views = flagViews(await probe.newEvents())
        #expect(views.map { $0["componentId"]?.stringValue } == ["dark-mode", "price", "missing"])
        #expect(views[0]["experienceId"] == "6IueRX1pS3iMJncbhUQTba")
        #expect(views[0]["variantIndex"] == 0)
        #expect(views[1]["variantIndex"] == 1)
        #expect(client.queueSizes()?.insights == 3, "flag views take the Insights path")
    }

    @Test func preConsentReadsAreReportedOncePerDistinctFlagAndValue() async throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults(consent: nil))
        defer { client.destroy() }
        var probe = EventProbe(client)
        for _ in 0..<5 { #expect(client.getFlag("hero-cta-color") == "#d73a49") }
        _ = client.getFlag("free-shipping-threshold")
        let blocked = await probe.newBlocked()
        #expect(blocked.map(\.method) == ["trackFlagView", "trackFlagView"])
        #expect(blocked.first?.args == [["componentId": "hero-cta-color", "experienceId": .string(heroExperienceId), "variantIndex": 1]])
        #expect(flagViews(await probe.newEvents()).isEmpty)
        client.consent(true)
        _ = client.getFlag("hero-cta-color")
        _ = client.getFlag("hero-cta-color")
        #expect(flagViews(await probe.newEvents()).count == 1, "pre-consent reads do not suppress later tracking")
        #expect(await probe.newBlocked().isEmpty)
    }

    @Test func theFlagAllowListEntryAllowsFlagViewsBeforeConsent() async throws {
        let client = try makeEventClient(allowedEventTypes: ["flag"], defaults: try newVisitorDefaults(consent: nil))
        defer { client.destroy() }
        var probe = EventProbe(client)
        _ = client.getFlag("hero-cta-color")
        #expect(flagViews(await probe.newEvents()).count == 1)
        #expect(await probe.newBlocked().isEmpty)
    }

    @Test func withoutAProfileAFlagReadIsNeitherTrackedNorReported() async throws {
        var defaults = try newVisitorDefaults()
        defaults.profile = nil
        let client = try makeEventClient(defaults: defaults)
        defer { client.destroy() }
        var probe = EventProbe(client)
        #expect(client.getFlag("hero-cta-color") == "#d73a49")
        #expect(await probe.newEvents().isEmpty)
        #expect(await probe.newBlocked().isEmpty)
    }

    @Test func aFlagStreamYieldsTheCurrentValueFirstThenDistinctValues() async throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        var probe = EventProbe(client)
        // The engine learns the hero experience (and its inline variable) from a resolution.
        let hero = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        _ = client.resolveOptimizedEntry(baseline: hero)
        var iterator = client.flagValues("hero-cta-color").makeAsyncIterator()
        #expect(client.currentRuntime?.channel.flags.count == 1)
        #expect(flagViews(await probe.newEvents()).count == 1, "the first value is a flag view")
        client.overrideVariant(experienceId: heroExperienceId, variantIndex: 2)
        client.overrideVariant(experienceId: heroExperienceId, variantIndex: 2)
        client.overrideVariant(experienceId: heroExperienceId, variantIndex: 0)
        client.resetAllOverrides()
        #expect(await next(4, of: &iterator) == ["#d73a49", "#2da44e", "#1f6feb", "#d73a49"])
        #expect(flagViews(await probe.newEvents()).map { $0["variantIndex"] } == [2, 0, 1])
        client.destroy()
        #expect(await iterator.next() == nil, "finishes on destroy")
    }

    @Test func aFlagStreamGetsACatchUpFlagViewOnlyOnTheFirstConsent() async throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults(consent: nil))
        defer { client.destroy() }
        var probe = EventProbe(client)
        var iterator = client.flagValues("hero-cta-color").makeAsyncIterator()
        #expect(await iterator.next() == "#d73a49")
        client.consent(true)
        client.consent(false)
        client.consent(true)
        #expect(flagViews(await probe.newEvents()).count == 1)
        #expect(await probe.newBlocked().map(\.method) == ["trackFlagView"])
    }

    @Test func aStreamEndsOnReinitializeAndUnsubscribesWhenItsConsumerStops() async throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        do {
            var iterator = client.flagValues("hero-cta-color").makeAsyncIterator()
            #expect(await iterator.next() == "#d73a49")
        }
        // The dropped stream's termination removes the subscription.
        #expect(client.currentRuntime?.channel.flags.count == 0)
        var iterator = client.flagValues("hero-cta-color").makeAsyncIterator()
        #expect(await iterator.next() == "#d73a49")
        try client.initialize(config: OptimizationConfig(clientId: "test-client"))
        #expect(await iterator.next() == nil, "finishes when the engine is replaced")
        #expect(client.getFlag("hero-cta-color") == .null)
    }
}
