import Logging

/// Request-scoped log metadata: while an ``OptimizationRequest`` call runs inside an engine, every
/// line the engine or the shared core logs (and every HTTP request it starts) carries
/// `request-id`, through a task-local read by the service's `Logger.MetadataProvider`. Never the
/// profile.
enum RequestLogging {
    @TaskLocal static var requestId: String?

    /// Adds `request-id` while a request call is running.
    static let metadataProvider = Logger.MetadataProvider {
        guard let requestId else { return [:] }
        return ["request-id": "\(requestId)"]
    }

    /// `logger` with ``metadataProvider`` added to its handler's own provider.
    static func scoped(_ logger: Logger) -> Logger {
        var scoped = logger
        scoped.handler.metadataProvider = .multiplex([logger.handler.metadataProvider, metadataProvider].compactMap { $0 })
        return scoped
    }
}
