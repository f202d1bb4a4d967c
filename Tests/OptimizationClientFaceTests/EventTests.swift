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

// MARK: - Support shared by the consent and event tests



private let heroFixture = "entries/hero-optimized.json"

// MARK: - Event tests

@Suite("Events through OptimizationClient")
struct EventTests {
    @Test func acceptedEventsCarryTheUniversalProperties() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        var probe = EventProbe(client)
        let result = try await client.track(event: "purchase", properties: ["amount": 10])
        #expect(result.outcome == .accepted)
        let events = await probe.newEvents()
        try #require(events.count == 1)
        let event = events[0]
        // The call answers with the event it published.
        #expect(result.event == event)
        #expect(event["type"] == "track")
        #expect(event["event"] == "purchase")
        #expect(event["properties"] == ["amount": 10])
        #expect(event["channel"] == "server")
        #expect(event["context"]?["library"] == ["name": .string(OptimizationLibrary.name), "version": .string(OptimizationLibrary.version)])
        #expect(event["context"]?["locale"] == "en-US")
        #expect(event["context"]?["gdpr"]?["isConsentGiven"] == true)
        #expect(event["context"]?["campaign"] == [:])
        #expect(event["context"]?["page"] == ["path": "", "query": [:], "referrer": "", "search": "", "title": "", "url": ""])
        // Timestamps come from the injected clock (ManualClock starts at 2026-01-01T00:00:00Z).
        for key in ["originalTimestamp", "sentAt", "timestamp"] {
            #expect(event[key] == "2026-01-01T00:00:00.000Z", "\(key)")
        }
        let messageId = try #require(event["messageId"]?.stringValue)
        #expect(UUID(uuidString: messageId) != nil)
        #expect(client.queueSizes()! == (1, 0))
    }

    @Test func channelIsConfigurable() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true), channel: "kiosk")
        defer { client.destroy() }
        var probe = EventProbe(client)
        try await client.identify(userId: "u-1", traits: ["plan": "pro"])
        let event = try #require(await probe.newEvents().first)
        #expect(event["channel"] == "kiosk")
        #expect(event["userId"] == "u-1")
        #expect(event["traits"] == ["plan": "pro"])
    }

    @Test func aScreenEventBeforeConsentIsAcceptedWithoutAPageAndWithIsConsentGivenFalse() async throws {
        // The native default allow-list lets `screen` through before consent.
        let client = try makeEventClient()
        defer { client.destroy() }
        var probe = EventProbe(client)
        let result = try await client.screen(name: "Home")
        #expect(result.accepted)
        let event = try #require(await probe.newEvents().first)
        #expect(event["type"] == "screen")
        #expect(event["name"] == "Home")
        #expect(event["context"]?["screen"]?["name"] == "Home")
        #expect(event["properties"]?["name"] == "Home")
        #expect(event["context"]?["gdpr"]?["isConsentGiven"] == false)
        #expect(event["context"]?["page"] == nil)
    }

    @Test func aResolvedContextEnrichesTheStreamButNotThePayload() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p-1"]))
        defer { client.destroy() }
        let entry = try ContentfulEntry(jsonData: fixtureData(heroFixture))
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/new-visitor.json"))
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
        let contextId = try #require(resolved.optimizationContextId)
        var probe = EventProbe(client)
        let result = try await client.trackView(TrackViewPayload(
            componentId: entry.id, viewId: "view-1", experienceId: resolved.selectedOptimization?["experienceId"]?.stringValue,
            optimizationContextId: contextId, variantIndex: 1, viewDuration: .milliseconds(250), sticky: true))
        #expect(result.accepted)
        let events = await probe.newEvents()
        try #require(events.count == 2, "sticky: Experience then Insights")
        for event in events {
            #expect(event["type"] == "component")
            #expect(event["componentType"] == "Entry")
            #expect(event["optimization"]?["contextId"]?.stringValue == contextId)
            #expect(event["optimization"]?["baselineEntry"]?["sys"]?["id"]?.stringValue == entry.id)
            #expect(event["optimization"]?["selectedOptimization"] != nil)
            #expect(event["optimizationContextId"] == nil)
            #expect(event["sticky"] == nil)
        }
        #expect(events[0]["messageId"] != events[1]["messageId"])
        #expect(client.queueSizes()! == (1, 1))
    }

    @Test func unknownContextIdsAreNotAnError() async throws {
        let client = try makeEventClient(
            allowedEventTypes: ["component", "component_click"], defaults: StorageDefaults(consent: true, profile: ["id": "p"]))
        defer { client.destroy() }
        var probe = EventProbe(client)
        let view = try await client.trackView(TrackViewPayload(
            componentId: "c", viewId: "v", optimizationContextId: "ctx-1", viewDuration: .milliseconds(1)))
        let click = try await client.trackClick(TrackClickPayload(componentId: "c", optimizationContextId: "ctx-1"))
        #expect(view.accepted && click.accepted)
        let events = await probe.newEvents()
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0["optimization"] == nil })
    }

    @Test func theNormalizedLocaleIsTheEventLocale() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true), locale: " de_DE ")
        defer { client.destroy() }
        #expect(client.state.locale == "de-DE")
        var probe = EventProbe(client)
        try await client.page()
        let event = try #require(await probe.newEvents().first)
        #expect(event["context"]?["locale"] == "de-DE")
        #expect(event["type"] == "page")
    }

    @Test(arguments: ["*", "und", "UND", "", "not a locale"])
    func invalidLocalesAreConfigErrors(_ locale: String) {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(throws: OptimizationError.self) {
            try client.initialize(config: OptimizationConfig(clientId: "c", locale: locale))
        }
        #expect(!client.isInitialized)
    }

    @Test func pagePayloadIsTheBuilderInput() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        var probe = EventProbe(client)
        try await client.page([
            "name": "Products",
            "properties": ["path": "/products", "url": "https://shop.test/products?utm_campaign=spring&utm_source=mail"],
        ])
        let event = try #require(await probe.newEvents().first)
        #expect(event["name"] == "Products")
        #expect(event["properties"]?["path"] == "/products")
        #expect(event["properties"]?["title"] == "")
        #expect(event["context"]?["page"] == event["properties"])
        #expect(event["context"]?["campaign"] == ["name": "spring", "source": "mail"])
    }

    static let validationCases: [(BridgeFunction, JSONValue, String)] = [
        (BridgeContract.Visitor.function(for: .identify), ["traits": [:]], "identify payload must include a string \"userId\"."),
        (BridgeContract.Visitor.function(for: .page), [], "page payload must be an object."),
        (BridgeContract.Visitor.function(for: .screen), ["name": "Home", "properties": []], "screen payload \"properties\" must be an object when provided."),
        (BridgeContract.Visitor.trackCurrentScreen, ["name": "Home", "routeKey": 1], "trackCurrentScreen payload \"routeKey\" must be a string when provided."),
        (BridgeContract.Visitor.function(for: .track), ["properties": [:]], "track payload must include a string \"event\"."),
        (BridgeContract.Visitor.function(for: .trackView), ["componentId": "component-1", "viewId": "view-1", "variantIndex": "0", "viewDurationMs": 1],
         "trackView payload must include a number \"variantIndex\"."),
        (BridgeContract.Visitor.function(for: .trackClick), ["componentId": 1, "variantIndex": 0], "trackClick payload must include a string \"componentId\"."),
    ]

    @Test func invalidPayloadsFailWithTheBridgesMessages() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        let runtime = try #require(client.currentRuntime)
        var probe = EventProbe(client)
        for (method, payload, message) in Self.validationCases {
            await #expect(throws: OptimizationError.bridgeError(message), "\(method)") {
                _ = try await runtime.channel.request(method, payload: payload, on: runtime.engine)
            }
        }
        #expect(await probe.newEvents().isEmpty)
        #expect(await probe.newBlocked().isEmpty)
        #expect(runtime.channel.pendingRequestCount == 0)
    }

    @Test func everyOwnKeyOfTheBridgeIsAFunction() throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        let engine = try #require(client.currentRuntime?.engine)
        let check = try engine.evaluate(
            "Object.keys(__bridge).filter(function (k) { return typeof __bridge[k] !== 'function'; }).length === 0 && globalThis.__bridge === __bridge")
        #expect(check == .bool(true))
        for method in ["identify", "page", "screen", "trackCurrentScreen", "track", "trackView", "trackClick", "consent", "hasConsent", "setOnline", "experienceRequest", "experienceAnswered", "releaseExperienceWaiters"] {
            #expect(try engine.evaluate("typeof __bridge.\(method)") == .string("function"), "\(method)")
        }
    }

    @Test func trackCurrentScreenDeduplicatesByRouteKeyAndReportsBlocksOnce() async throws {
        let client = try makeEventClient(allowedEventTypes: [])
        defer { client.destroy() }
        var probe = EventProbe(client)
        let blocked = try await client.trackCurrentScreen(name: "Home")
        #expect(!blocked.accepted)
        #expect(await probe.newBlocked() == [BlockedEvent(reason: "consent", method: "trackCurrentScreen", args: [["name": "Home"]])])
        client.consent(true)
        #expect(try await client.trackCurrentScreen(name: "Home").accepted)
        #expect(try await !client.trackCurrentScreen(name: "Home", properties: ["tab": 1]).accepted)
        #expect(try await client.trackCurrentScreen(name: "Home", routeKey: "home/2").accepted)
        #expect(try await !client.trackCurrentScreen(name: "Other", routeKey: "home/2").accepted)
        #expect(try await client.trackCurrentScreen(name: "Home").accepted)
        #expect(await probe.newEvents().count == 3)
        #expect(await probe.newBlocked().isEmpty, "a duplicate is not a consent block")
        #expect(try await client.screen(name: "Home").accepted, "plain screen is never de-duplicated")
    }

    @Test func stickyViewsGoToExperienceOncePerKey() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true, profile: ["id": "p"]))
        defer { client.destroy() }
        var probe = EventProbe(client)
        func view(_ viewId: String, key: String? = nil) -> TrackViewPayload {
            TrackViewPayload(componentId: "c", viewId: viewId, variantIndex: 1, viewDuration: .milliseconds(1), sticky: true, stickyTrackingKey: key)
        }
        try await client.trackView(view("v1"))
        try await client.trackView(view("v1"))
        try await client.trackView(view("v2", key: "entry-c"))
        try await client.trackView(view("v3", key: "entry-c"))
        #expect(client.queueSizes()! == (2, 4))
        #expect(await probe.newEvents().count == 6)
    }

    @Test func submitViewAndClickPublishBeforeReturning() throws {
        let client = try makeEventClient(allowedEventTypes: ["component"], defaults: StorageDefaults(profile: ["id": "p"]))
        defer { client.destroy() }
        let events = client.eventBroadcaster.yieldedCount
        let blocked = client.blockedEventBroadcaster.yieldedCount
        client.submitView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(2000)))
        #expect(client.eventBroadcaster.yieldedCount == events + 1)
        client.submitClick(TrackClickPayload(componentId: "c"))
        #expect(client.blockedEventBroadcaster.yieldedCount == blocked + 1, "clicks need component_click")
        #expect(client.currentRuntime?.channel.pendingRequestCount == 0)
        client.destroy()
        client.submitView(TrackViewPayload(componentId: "c", viewId: "v", viewDuration: .milliseconds(1)))
    }

    @Test func streamsAreNewPerAccessWithoutReplayAndFinishOnDestroy() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        try await client.track(event: "before")
        let first = client.events
        try await client.track(event: "one")
        let second = client.events
        try await client.track(event: "two")
        client.destroy()
        var seenFirst: [String] = []
        for await event in first { seenFirst.append(event["event"]?.stringValue ?? "?") }
        var seenSecond: [String] = []
        for await event in second { seenSecond.append(event["event"]?.stringValue ?? "?") }
        #expect(seenFirst == ["one", "two"])
        #expect(seenSecond == ["two"])
        #expect(client.eventBroadcaster.subscriberCount == 0)
    }

    @Test func streamsSurviveReinitializeAndAStreamTakenBeforeInitializeWorks() async throws {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        var probe = EventProbe(client)
        try client.initialize(config: OptimizationConfig(clientId: "c", defaults: StorageDefaults(consent: true)))
        try await client.track(event: "a")
        try client.initialize(config: OptimizationConfig(clientId: "c", defaults: StorageDefaults(consent: true)))
        try await client.track(event: "b")
        #expect(await probe.newEvents().map { $0["event"]?.stringValue } == ["a", "b"])
        client.destroy()
    }

    @Test func blockedPayloadsNeverReachLogsAboveDebug() async throws {
        let sentinel = "SENTINEL-\(UUID().uuidString)"
        let recorder = LogRecorder()
        let client = try makeEventClient(allowedEventTypes: [], logLevel: .log, logger: recorder.logger)
        defer { client.destroy() }
        let traits: OrderedDictionary<String, JSONValue> = ["email": .string("\(sentinel)@example.test"), "nested": ["secret": .string(sentinel)]]
        #expect(try await !client.identify(userId: sentinel, traits: traits).accepted)
        #expect(try await !client.track(event: "e", properties: ["s": .string(sentinel)]).accepted)
        #expect(try await !client.trackCurrentScreen(name: sentinel).accepted)
        #expect(try await !client.trackView(TrackViewPayload(componentId: sentinel, viewId: sentinel, viewDuration: .milliseconds(1))).accepted)
        client.consent(true)
        #expect(try await client.identify(userId: sentinel, traits: traits).accepted)
        #expect(try await client.page(["properties": ["title": .string(sentinel)]]).accepted)
        await #expect(throws: OptimizationError.self) {
            try await client.page(["page": .string(sentinel)])
        }
        let records = recorder.all
        #expect(records.contains { $0.level == .warning && $0.text.contains("was blocked due to lack of consent") },
                "the data-free block warning is there")
        #expect(records.contains { $0.level <= .debug && $0.text.contains(sentinel) }, "the payload is logged at debug")
        for record in records where record.level > .debug {
            #expect(!record.text.contains(sentinel), "visitor data logged at \(record.level): \(record.text)")
        }
    }
}
