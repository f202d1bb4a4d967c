import JavaScriptHost
@testable import OptimizationEngine
import Optimization
import OptimizationTestSupport
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// ``OptimizationService/waitUntilRunning()``: a readiness signal to await.
@Suite("Service readiness", .hangBound)
struct ServiceReadinessTests {
    static func service(scripts: [EmbeddedScript]? = nil) -> OptimizationService {
        var environment = OptimizationService.Environment(clock: ManualClock(), transport: RecordingFetchTransport())
        if let scripts { environment.scripts = scripts }
        return OptimizationService(config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 1), environment: environment)
    }

    /// Waits (yielding, no timer) until `count` tasks wait on `service`.
    static func waiters(_ count: Int, on service: OptimizationService) async throws {
        try await yieldUntil { service.readiness.waiterCount >= count }
    }

    @Test func aWaiterResumesWhenTheServiceRunsAndLaterOnesReturnAtOnce() async throws {
        let service = Self.service()
        let early = Task { await service.waitUntilRunning() }
        try await Self.waiters(1, on: service)
        try await service.start()
        #expect(await early.value)
        #expect(await service.waitUntilRunning(), "running: at once")
        await service.shutdown()
        #expect(await service.waitUntilRunning() == false, "shut down: at once")
    }

    @Test func aFailedStartKeepsWaitersWaitingAndShutdownReleasesThem() async throws {
        let broken = EmbeddedJSRuntime.scripts.map { script in
            script.path == "core/resolver.js" ? EmbeddedScript(path: script.path, source: "throw new Error('broken build');") : script
        }
        let service = Self.service(scripts: broken)
        let waiter = Task { await service.waitUntilRunning() }
        try await Self.waiters(1, on: service)
        await #expect(throws: OptimizationError.self) { try await service.start() }
        #expect(service.readiness.waiterCount == 1, "a failed start leaves the waiter waiting")
        await service.shutdown()
        #expect(await waiter.value == false)
    }

    @Test func aCancelledWaiterReturnsFalse() async throws {
        let service = Self.service()
        let waiter = Task { await service.waitUntilRunning() }
        try await Self.waiters(1, on: service)
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(service.readiness.waiterCount == 0)
    }
}
