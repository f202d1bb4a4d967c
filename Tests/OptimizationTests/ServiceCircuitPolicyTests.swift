import Foundation
import JavaScriptHost
@testable import Optimization
import OptimizationTesting
import Testing

/// The service's Experience circuit takes its thresholds from the shared core's queue flush
/// policy, where the defaults are stated once.
@Suite("OptimizationService circuit thresholds")
struct ServiceCircuitPolicyTests {
    static func service(_ policy: QueueFlushPolicy?) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: "http://127.0.0.1:1/experience/", insightsBaseURL: "http://127.0.0.1:1/insights/"),
                queuePolicy: policy.map { QueuePolicy(flush: $0) }),
            options: .init(engines: 1), environment: .init(clock: ManualClock()))
    }

    @Test func withoutAPolicyTheCircuitUsesTheCoresDefaults() async throws {
        let service = Self.service(nil)
        try await service.start()
        defer { Task { await service.shutdown() } }
        let engine = try #require(service.running?.delivery.runtime.engine)
        let defaults = try engine.evaluate("JSON.stringify(__optimization.queueFlushPolicy.DEFAULT_QUEUE_FLUSH_POLICY)")
        let policy = try JSONValue(jsonText: try #require(defaults.stringValue))
        #expect(service.circuit.maximumConsecutiveFailures == policy["maxConsecutiveFailures"]?.intValue)
        #expect(service.circuit.openMilliseconds == policy["circuitOpenMs"]?.doubleValue)
    }

    @Test func aConfiguredPolicyIsResolvedByTheCore() async throws {
        let service = Self.service(QueueFlushPolicy(maxConsecutiveFailures: 3, circuitOpenDuration: .milliseconds(5_000)))
        try await service.start()
        defer { Task { await service.shutdown() } }
        #expect(service.circuit.maximumConsecutiveFailures == 3)
        #expect(service.circuit.openMilliseconds == 5_000)
    }
}
