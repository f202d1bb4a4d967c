extension LocalOptimizationAPIServer {
    /// An `OptimizationAPIConfig` pointing both APIs at this server (read it after ``start()``:
    /// the port is in the URLs). With a nil client transport, `initialize` then creates an
    /// `HTTPFetchTransport` allow-listing exactly this server's two mounts.
    ///
    /// ```swift
    /// try client.initialize(config: OptimizationConfig(clientId: "my-client", api: server.apiConfig()))
    /// ```
    public func apiConfig(requestTimeout: Duration? = nil) -> OptimizationAPIConfig {
        OptimizationAPIConfig(
            experienceBaseURL: experienceBaseURL, insightsBaseURL: insightsBaseURL,
            requestTimeout: requestTimeout)
    }
}
