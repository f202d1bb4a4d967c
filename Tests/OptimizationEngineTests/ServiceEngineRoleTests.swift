import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import OptimizationTesting
import Testing

/// A service engine loads the service scripts and the core scripts they need: no visitor, no
/// `__bridge`; its resolution and its events go through `__service`.
@Suite("OptimizationService: engines of the service role")
struct ServiceEngineRoleTests {
    @Test func serviceEnginesHaveNoVisitorBridgeAndStillResolveAndSendEvents() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 2) { service in
                let engines = service.poolRuntimes.map(\.engine)
                #expect(engines.count == 2, "the pool only: delivery runs no engine")
                for engine in engines {
                    #expect(try engine.evaluate("typeof __bridge") == .string("undefined"))
                    #expect(try engine.evaluate("typeof __service.resolvePrepared") == .string("function"))
                }
                let selections = try SelectedOptimizations(json: VisitorData.newVisitor["experiences"]!)
                let resolved = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: selections)
                #expect(resolved.entryId == VisitorData.heroForNewVisitor)
                #expect(resolved.optimizationContextId != nil, "a matched resolve still gets its context")
                let again = service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: selections)
                #expect(again.optimizationContextId != nil && again.optimizationContextId != resolved.optimizationContextId)
                let page = try await service.forRequest(RequestOptions(consent: true)).page()
                #expect(page.accepted)
            }
        }
    }

    @Test func clientEnginesLoadTheClientRoleOnly() throws {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        try client.initialize(config: OptimizationConfig(clientId: "c"))
        defer { client.destroy() }
        let engine = try #require(client.currentRuntime?.engine)
        #expect(try engine.evaluate("typeof __service") == .string("undefined"))
        #expect(try engine.evaluate("typeof __bridge.initialize") == .string("function"))
    }

    @Test func anInvalidDefaultLocaleIsAStartError() async throws {
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "org-1", locale: "*"), options: .init(engines: 1),
            environment: .init(transport: RecordingFetchTransport()))
        let error = await caughtError { try await service.start() }
        guard case .configError(let message) = error as? OptimizationError else {
            Issue.record("expected configError, got \(String(describing: error))")
            return
        }
        #expect(message.contains("locale must be a valid locale string"), "\(message)")
    }
}
