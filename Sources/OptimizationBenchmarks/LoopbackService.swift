import Optimization
import OptimizationTesting

/// A started service whose Experience and Insights APIs are the test kit's server on loopback
/// (answering at once, in this process), for the benchmarks that need real HTTP.
struct LoopbackService {
    let server: LocalOptimizationAPIServer
    let service: OptimizationService

    /// Runs `body` with a started server, transport and service, and stops all three after it.
    static func with<Result>(options: OptimizationService.Options, _ body: (LoopbackService) throws -> Result) throws -> Result {
        let server = LocalOptimizationAPIServer()
        try blocking { try await server.start() }
        defer { try? blocking { try await server.stop() } }
        let transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL]))
        defer { try? blocking { try await transport.shutdown() } }
        let service = OptimizationService(
            config: OptimizationConfig(
                clientId: "bench", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
            options: options, environment: .init(transport: transport))
        try blocking { try await service.start() }
        defer { blockingUntilDone { await service.shutdown() } }
        return try body(LoopbackService(server: server, service: service))
    }
}
