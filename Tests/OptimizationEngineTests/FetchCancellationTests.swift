import Foundation
import JavaScriptHost
import Testing
import Optimization
import OptimizationTestSupport
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationEngine
import OptimizationTesting

/// A request the service gives up on is cancelled down to the socket: the local API server
/// (an independent HTTP double) must see its connection closed long before the transport's own
/// deadline, which these tests set to an hour.
///
/// Budgets run on a ``ManualClock`` (no timer depends on real time). The only real-time bounds
/// are the waits for the server to see connections close (``closeBound``): a cancelled request
/// closes its connection within milliseconds, and a wait ends as soon as it has; the bound only
/// decides when a connection that stays open is a failure, well before the transport's deadline
/// would close it.
@Suite("Fetch cancellation: a cancelled request is cancelled")
struct FetchCancellationTests {
    /// How long the server may take to see a cancelled request's connection close: the suite's
    /// ``hangBound`` (the cancellation's task can be queued behind every other test's work), six
    /// times shorter than ``transportDeadlineMilliseconds``.
    static let closeBound = hangBound
    /// The transport's own request deadline, which would close a connection nobody cancelled.
    static let transportDeadlineMilliseconds = 3_600_000

    @Test func aTimedOutPageClosesItsConnectionAtTheServer() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            server.enqueue(.hang, for: .experience)
            try await withService(server, clock: clock, experienceTimeout: .milliseconds(200), transportTimeoutMilliseconds: Self.transportDeadlineMilliseconds) { service in
                let request = service.forRequest(RequestOptions(consent: true))
                let call = Task { try await request.page() }
                let sent = try await server.waitForRequests(count: 1, matching: .experience)
                let connectionID = sent[0].connectionID

                let expired = ContinuousClock.now
                clock.advance(by: .milliseconds(200))
                let result = try await call.value
                #expect(result.accepted && result.outcome == .timedOut(after: .milliseconds(200)))

                let seen = try await server.waitUntil(timeout: Self.closeBound, description: "the timed-out request's connection closed") {
                    $0.connections[connectionID - 1].closedAt != nil
                }
                let closedAfter = seen.connections[connectionID - 1].closedAt! - expired
                #expect(server.openConnectionCount == 0)
                print("fetch cancellation: budget 200 ms, transport deadline 1 h; the server saw the connection close \(closedAfter) after the budget expired")
            }
        }
    }

    @Test func serviceShutdownCancelsExperienceCallsInFlight() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // An injected transport the service does not shut down: only the cancellation of the
            // Experience call in flight can close the connection.
            let transport = try makeTransport(server)
            do {
                server.enqueue(.hang, for: .experience)
                let service = makeService(server, transport: transport, experienceTimeout: .milliseconds(1500))
                try await service.start()
                let call = Task { try await service.forRequest(RequestOptions(consent: true)).page() }
                let sent = try await server.waitForRequests(count: 1, matching: .experience)
                let stopping = ContinuousClock.now
                await service.shutdown()
                await #expect(throws: OptimizationError.shutDown) { try await call.value }
                let seen = try await server.waitUntil(timeout: Self.closeBound, description: "the in-flight request's connection closed") {
                    $0.connections[sent[0].connectionID - 1].closedAt != nil
                }
                print("fetch cancellation: shutdown closed the in-flight request's connection \(seen.connections[sent[0].connectionID - 1].closedAt! - stopping) after shutdown began")
            } catch {
                try? await transport.shutdown()
                throw error
            }
            try await transport.shutdown()
        }
    }

    /// The load check: 50 page() calls with a 200 ms budget, ten every 200 ms of the service
    /// clock (one second), against an Experience API that never answers, with a transport
    /// deadline of an hour and a connection pool large enough to hold them all. Each wave's
    /// connections are closed once its budget has run out, before the next wave starts, so open
    /// connections at the server peak at rate × budget (10), not rate × deadline (all 50).
    @Test func anOutageLeavesNoConnectionsBehind() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let transport = try makeTransport(server, maximumConnectionsPerHost: 64)
            let clock = ManualClock()
            let calls = 50, perWave = 10, budget = 200
            server.enqueue(contentsOf: Array(repeating: .hang, count: calls), for: .experience)
            // The circuit breaker would stop sending after a few timeouts; this check wants
            // every call to reach the API.
            let service = makeService(
                server, clock: clock, transport: transport, experienceTimeout: .milliseconds(budget),
                queuePolicy: QueuePolicy(flush: QueueFlushPolicy(maxConsecutiveFailures: 1_000)))
            do {
                try await service.start()
                let started = ContinuousClock.now
                var openAfterEachWave: [Int] = []
                var lastBudget = ContinuousClock.now
                var lastSeen: LocalAPIServerSnapshot?
                for wave in 1...(calls / perWave) {
                    let tasks = (0..<perWave).map { _ in
                        Task { try await service.forRequest(RequestOptions(consent: true)).page() }
                    }
                    // Every call of this wave has reached the API before its budget runs out.
                    try await server.waitForRequests(count: wave * perWave, matching: .experience, timeout: Self.closeBound)
                    openAfterEachWave.append(server.openConnectionCount)
                    lastBudget = ContinuousClock.now
                    clock.advance(by: .milliseconds(Double(budget)))
                    for task in tasks {
                        let result = try await task.value
                        #expect(result.outcome == .timedOut(after: .milliseconds(budget)))
                    }
                    // Without cancellation this wave's connections stay open until the transport's
                    // deadline: the wait fails at the bound.
                    lastSeen = try await server.waitUntil(timeout: Self.closeBound, description: "wave \(wave)'s connections closed") {
                        $0.openConnectionCount == 0
                    }
                }
                let allClosedAfter = lastSeen?.connections.compactMap(\.closedAt).max().map { $0 - lastBudget }
                #expect(server.acceptedConnectionCount == calls, "one connection per hung request")
                #expect(server.peakOpenConnectionCount == perWave, "peak \(server.peakOpenConnectionCount) open connections")
                print("""
                    fetch cancellation load check: \(calls) page() calls, budget \(budget) ms, \(perWave) per \(budget) ms of service clock, \
                    transport deadline 1 h: open after each wave \(openAfterEachWave), peak \(server.peakOpenConnectionCount), \
                    last close \(allClosedAfter.map { "\($0)" } ?? "n/a") after the last budget, \
                    run took \(ContinuousClock.now - started)
                    """)
                await service.shutdown()
            } catch {
                await service.shutdown()
                try? await transport.shutdown()
                throw error
            }
            try await transport.shutdown()
        }
    }

    // MARK: Helpers

    private func makeTransport(_ server: LocalOptimizationAPIServer, maximumConnectionsPerHost: Int = 8) throws -> HTTPFetchTransport {
        try HTTPFetchTransport(configuration: .init(
            allowedBaseURLs: [server.experienceBaseURL, server.insightsBaseURL],
            requestTimeout: .milliseconds(Self.transportDeadlineMilliseconds), maximumConnectionsPerHost: maximumConnectionsPerHost))
    }

    /// A service against `server` with an injected transport it does not own (nor shut down).
    private func makeService(
        _ server: LocalOptimizationAPIServer, clock: ManualClock = ManualClock(), transport: HTTPFetchTransport,
        experienceTimeout: Duration, queuePolicy: QueuePolicy? = nil
    ) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1",
                api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL),
                queuePolicy: queuePolicy),
            options: .init(engines: 2, experienceTimeout: experienceTimeout),
            environment: .init(clock: clock, transport: transport))
    }

    /// Polls `condition` (in-process effects that follow a cancellation already seen) for at most
    /// `bound`; records an issue when it never holds.
    private func within(_ bound: Duration, _ description: String, _ condition: @Sendable () -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within \(bound): \(description)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
