import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
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
        #expect(try await client.trackHover(componentId: "hero", hoverId: "h-1", hoverDuration: .milliseconds(1_250), experienceId: "exp", variantIndex: 1).accepted)
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
        #expect(try await strict.trackHover(componentId: "hero", hoverId: "h", hoverDuration: .milliseconds(10)).accepted == false)
        #expect(try await strict.trackFlagView(componentId: "flag-a").accepted == false)
        #expect(await probe.newBlocked().map(\.method) == ["trackHover", "trackFlagView"])

        let allowing = try makeEventClient(allowedEventTypes: ["component_hover", "flag"])
        defer { allowing.destroy() }
        #expect(try await allowing.trackHover(componentId: "hero", hoverId: "h", hoverDuration: .milliseconds(10)).accepted)
        #expect(try await allowing.trackFlagView(componentId: "flag-a").accepted)
    }
}

/// One face under test: the single-visitor client or a request of the service, both against the
/// same local API server, answering the same event calls with the same `EventResult`.
private enum Face: String, CaseIterable, CustomTestStringConvertible {
    case client, service
    var testDescription: String { rawValue }
}

/// A scenario of the event path and the outcome each face must report. Where the faces differ
/// by design, the expectation says so: the client keeps an event it could not deliver queued
/// for a retry (`.accepted`), a service request reports how its one Experience call went.
private struct ResultScenario: Sendable, CustomTestStringConvertible {
    let name: String
    /// Event consent of the visitor (nil: not given).
    var consent: Bool?
    /// The allow-list before consent, the same on both faces (nil: each face's default).
    var allowedEventTypes: [String]?
    /// What the Experience API answers, if it is asked.
    var experienceAnswer: ScriptedResponse?
    var call: Call = .track
    let expected: @Sendable (Face, EventOutcome) -> Bool
    var testDescription: String { name }

    enum Call: Sendable { case track, trackClick }
}

private func isRefused(_ outcome: EventOutcome, status: Int) -> Bool {
    if case .refused(status: status, code: nil, _) = outcome { return true }
    return false
}

private func isFailed(_ outcome: EventOutcome, status: Int) -> Bool {
    if case .failed(status: status, _, _) = outcome { return true }
    return false
}

private let resultScenarios: [ResultScenario] = [
    ResultScenario(name: "no consent: blocked", consent: nil) { $1 == .blocked(.consent) },
    ResultScenario(name: "consent refused: blocked", consent: false) { $1 == .blocked(.consent) },
    ResultScenario(name: "allow-listed before consent: delivered", consent: nil, allowedEventTypes: ["track"]) { $1 == .delivered },
    ResultScenario(name: "strict opt-in: blocked", consent: nil, allowedEventTypes: []) { $1 == .blocked(.consent) },
    ResultScenario(name: "answered: delivered", consent: true) { $1 == .delivered },
    ResultScenario(name: "422: refused with its status", consent: true, experienceAnswer: .status(422)) { isRefused($1, status: 422) },
    ResultScenario(name: "401: refused, delivery disabled", consent: true, experienceAnswer: .status(401)) { isRefused($1, status: 401) },
    ResultScenario(name: "503: queued for retry / reported failed", consent: true, experienceAnswer: .status(503)) { face, outcome in
        face == .client ? outcome == .accepted : isFailed(outcome, status: 503)
    },
    ResultScenario(name: "429 with Retry-After: queued / reported failed", consent: true, experienceAnswer: .retryAfter(seconds: 30)) { face, outcome in
        face == .client ? outcome == .accepted : isFailed(outcome, status: 429)
    },
    ResultScenario(name: "Insights event: accepted", consent: true, call: .trackClick) { $1 == .accepted },
    ResultScenario(name: "Insights event without consent: blocked", consent: nil, call: .trackClick) { $1 == .blocked(.consent) },
]

@Suite("One result vocabulary on both faces")
struct EventResultParityTests {
    @Test func theAllowListDefaultsDifferByNameAndDesign() async throws {
        #expect(OptimizationClient.defaultAllowedEventTypes == ["identify", "screen"])
        #expect(OptimizationService.defaultAllowedEventTypes == ["identify", "page"])
        try await LocalOptimizationAPIServer.withRunning { server in
            let client = try makeDeliveryClient(server, defaults: StorageDefaults(profile: ["id": "p-1"]))
            defer { client.destroy() }
            #expect(try await client.screen(name: "Home").accepted)
            #expect(try await client.page().outcome == .blocked(.consent))

            let service = makeService(server, engines: 1)
            try await service.start()
            let request = service.forRequest(RequestOptions(profileId: "p-1"))
            #expect(try await request.page().accepted)
            #expect(try await request.screen(name: "Home").outcome == .blocked(.consent))
            await service.shutdown()
        }
        // The shared core's own default (for hosts that pass none) is the client's.
        let plain = try makeClient()
        defer { plain.destroy() }
        let core = try plain.currentRuntime?.engine.evaluate("JSON.stringify(__optimization.DEFAULT_ALLOWED_EVENT_TYPES)").stringValue
        #expect(core.flatMap { try? JSONValue(jsonText: $0) } == .array(OptimizationClient.defaultAllowedEventTypes.map(JSONValue.string)))
    }

    @Test func aRepeatedCurrentScreenIsADuplicateNotAConsentBlock() async throws {
        let client = try makeEventClient(defaults: StorageDefaults(consent: true))
        defer { client.destroy() }
        #expect(try await client.trackCurrentScreen(name: "Home").outcome == .accepted)
        #expect(try await client.trackCurrentScreen(name: "Home").outcome == .blocked(.duplicate))
        let strict = try makeEventClient(allowedEventTypes: [])
        defer { strict.destroy() }
        #expect(try await strict.trackCurrentScreen(name: "Home").outcome == .blocked(.consent))
    }

    @Test(arguments: Face.allCases, resultScenarios)
    fileprivate func bothFacesAnswerTheSameOutcome(_ face: Face, _ scenario: ResultScenario) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            if let answer = scenario.experienceAnswer { server.enqueue(answer, for: .experience) }
            let result: EventResult
            switch face {
            case .client:
                let client = try makeDeliveryClient(
                    server, defaults: StorageDefaults(consent: scenario.consent, profile: ["id": "p-1"]),
                    allowedEventTypes: scenario.allowedEventTypes ?? OptimizationService.defaultAllowedEventTypes)
                defer { client.destroy() }
                switch scenario.call {
                case .track: result = try await client.track(event: "Bought", properties: ["plan": "pro"])
                case .trackClick: result = try await client.trackClick(TrackClickPayload(componentId: "hero"))
                }
            case .service:
                let service = makeService(server, engines: 1, allowedEventTypes: scenario.allowedEventTypes)
                try await service.start()
                let request = service.forRequest(RequestOptions(consent: RequestConsent(events: scenario.consent), profileId: "p-1"))
                switch scenario.call {
                case .track: result = try await request.track(event: "Bought", properties: ["plan": "pro"])
                case .trackClick: result = try await request.trackClick(TrackClickPayload(componentId: "hero"))
                }
                await service.shutdown()
            }
            #expect(scenario.expected(face, result.outcome), "\(face): \(result.outcome)")
            #expect(result.accepted == (result.outcome != .blocked(.consent)))
            // The emitted event comes back with the result wherever one was built.
            let type: JSONValue = scenario.call == .track ? "track" : "component_click"
            #expect(result.accepted ? result.event?["type"] == type : result.event == nil)
            if result.outcome == .delivered { #expect(result.data?["profile"] != nil) }
        }
    }
}
