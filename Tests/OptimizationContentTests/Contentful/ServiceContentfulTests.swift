import Foundation
import JavaScriptHost
@testable import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// The request-bound object fetches and resolves in one call, with the request's selections and
/// locale; the content is shared by every request.
@Suite("OptimizationRequest.fetchOptimizedEntry")
struct ServiceContentfulTests {
    @Test func fetchesWithTheRequestsLocaleAndResolvesWithItsSelections() async throws {
        let selections = try SelectedOptimizations(
            jsonData: Data(contentsOf: spaceFixturesDirectory.appendingPathComponent("experience/new-visitor.json")))
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "org-1", locale: "fr-FR"), options: .init(engines: 2),
            environment: .init(transport: UnconfiguredFetchTransport()))
        try await service.start()
        try await withLocalCDAServer { server in
            try await withCDASource(server) { source in
                let visitor = service.forRequest(RequestOptions(locale: "en_US", selectedOptimizations: selections))
                let resolved = try await visitor.fetchOptimizedEntry(id: "hero-home", from: source)
                #expect(resolved.entryId == "hero-home-europe" && resolved.selectedOptimization != nil)
                #expect(server.entryRequests.first?.queryValue("locale") == "en-US", "the request's locale, normalised")
                #expect(visitor.renderedVariants == ["hero-home": "hero-home-europe"])

                // Another visitor with nothing selected shares the cached content (no request).
                let other = service.forRequest(RequestOptions(locale: "en-US"))
                let baseline = try await other.fetchOptimizedEntry(id: "hero-home", from: source)
                #expect(baseline.entryId == "hero-home" && baseline.selectedOptimization == nil)
                #expect(server.entryRequests.count == 1, "content is cached across requests")
                // The service's locale when the request has none (this space has only en-US).
                await #expect(throws: ContentfulDeliveryError.self) {
                    try await service.forRequest().fetchOptimizedEntry(id: "hero-home", from: source)
                }
                #expect(server.entryRequests.last?.queryValue("locale") == "fr-FR")
                await #expect(throws: ContentfulDeliveryError.entryNotFound(id: "missing")) {
                    try await other.fetchOptimizedEntry(id: "missing", from: source)
                }
            }
        }
        await service.shutdown()
    }
}
