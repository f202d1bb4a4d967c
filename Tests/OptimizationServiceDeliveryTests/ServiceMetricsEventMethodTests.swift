import MetricsTestKit
import OptimizationEngine
import OptimizationServiceDelivery
import Testing

/// `optimization_events_total` counts every event method the faces offer: its dimensions come
/// from `EventMethod.allCases`, not a list of its own.
@Suite struct ServiceMetricsEventMethodTests {
    @Test(arguments: EventMethod.allCases)
    func everyEventMethodIsCounted(_ method: EventMethod) throws {
        let factory = TestMetrics()
        let metrics = ServiceMetrics(factory: factory)
        metrics.event(method.rawValue, accepted: true)
        metrics.event(method.rawValue, accepted: false)
        metrics.event(method.rawValue, accepted: false)
        let accepted = try factory.expectCounter("optimization_events_total", [("method", method.rawValue), ("result", "accepted")])
        let blocked = try factory.expectCounter("optimization_events_total", [("method", method.rawValue), ("result", "blocked")])
        #expect(accepted.totalValue == 1 && blocked.totalValue == 2)
    }
}
