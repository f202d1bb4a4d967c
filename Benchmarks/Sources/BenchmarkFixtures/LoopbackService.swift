import Optimization
import OptimizationTesting

/// A started service whose Experience and Insights APIs are the test kit's server on loopback
/// (answering at once, in this process), for the benchmarks that need real HTTP.
public struct LoopbackService: Sendable {
    /// The test kit's API server the service delivers to.
    public let server: LocalOptimizationAPIServer
    /// The started service.
    public let service: OptimizationService
    private let transport: HTTPFetchTransport

    /// Starts a server, a transport allowed to reach only it, and a service with `options` on
    /// them. Call ``stop()`` when done.
    public static func start(options: OptimizationService.Options) async throws -> LoopbackService {
        let server = LocalOptimizationAPIServer()
        try await server.start()
        let transport: HTTPFetchTransport
        do {
            transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL]))
        } catch {
            try? await server.stop()
            throw error
        }
        let service = OptimizationService(
            config: OptimizationConfig(
                clientId: "bench", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
            options: options, environment: .init(transport: transport))
        do {
            try await service.start()
        } catch {
            try? await transport.shutdown()
            try? await server.stop()
            throw error
        }
        return LoopbackService(server: server, service: service, transport: transport)
    }

    /// Shuts the service down (flushing its queues), then the transport and the server.
    public func stop() async {
        await service.shutdown()
        try? await transport.shutdown()
        try? await server.stop()
    }

    /// Runs `body` with a started server, transport and service, and stops all three after it.
    /// From synchronous code only (it waits with ``blocking(_:)``).
    public static func with<Result>(options: OptimizationService.Options, _ body: (LoopbackService) throws -> Result) throws -> Result {
        let loopback = try blocking { try await start(options: options) }
        defer { blockingUntilDone { await loopback.stop() } }
        return try body(loopback)
    }
}
