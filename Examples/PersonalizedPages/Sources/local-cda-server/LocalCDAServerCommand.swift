import ArgumentParser
import Foundation
import Logging
import OptimizationTesting
import ServiceLifecycle

/// `local-cda-server`: the library's test-kit Content Delivery API double
/// (`LocalContentfulDeliveryServer`) on an ephemeral 127.0.0.1 port, serving the entries of a
/// directory (default: the repository's `Fixtures/space/entries`), for running replicas of the
/// example with live content. Prints the settings `personalized-pages` reads (one `KEY=value`
/// line each), then serves until SIGTERM/SIGINT.
@main
struct LocalCDAServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local-cda-server",
        abstract: "Run the Optimization test kit's local Content Delivery API server on loopback.")

    @Option(help: "Directory of CDA collection files or entries to serve.")
    var entries: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/space/entries").path

    func run() async throws {
        let logger = Logger(label: "local-cda-server", factory: { StreamLogHandler.standardError(label: $0) })
        let server = LocalContentfulDeliveryServer()
        try server.space.load(directory: URL(fileURLWithPath: entries, isDirectory: true))
        try await server.start()
        // Unbuffered, so a script reading a pipe sees the lines at once.
        try? FileHandle.standardOutput.write(contentsOf: Data("""
            PP_CONTENTFUL_BASE_URL=\(server.baseURL)
            PP_CONTENTFUL_SPACE=\(server.space.spaceId)
            CONTENTFUL_ACCESS_TOKEN=\(server.space.accessToken)

            """.utf8))
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: LocalCDAService(server: server))],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}

/// Keeps the started server until graceful shutdown, then stops it.
struct LocalCDAService: Service {
    let server: LocalContentfulDeliveryServer

    func run() async throws {
        try? await gracefulShutdown()
        try await server.stop()
    }
}
