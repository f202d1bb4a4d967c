import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTesting
import Synchronization
import Testing
import OptimizationClientFace
import OptimizationServiceFace
import OptimizationEngine

/// A transport allowed to reach `server`'s Experience and Insights mounts, always shut down.
package func withHTTPTransport<T>(
    for server: LocalOptimizationAPIServer, timeoutMilliseconds: Int = 3000, maximumResponseBodyBytes: Int = 10 << 20,
    _ body: (HTTPFetchTransport) async throws -> T
) async throws -> T {
    let transport = try HTTPFetchTransport(
        configuration: .init(
            allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL],
            requestTimeout: .milliseconds(timeoutMilliseconds), maximumResponseBodyBytes: maximumResponseBodyBytes))
    do {
        let result = try await body(transport)
        try await transport.shutdown()
        return result
    } catch {
        try? await transport.shutdown()
        throw error
    }
}

/// `<experienceBase>v2/organizations/org/environments/main/<path>`.
package func experienceURL(_ server: LocalOptimizationAPIServer, _ path: String) -> String {
    HostAllowList.join(base: server.experienceBaseURL, path: "v2/organizations/org/environments/main/" + path)
}

/// The error `operation` throws (nil when it returns).
package func caughtError(_ operation: () async throws -> Void) async -> (any Error)? {
    do {
        try await operation()
        return nil
    } catch {
        return error
    }
}

/// Answers every request 200 with an empty body (engines that never send anything).
package final class RecordingFetchTransport: FetchTransport, @unchecked Sendable {
    package init() {}
    package func send(_ request: FetchRequest) async throws -> FetchResponse {
        FetchResponse(status: 200, headers: [:], body: "")
    }
}
