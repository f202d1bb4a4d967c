@testable import OptimizationServiceDelivery
import Foundation
import JavaScriptHost
import Logging
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Synchronization
import Testing

/// A stored event the delivery queue refuses (its row damaged in the store): given back alone,
/// moved to the store's dead letters after `SharedOutbox.deadLetterAfterRefusals` refusals,
/// and never holding up or duplicating the events claimed with it.
@Suite("OptimizationService: dead letters of a shared outbox")
struct ServiceSharedOutboxDeadLetterTests {
    typealias Helpers = ServiceSharedOutboxTests

    /// Damaged payloads: JSON but not a `{profile, event}` item, and not JSON at all (cut short).
    static let damagedPayloads = [#"{"profile":{"id":"visitor-0"},"event":42}"#, #"{"profile":{"id":"visitor-0"},"event":{"#]

    /// A replica on `outbox` that sends to `server`, with two delivery shards.
    static func replica(
        _ name: String, server: LocalOptimizationAPIServer, outbox: InMemorySharedOutbox, clock: ManualClock,
        deadLetterAfterRefusals: Int = 3, metrics: TestMetrics = TestMetrics(), logs: LogRecorder = LogRecorder()
    ) -> OptimizationService {
        var logger = logs.logger
        logger.logLevel = .trace
        return OptimizationService(
            config: OptimizationConfig(
                clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
            options: .init(
                engines: 1, deliveryShards: 2, shutdownFlushTimeout: .seconds(30),
                sharedOutbox: SharedOutbox(
                    store: outbox.store(replica: name), pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5),
                    retryAfterFailure: .seconds(5), deadLetterAfterRefusals: deadLetterAfterRefusals)),
            environment: .init(logger: logger, clock: clock, metricsFactory: metrics))
    }

    /// Replica "a" (which cannot deliver, its clock standing still) stores six clicks of two
    /// visitors and holds them; the third stored event's row is then damaged and the leases run
    /// out, so another replica claims all six.
    /// - Returns: "a" (to shut down) and the damaged event's `messageId`.
    static func sixStoredClicksOneDamaged(
        outbox: InMemorySharedOutbox, clock: ManualClock, payload: String
    ) async throws -> (OptimizationService, String) {
        let a = try await Helpers.replicaHoldingClicks(6, outbox: outbox, clock: ManualClock())
        let damaged = outbox.rows[2].record.messageId
        #expect(outbox.corruptPayload(ofMessage: damaged, with: Array(payload.utf8)))
        clock.advance(by: .seconds(31))   // past A's leases (30 s)
        return (a, damaged)
    }

    @Test(arguments: damagedPayloads)
    func aDamagedEventIsDeadLetteredAfterThreeRefusalsWhileTheOthersAreDeliveredOnce(payload: String) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock, leaseDuration: .seconds(30))
            let (a, damaged) = try await Self.sixStoredClicksOneDamaged(outbox: outbox, clock: clock, payload: payload)
            let (metrics, logs) = (TestMetrics(), LogRecorder())
            let b = Self.replica("b", server: server, outbox: outbox, clock: clock, metrics: metrics, logs: logs)
            try await b.start()
            for _ in 0..<3 { await b.flush() }   // at least three claims of the damaged event

            let delivered = Helpers.deliveredEvents(server)
            #expect(delivered.count == 5, "every event but the damaged one was delivered")
            #expect(Set(delivered.map(\.messageId)).count == delivered.count, "none twice")
            #expect(Set(delivered.map(\.messageId)) == Set(outbox.appendedMessageIds).subtracting([damaged]))
            #expect(outbox.rows.isEmpty, "nothing is left in the queue: the damaged event does not block it")
            #expect(outbox.deadLetters.map(\.record.messageId) == [damaged])
            #expect(try metrics.expectCounter("optimization_shared_outbox_dead_letters_total").totalValue == 1)
            let deadLetterLines = logs.all.filter { $0.level == .error && $0.message.contains("dead letters") }
            #expect(deadLetterLines.count == 1, "one log line")
            #expect(!logs.all.contains { record in
                record.level > .debug && record.metadata.values.contains { "\($0)".contains("visitor-") }
            }, "no profile id above debug")
            await b.shutdown()
            await a.shutdown()
            #expect(Helpers.deliveredEvents(server).count == 5, "nor at shutdown")
        }
    }

    /// A replica's view of an in-memory outbox whose `release` throws while ``failReleases`` is
    /// set (the store was away just then).
    final class FlakyReleases: SharedOutboxStore {
        let inner: any SharedOutboxStore
        let failReleases = Atomic<Bool>(false)

        struct ReleaseRefused: Error {}

        init(_ inner: some SharedOutboxStore) { self.inner = inner }

        func append(_ events: [OutboxEvent]) async throws -> [OutboxRecord] { try await inner.append(events) }
        func claim(queue: EventQueueKind, limit: Int) async throws -> [OutboxRecord] { try await inner.claim(queue: queue, limit: limit) }
        func acknowledge(_ sequences: [UInt64]) async throws -> Int { try await inner.acknowledge(sequences) }
        func release(_ sequences: [UInt64]) async throws {
            if failReleases.load(ordering: .relaxed) { throw ReleaseRefused() }
            try await inner.release(sequences)
        }
        func deadLetter(_ sequences: [UInt64]) async throws -> Int { try await inner.deadLetter(sequences) }
        func renewLeases() async throws { try await inner.renewLeases() }
        func eraseProfile(_ profileId: String) async throws -> Int { try await inner.eraseProfile(profileId) }
        func erasures(after cursor: UInt64?) async throws -> SharedOutboxErasures { try await inner.erasures(after: cursor) }
        func storedSequences(among sequences: [UInt64]) async throws -> [UInt64] { try await inner.storedSequences(among: sequences) }
    }

    @Test func aGiveBackThatFailedIsRetriedRatherThanItsLeaseRenewedForEver() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock, leaseDuration: .seconds(30))
            let (a, damaged) = try await Self.sixStoredClicksOneDamaged(outbox: outbox, clock: clock, payload: Self.damagedPayloads[0])
            // B keeps the five others queued (the API fails), so it keeps renewing its leases.
            server.enqueue(contentsOf: Array(repeating: .status(503), count: 200), for: .insights)
            let store = FlakyReleases(outbox.store(replica: "b"))
            store.failReleases.store(true, ordering: .relaxed)
            let b = OptimizationService(
                config: OptimizationConfig(
                    clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
                options: .init(
                    engines: 1, deliveryShards: 2, shutdownFlushTimeout: .seconds(30),
                    sharedOutbox: SharedOutbox(
                        store: store, pollInterval: .seconds(1), leaseRenewalInterval: .seconds(5), retryAfterFailure: .seconds(5),
                        deadLetterAfterRefusals: 1_000)),
                environment: .init(clock: clock))
            try await b.start()
            await b.flush()
            #expect(outbox.rows.first { $0.record.messageId == damaged }?.owner == "b", "the give-back failed: B still holds its lease")
            store.failReleases.store(false, ordering: .relaxed)
            for _ in 0..<12 {
                clock.advance(by: .seconds(6))   // past a renewal interval (5 s) each time
                await b.flush()
            }
            #expect(b.queuedEventCount == 5, "B still holds the others")
            let row = outbox.rows.first { $0.record.messageId == damaged }
            #expect(row?.owner == nil && row?.leaseExpiresAt == nil, "the give-back was retried: no lease on it")
            server.clearScript()
            await b.shutdown()
            await a.shutdown()
        }
    }

    @Test func aRefusedEventIsGivenBackSoItsLeaseIsNotRenewedAndAnotherReplicaCanClaimIt() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let outbox = InMemorySharedOutbox(clock: clock, leaseDuration: .seconds(30))
            let (a, damaged) = try await Self.sixStoredClicksOneDamaged(outbox: outbox, clock: clock, payload: Self.damagedPayloads[0])
            let b = Self.replica("b", server: server, outbox: outbox, clock: clock, deadLetterAfterRefusals: 1_000)
            try await b.start()
            await b.flush()
            #expect(Helpers.deliveredEvents(server).count == 5)
            #expect(outbox.rows.map(\.record.messageId) == [damaged])
            #expect(outbox.rows.first?.owner == nil, "given back: B holds no lease on it")
            for _ in 0..<12 {
                clock.advance(by: .seconds(6))   // past a renewal interval (5 s) each time
                await b.flush()
            }
            #expect(outbox.rows.first?.owner == nil, "a minute later B still holds no lease on it")
            let claimed = try await outbox.store(replica: "c").claim(queue: .insights, limit: 10)
            #expect(claimed.map(\.messageId) == [damaged], "another replica can claim it")
            #expect(outbox.deadLetters.isEmpty)
            await b.shutdown()
            await a.shutdown()
        }
    }
}
