import JavaScriptHost
@testable import OptimizationEngine
import Optimization
import OptimizationJSON
import OptimizationTestSupport
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// Which service calls go to the Experience API is the shared core's rule, read by Swift as data
/// from the configure answer (``ExperienceRouting``), not written a second time.
@Suite("Experience routing from the shared core", .hangBound)
struct ExperienceRoutingTests {
    static func startedService(scripts: [EmbeddedScript] = EmbeddedJSRuntime.scripts) async throws -> OptimizationService {
        var environment = OptimizationService.Environment(clock: ManualClock(), transport: RecordingFetchTransport())
        environment.scripts = scripts
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 1), environment: environment)
        try await service.start()
        return service
    }

    @Test func aStartedServiceRoutesAsTheSharedCoreSays() async throws {
        let service = try await Self.startedService()
        let routing = service.experienceRouting.withLock { $0 }
        for method in ["identify", "page", "screen", "track"] {
            #expect(routing.route(method, payload: [:]) == .experience, "\(method)")
        }
        #expect(routing.route("trackView", payload: ["sticky": .bool(true)]) == .experienceByPayload)
        #expect(routing.route("trackView", payload: ["sticky": .bool(false)]) == .insights)
        #expect(routing.route("trackView", payload: [:]) == .insights)
        #expect(routing.route("trackView", payload: ["sticky": .string("true")]) == .insights, "only the value true")
        for method in ["trackClick", "trackHover", "trackFlagView"] {
            #expect(routing.route(method, payload: ["sticky": .bool(true)]) == .insights, "\(method)")
        }
        await service.shutdown()
    }

    @Test func swiftFollowsAChangedRuleInTheScripts() async throws {
        let rule = "Object.freeze([Object.freeze({ method: 'trackView', field: 'sticky', equals: true })])"
        let scripts = EmbeddedJSRuntime.scripts.map { script in
            guard script.path == "service/request-events.js" else { return script }
            #expect(script.source.contains(rule), "the rule as the test expects to find it")
            return EmbeddedScript(path: script.path, source: script.source.replacingOccurrences(
                of: rule, with: "Object.freeze([Object.freeze({ method: 'trackClick', field: 'pinned', equals: 1 })])"))
        }
        let service = try await Self.startedService(scripts: scripts)
        let routing = service.experienceRouting.withLock { $0 }
        #expect(routing.route("trackView", payload: ["sticky": .bool(true)]) == .insights)
        #expect(routing.route("trackClick", payload: ["pinned": try JSONValue(jsonText: "1")]) == .experienceByPayload)
        await service.shutdown()
    }

    @Test func aMalformedConfigureAnswerIsRefused() throws {
        let valid = try JSONValue(jsonText: #"{"experienceMethods":["page"],"experiencePayloadRoutes":[{"method":"trackView","field":"sticky","equals":true}]}"#)
        #expect(ExperienceRouting(configureAnswer: valid) == ExperienceRouting(
            methods: ["page"], payloadRoutes: [.init(method: "trackView", field: "sticky", equals: .bool(true))]))
        for text in [
            #"{"experienceMethods":["page"]}"#,
            #"{"experiencePayloadRoutes":[]}"#,
            #"{"experienceMethods":[1],"experiencePayloadRoutes":[]}"#,
            #"{"experienceMethods":[],"experiencePayloadRoutes":[{"method":"trackView","equals":true}]}"#,
            #"{"experienceMethods":[],"experiencePayloadRoutes":{}}"#,
        ] {
            #expect(ExperienceRouting(configureAnswer: try JSONValue(jsonText: text)) == nil, "\(text)")
        }
    }

    @Test func aScriptWhoseAnswerNamesNoRoutesStopsTheStart() async throws {
        let scripts = EmbeddedJSRuntime.scripts.map { script in
            guard script.path == "service/service-bridge.js" else { return script }
            return EmbeddedScript(path: script.path, source: script.source.replacingOccurrences(
                of: ", experiencePayloadRoutes: ns.experiencePayloadRoutes", with: ""))
        }
        var environment = OptimizationService.Environment(clock: ManualClock(), transport: RecordingFetchTransport())
        environment.scripts = scripts
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 1), environment: environment)
        await #expect(throws: OptimizationError.self) { try await service.start() }
        await service.shutdown()
    }
}
