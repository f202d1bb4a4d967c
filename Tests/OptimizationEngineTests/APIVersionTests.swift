import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import OptimizationTesting
import Testing

/// The protocol version is configuration: a space id speaks API v2 (spaces routes, `master` by
/// default, error codes), a client id keeps speaking v1, on both faces, against the test kit
/// (which serves both).
@Suite("API versions on both faces")
struct APIVersionTests {
    enum Face: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case client, service
        var testDescription: String { rawValue }
    }

    struct Version: Sendable, CustomTestStringConvertible {
        let name: String
        let config: @Sendable (OptimizationAPIConfig, String?) -> OptimizationConfig
        let experiencePrefix: String
        let insightsPrefix: String
        var testDescription: String { name }
    }

    static let versions = [
        Version(
            name: "v2 (spaceId, default environment)",
            config: { OptimizationConfig(spaceId: "space-1", environment: $1, api: $0) },
            experiencePrefix: "/experience/v3/spaces/space-1/environments/master/profiles",
            insightsPrefix: "/insights/v2/spaces/space-1/environments/master/events"),
        Version(
            name: "v1 (clientId, environment staging)",
            config: { OptimizationConfig(clientId: "org-1", environment: $1 ?? "staging", api: $0) },
            experiencePrefix: "/experience/v2/organizations/org-1/environments/staging/profiles",
            insightsPrefix: "/insights/v1/organizations/org-1/environments/staging/events"),
        Version(
            name: "v2 chosen explicitly with a client id",
            config: { OptimizationConfig(clientId: "space-2", environment: $1 ?? "dev", apiVersion: .v2, api: $0) },
            experiencePrefix: "/experience/v3/spaces/space-2/environments/dev/profiles",
            insightsPrefix: "/insights/v2/spaces/space-2/environments/dev/events"),
    ]

    /// Runs `body` on one recorder of `face` (a client, or a service request, with event consent
    /// `consent` and profile `p-1`), then flushes what it queued and closes the face.
    static func withRecorder<T>(
        _ face: Face, _ config: OptimizationConfig, consent: Bool = true, _ body: (any EventRecording) async throws -> T
    ) async throws -> T {
        switch face {
        case .client:
            var config = config
            config.defaults = StorageDefaults(consent: consent, profile: ["id": "p-1"])
            let client = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
            try client.initialize(config: config)
            defer { client.destroy() }
            let result = try await body(client)
            try await client.flush()
            return result
        case .service:
            let service = OptimizationService(config: config, options: .init(engines: 1), environment: .init(clock: ManualClock()))
            try await service.start()
            do {
                let result = try await body(service.forRequest(RequestOptions(consent: RequestConsent(events: consent), profileId: "p-1")))
                await service.shutdown()  // flushes
                return result
            } catch {
                await service.shutdown()
                throw error
            }
        }
    }

    /// Sends one Experience event and one Insights event through `face` and returns what the
    /// calls answered.
    static func send(_ face: Face, _ config: OptimizationConfig, consent: Bool = true) async throws -> (track: EventResult, click: EventResult) {
        try await withRecorder(face, config, consent: consent) { recorder in
            (try await recorder.track(event: "Bought"), try await recorder.trackClick(TrackClickPayload(componentId: "hero")))
        }
    }

    @Test(arguments: Face.allCases, versions)
    func eachVersionUsesItsRoutes(_ face: Face, _ version: Version) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let (track, click) = try await Self.send(face, version.config(api, nil))
            #expect(track.outcome == .delivered, "\(track.outcome)")
            #expect(click.outcome == .accepted)
            let experience = server.requests(matching: .experience).map(\.path)
            let insights = server.requests(matching: .insights).map(\.path)
            #expect(!experience.isEmpty && experience.allSatisfy { $0.hasPrefix(version.experiencePrefix) }, "\(experience)")
            #expect(insights.count == 1 && insights.allSatisfy { $0.hasPrefix(version.insightsPrefix) }, "\(insights)")
            #expect(server.insightsEvents.count == 1)
        }
    }

    @Test(arguments: Face.allCases)
    func aV2ErrorEnvelopeReachesTheResultWithItsCode(_ face: Face) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let body = String(decoding: try fixtureData("experience-v2/error-invalid-data.json"), as: UTF8.self)
            server.enqueue(.status(400, body: body, headers: ["content-type": "application/json"]), for: .experience)
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let (track, _) = try await Self.send(face, OptimizationConfig(spaceId: "space-1", environment: "master", api: api))
            guard case .refused(status: 400, code: "ERR_INVALID_DATA", _) = track.outcome else {
                Issue.record("\(face): \(track.outcome)")
                return
            }
        }
    }

    @Test func aV1ErrorEnvelopeHasNoCode() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(.status(400, body: #"{"message":"invalid","data":{},"error":true}"#), for: .experience)
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let (track, _) = try await Self.send(.service, OptimizationConfig(clientId: "org-1", environment: "main", api: api))
            guard case .refused(status: 400, code: nil, _) = track.outcome else {
                Issue.record("\(track.outcome)")
                return
            }
        }
    }

    @Test(arguments: Face.allCases)
    func experienceAndFragmentChangesReachTheCallerAndFlagsReadVariablesOnly(_ face: Face) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let fixture = try JSONValue(jsonData: try fixtureData("experience-v2/mixed-changes.json"))
            server.setExperienceData(newVisitor: fixture["data"])
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let config = OptimizationConfig(spaceId: "space-1", environment: "master", api: api)
            let changes: [JSONValue]?
            let headline: JSONValue
            let shipping: JSONValue
            let experience: JSONValue
            switch face {
            case .client:
                let client = OptimizationClient(environment: .init(clock: ManualClock(), storage: .disabled))
                var consented = config
                consented.defaults = StorageDefaults(consent: true)
                try client.initialize(config: consented)
                defer { client.destroy() }
                #expect(try await client.page().outcome == .delivered)
                changes = client.state.changes?.arrayValue
                headline = client.getFlag("headline")
                shipping = client.getFlag("shipping")
                experience = client.getFlag("experience-landing")
            case .service:
                let service = OptimizationService(config: config, options: .init(engines: 1), environment: .init(clock: ManualClock()))
                try await service.start()
                let request = service.forRequest(RequestOptions(consent: true))
                #expect(try await request.page().outcome == .delivered)
                changes = request.changes
                headline = request.getFlag("headline")
                shipping = request.getFlag("shipping")
                experience = request.getFlag("experience-landing")
                await service.shutdown()
            }
            // The change of a type the API does not define is dropped on its own.
            #expect(changes?.compactMap { $0["type"]?.stringValue } == ["Variable", "Variable", "Experience", "Fragment"])
            #expect(changes?[3]["variantId"] == "fragment-footer-eu")
            #expect(headline == "Bonjour")
            #expect(shipping == ["freeFrom": 50])
            #expect(experience == .null, "an Experience change is not a flag")
        }
    }

    @Test(arguments: Face.allCases)
    func experiencesNodeEventsReachInsightsInV2AndAreRefusedInV1(_ face: Face) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let node = ExperienceNode(entityId: "experience-123", entityKind: .experience, entryIds: ["entry-1"], variantIndex: 1)
            func send(_ recorder: any EventRecording) async throws -> [EventResult] {
                [
                    try await recorder.trackNodeView(node, viewId: "view-1", viewDuration: .milliseconds(3_000)),
                    try await recorder.trackNodeClick(node),
                    try await recorder.trackNodeHover(node, hoverId: "hover-1", hoverDuration: .milliseconds(250)),
                ]
            }
            for version in [OptimizationAPIVersion.v2, .v1] {
                let config = OptimizationConfig(clientId: "tenant-1", environment: "master", apiVersion: version, api: api)
                var results: [EventResult] = []
                var failure: OptimizationError?
                do {
                    results = try await Self.withRecorder(face, config, send)
                } catch let error as OptimizationError {
                    failure = error
                } catch {
                    Issue.record("\(error)")
                }
                if version == .v1 {
                    guard case .bridgeError(let message) = failure else {
                        Issue.record("v1 \(face): \(String(describing: failure))")
                        continue
                    }
                    #expect(message.contains("needs API v2"))
                    continue
                }
                #expect(failure == nil)
                #expect(results.map(\.outcome) == [.accepted, .accepted, .accepted])
                #expect(results.compactMap { $0.event?["type"]?.stringValue } == ["exo_node_view", "exo_node_click", "exo_node_hover"])
                let delivered = server.insightsEvents
                #expect(delivered.compactMap { $0["type"]?.stringValue } == ["exo_node_view", "exo_node_click", "exo_node_hover"])
                #expect(delivered.first?["viewDurationMs"] == 3_000)
                #expect(delivered.last?["hoverDurationMs"] == 250)
                #expect(delivered.first?["entryIds"] == ["entry-1"])
                #expect(server.requests(matching: .insights).allSatisfy { $0.path.hasPrefix("/insights/v2/spaces/tenant-1/") })
            }
        }
    }

    /// Every duration and index an event carries is an integer ≥ 0: a negative or out-of-range
    /// one fails the call before anything is queued, in both faces (API v2 refuses them).
    @Test(arguments: Face.allCases)
    func negativeDurationsAndIndexesFailTheCallAndNothingIsSent(_ face: Face) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let api = OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)
            let config = OptimizationConfig(clientId: "tenant-1", environment: "master", apiVersion: .v2, api: api)
            let node = ExperienceNode(entityId: "experience-123", entityKind: .experience)
            let negativeIndex = ExperienceNode(entityId: "experience-123", entityKind: .experience, variantIndex: -1)
            let calls: [@Sendable (any EventRecording) async throws -> EventResult] = [
                { try await $0.trackNodeView(node, viewId: "v", viewDuration: .milliseconds(-1)) },
                { try await $0.trackNodeHover(node, hoverId: "h", hoverDuration: .milliseconds(-5)) },
                { try await $0.trackNodeClick(negativeIndex) },
                { try await $0.trackHover(componentId: "c", hoverId: "h", hoverDuration: .milliseconds(-1)) },
                { try await $0.trackClick(TrackClickPayload(componentId: "c", variantIndex: -2)) },
                { try await $0.trackView(TrackViewPayload(componentId: "c", viewId: "v", variantIndex: -1, viewDuration: .zero)) },
                { try await $0.trackFlagView(componentId: "flag", variantIndex: -1) },
            ]
            func refusals(_ recorder: any EventRecording) async -> [String] {
                var messages: [String] = []
                for call in calls {
                    do {
                        _ = try await call(recorder)
                        Issue.record("\(face): a negative duration or index was accepted")
                    } catch let error as OptimizationError {
                        if case .bridgeError(let message) = error { messages.append(message) } else { Issue.record("\(error)") }
                    } catch {
                        Issue.record("\(error)")
                    }
                }
                return messages
            }
            let messages = try await Self.withRecorder(face, config, refusals)
            #expect(messages.count == calls.count)
            #expect(messages.allSatisfy { $0.contains("must be an integer ≥ 0") }, "\(messages)")
            #expect(server.requests(matching: .insights).isEmpty)
        }
    }

    @Test func theDefaultsFollowTheInitializer() {
        #expect(OptimizationConfig(spaceId: "s").apiVersion == .v2)
        #expect(OptimizationConfig(clientId: "c").apiVersion == .v1)
        #expect(OptimizationAPIVersion.v2.defaultEnvironment == "master")
        #expect(OptimizationAPIVersion.v1.defaultEnvironment == "main")
        #expect(OptimizationConfig(spaceId: "s").spaceId == "s")
    }

    @Test func anUnsetEnvironmentIsAWarningOnceAtStart() async throws {
        let recorder = LogRecorder()
        let client = OptimizationClient(environment: .init(logger: recorder.logger, clock: ManualClock(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(spaceId: "space-1"))
        defer { client.destroy() }
        let warnings = recorder.all.filter { $0.message.contains("no Contentful environment configured") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.level == .warning)
        #expect(warnings.first?.metadata["environment"] == "master")
        let configured = OptimizationClient(environment: .init(logger: recorder.logger, clock: ManualClock(), storage: .disabled))
        try configured.initialize(config: OptimizationConfig(spaceId: "space-1", environment: "master"))
        defer { configured.destroy() }
        #expect(recorder.all.filter { $0.message.contains("no Contentful environment configured") }.count == 1)
    }
}
