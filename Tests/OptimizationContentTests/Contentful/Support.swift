import OptimizationTestSupport
import Foundation
import JavaScriptHost
import Optimization

/// A client initialized with a test configuration and a manual clock, for comparing resolutions.
func makeClient(_ config: OptimizationConfig = OptimizationConfig(clientId: "test-client")) throws -> OptimizationClient {
    let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
    try client.initialize(config: config)
    return client
}
