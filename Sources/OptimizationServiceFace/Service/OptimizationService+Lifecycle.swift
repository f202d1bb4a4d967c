import ServiceLifecycle

/// `OptimizationService` as a swift-service-lifecycle `Service`: add it to the application's
/// `ServiceGroup` next to the HTTP server.
///
/// `run()` starts the service if it is not running yet, keeps engines and the delivery path
/// alive until graceful shutdown (or cancellation), then stops accepting events (event calls
/// throw `OptimizationError/shutDown`), flushes what is queued within
/// ``OptimizationService/Options/shutdownFlushTimeout`` and shuts engines and connections down.
/// With SIGTERM as the group's graceful-shutdown signal, nothing accepted before the signal is
/// lost while the API is reachable.
extension OptimizationService: Service {
    public func run() async throws {
        if !isRunning { try await start() }
        // Returns on graceful shutdown; throws on cancellation: shut down either way.
        try? await gracefulShutdown()
        await shutdown()
    }
}
