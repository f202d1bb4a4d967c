import ArgumentParser
import Foundation
import Logging
import OptimizationTesting
import ServiceLifecycle

/// `local-api-server`: the library's test-kit Experience/Insights API double
/// (`LocalOptimizationAPIServer`) on an ephemeral 127.0.0.1 port, for running the example without
/// the real APIs. Prints its base URLs on stdout (one `KEY=value` line each, the environment
/// variables `personalized-pages` reads), then serves until SIGTERM/SIGINT.
@main
struct LocalAPIServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local-api-server",
        abstract: "Run the Optimization test kit's local Experience/Insights API server on loopback.")

    func run() async throws {
        let logger = Logger(label: "local-api-server", factory: { StreamLogHandler.standardError(label: $0) })
        let server = LocalOptimizationAPIServer()
        try await server.start()
        // Unbuffered, so a script reading a pipe sees the lines at once.
        try? FileHandle.standardOutput.write(contentsOf: Data("""
            PP_EXPERIENCE_BASE_URL=\(server.experienceBaseURL)
            PP_INSIGHTS_BASE_URL=\(server.insightsBaseURL)

            """.utf8))
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: LocalAPIService(server: server))],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Keeps the started server until graceful shutdown, then stops it.
struct LocalAPIService: Service {
    let server: LocalOptimizationAPIServer

    func run() async throws {
        try? await gracefulShutdown()
        try await server.stop()
    }
}
