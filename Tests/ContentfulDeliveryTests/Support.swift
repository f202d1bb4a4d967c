import OptimizationTestSupport
import Foundation
import JavaScriptHost
import Optimization

/// The Trailhead Outfitters test space (`Fixtures/space`): CDA responses and a new visitor's selections.
let spaceFixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/space")

/// A client initialized with a test configuration and a manual clock, for comparing resolutions.
func makeClient(_ config: OptimizationConfig = OptimizationConfig(clientId: "test-client")) throws -> OptimizationClient {
    let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
    try client.initialize(config: config)
    return client
}
