import HostPlatform
import Optimization

extension LocalOptimizationAPIServer {
    /// Starts a server, runs `body` with it and stops it, also when `body` throws (the error of
    /// `body` is rethrown; a failure to stop after it is ignored).
    /// - Throws: what starting or stopping the server throws, or what `body` throws.
    public static func withRunning<T>(_ body: (LocalOptimizationAPIServer) async throws -> T) async throws -> T {
        let server = LocalOptimizationAPIServer()
        try await server.start()
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body(server)) } catch { outcome = .failure(error) }
        if case .success = outcome {
            try await server.stop()
        } else {
            try? await server.stop()
        }
        return try outcome.get()
    }

    /// An `OptimizationService` (not started) whose Experience and Insights calls go to this
    /// server, for a web integration's tests: one engine, every timer on `clock` (so nothing
    /// flushes until the clock moves or the service shuts down), and an Experience timeout of
    /// 600 s (a hang bound only, on a clock that does not move).
    /// - Parameters:
    ///   - clientId: the configuration's client id.
    ///   - allowedEventTypes: the events allowed before consent; nil is the library's default.
    ///   - clock: the clock of every timer.
    public func makeService(clientId: String, allowedEventTypes: [String]? = nil, clock: ManualClock) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: clientId, allowedEventTypes: allowedEventTypes,
                api: OptimizationAPIConfig(experienceBaseURL: experienceBaseURL, insightsBaseURL: insightsBaseURL)),
            options: .init(engines: 1, experienceTimeout: .seconds(600)),
            environment: .init(clock: clock))
    }
}
