import CoreMetrics
import Foundation
import Testing
import JavaScriptHost
import Logging
import Tracing
import Optimization
import OptimizationClientFace
import OptimizationServiceFace
import OptimizationEngine
import OptimizationTesting

/// Experience `data` of the project's fixtures: a new visitor (hero → 5pNs…), an identified
/// visitor (hero → 2xWc…) and a visitor with no hero experience (hero → baseline).
package enum VisitorData {
    package static let newVisitor = try! JSONValue(jsonData: try! fixtureData("selections/new-visitor.json"))["data"]!
    package static let identified = try! JSONValue(jsonData: try! fixtureData("selections/identified-visitor.json"))["data"]!
    package static let noHero: JSONValue = ["profile": ["id": "x"], "experiences": try! JSONValue(jsonData: try! fixtureData("selections/no-hero-experiences.json")), "changes": []]
    package static let hero = try! ContentfulEntry(jsonData: try! fixtureData("entries/hero-optimized.json"))
    package static let heroBaselineID = "3kPfV7sQy1ZcN0aRbW4xLm"
    package static let heroForNewVisitor = "5pNs7JcXq2LmRb9VtKw1Hz"
    package static let heroForIdentified = "2xWcL5nRg8HtVq0JpZs4Ke"
}

/// Starts a service against `server` (on `clock`) for the duration of `body`, and always shuts
/// it down.
package func withService<T>(
    _ server: LocalOptimizationAPIServer, clock: ManualClock = ManualClock(), engines: Int = 2, deliveryShards: Int? = nil,
    allowedEventTypes: [String]? = nil, queuePolicy: QueuePolicy? = nil, experienceTimeout: Duration = .milliseconds(1500),
    logger: Logger? = nil, transportTimeoutMilliseconds: Int = 30_000,
    metrics: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil,
    _ body: (OptimizationService) async throws -> T
) async throws -> T {
    let service = makeService(
        server, clock: clock, engines: engines, deliveryShards: deliveryShards, allowedEventTypes: allowedEventTypes, queuePolicy: queuePolicy,
        experienceTimeout: experienceTimeout, logger: logger,
        transportTimeoutMilliseconds: transportTimeoutMilliseconds, metrics: metrics, tracer: tracer)
    do {
        try await service.start()
        let result = try await body(service)
        await service.shutdown()
        return result
    } catch {
        await service.shutdown()
        throw error
    }
}

/// A service against `server` (not started), with the HTTP transport it creates and owns.
package func makeService(
    _ server: LocalOptimizationAPIServer, clock: ManualClock = ManualClock(), engines: Int = 2, deliveryShards: Int? = nil,
    allowedEventTypes: [String]? = nil, queuePolicy: QueuePolicy? = nil, experienceTimeout: Duration = .milliseconds(1500),
    logger: Logger? = nil, transportTimeoutMilliseconds: Int = 30_000,
    metrics: (any MetricsFactory)? = nil, tracer: (any Tracer)? = nil
) -> OptimizationService {
    var environment = OptimizationService.Environment(clock: clock, metricsFactory: metrics, tracer: tracer)
    if let logger { environment.logger = logger }
    return OptimizationService(
        config: OptimizationConfig(
            clientId: "org-1", allowedEventTypes: allowedEventTypes,
            api: OptimizationAPIConfig(
            experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL,
            requestTimeout: .milliseconds(transportTimeoutMilliseconds)),
            queuePolicy: queuePolicy),
        options: .init(engines: engines, experienceTimeout: experienceTimeout, deliveryShards: deliveryShards),
        environment: environment)
}

extension OptimizationService {
    /// A probe of ``blockedEvents`` for tests.
    package func blockedProbe() -> StreamProbe<BlockedEvent> {
        let broadcaster = blockedEventBroadcaster
        return StreamProbe(blockedEvents) { broadcaster.yieldedCount }
    }

    /// A probe of ``queueEvents`` for tests.
    package func queueProbe() -> StreamProbe<QueueEvent> {
        let broadcaster = queueEventBroadcaster
        return StreamProbe(queueEvents) { broadcaster.yieldedCount }
    }
}

/// The bound of every wait in the library's tests that only catches a hang
/// (`OptimizationTesting.defaultHangBound`, 10 minutes).
package let hangBound: Duration = defaultHangBound

/// Waits until `condition` holds: for effects inside this process that follow an answer the
/// test already saw (a response being processed), never for a timer. The bound,
/// ``hangBound``, only catches a hang.
package func eventually(_ description: String, _ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + hangBound
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for: \(description)")
            return
        }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// Yields until `condition` holds, for a state another task of this test reaches without a timer
/// (a waiter registered, a timer armed on a manual clock). Throws `CancellationError` when the
/// test is cancelled (its suite's time limit, ``Testing/Trait/hangBound``), so a wait whose
/// condition never comes ends as a failure instead of spinning on.
package func yieldUntil(_ condition: () -> Bool) async throws {
    while !condition() {
        try Task.checkCancellation()
        await Task.yield()
    }
}

extension Trait where Self == TimeLimitTrait {
    /// A suite's time limit: the same 10 minutes as ``hangBound``, only ever reached by a hang.
    package static var hangBound: Self { .timeLimit(.minutes(10)) }
}
