import Optimization
import Foundation
@testable import OptimizationPostgres
import PostgresNIO
import PostgresTestServer
import Synchronization
import Testing

/// An event whose message id is `id`.
private func event(_ id: String, profile: String? = nil) -> OutboxEvent {
    OutboxEvent(queue: .insights, messageId: id, profileId: profile, consent: true, acceptedAt: 1, payload: Array(#"{"id":"\#(id)"}"#.utf8))
}

/// A fake transaction for the coalescer: records the batches and deadlines it is given, holds the
/// first transaction until ``open()``, fails the transactions whose number is in `failing`
/// (1-based), and numbers the events of the others from 1.
private final class FakeCommits: Sendable {
    private struct State {
        var batches: [[String]] = []
        var deadlines: [ContinuousClock.Instant] = []
        var next: UInt64 = 1
    }
    private let state = Mutex(State())
    private let gate = AsyncStream<Void>.makeStream()
    private let failing: Set<Int>

    init(failing: Set<Int> = []) { self.failing = failing }

    var batches: [[String]] { state.withLock { $0.batches } }
    var deadlines: [ContinuousClock.Instant] { state.withLock { $0.deadlines } }

    /// Lets the first transaction end.
    func open() { gate.continuation.finish() }

    func commit(_ events: [OutboxEvent], deadline: ContinuousClock.Instant) async throws(PostgresIntegrationError) -> [OutboxRecord] {
        let number = state.withLock { state in
            state.batches.append(events.map(\.messageId))
            state.deadlines.append(deadline)
            return state.batches.count
        }
        if number == 1 { for await _ in gate.stream {} }
        if failing.contains(number) { throw .database(operation: "outbox append", detail: "refused") }
        return state.withLock { state in
            events.map { event in
                defer { state.next += 1 }
                return OutboxRecord(sequence: state.next, queue: event.queue, messageId: event.messageId, profileId: event.profileId,
                                    consent: event.consent, acceptedAt: event.acceptedAt ?? 0, payload: event.payload)
            }
        }
    }

    func coalescer(timeout: Duration = .seconds(60)) -> OutboxAppendCoalescer {
        OutboxAppendCoalescer(timeout: timeout) { (events: [OutboxEvent], deadline: ContinuousClock.Instant) async throws(PostgresIntegrationError) -> [OutboxRecord] in
            try await self.commit(events, deadline: deadline)
        }
    }
}

/// Group commit, without a database (the coalescer alone, deterministic) and on a real server.
@Suite struct OutboxAppendTests {
    @Test func callsArrivingDuringATransactionShareTheNextOneAndEachGetsItsOwnRecordsInOrder() async throws {
        let commits = FakeCommits()
        let coalescer = commits.coalescer()
        async let first = coalescer.append([event("a-0"), event("a-1")])
        try await waitUntil("the first transaction is in flight") { coalescer.transactionCount == 1 }
        try await withThrowingTaskGroup(of: (Int, [OutboxRecord]).self) { group in
            for caller in 0..<5 {
                group.addTask { (caller, try await coalescer.append((0..<3).map { event("c\(caller)-\($0)") })) }
            }
            try await waitUntil("five callers wait") { coalescer.pendingCount == 5 }
            commits.open()
            for try await (caller, records) in group {
                #expect(records.map(\.messageId) == (0..<3).map { "c\(caller)-\($0)" })
                #expect(records.map(\.sequence) == records.map(\.sequence).sorted())
            }
        }
        #expect(try await first.map(\.messageId) == ["a-0", "a-1"])
        #expect(coalescer.transactionCount == 2)
        let batches = commits.batches
        #expect(batches.count == 2 && batches.first == ["a-0", "a-1"])
        // The second transaction holds every waiting caller's events, each caller's together and in order.
        let second = batches.last ?? []
        #expect(second.count == 15 && Set(second).count == 15)
        for start in stride(from: 0, to: second.count, by: 3) {
            let caller = second[start].prefix(while: { $0 != "-" })
            #expect(Array(second[start..<min(start + 3, second.count)]) == (0..<3).map { "\(caller)-\($0)" })
        }
    }

    @Test func aFailedTransactionFailsEveryCallerInItAndNoOther() async throws {
        let commits = FakeCommits(failing: [2])
        let coalescer = commits.coalescer()
        async let first = coalescer.append([event("a")])
        try await waitUntil("the first transaction is in flight") { coalescer.transactionCount == 1 }
        let failures = try await withThrowingTaskGroup(of: PostgresIntegrationError?.self) { group in
            for caller in 0..<4 {
                group.addTask {
                    do throws(PostgresIntegrationError) {
                        _ = try await coalescer.append([event("b\(caller)")])
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            try await waitUntil("four callers wait") { coalescer.pendingCount == 4 }
            commits.open()
            return try await group.reduce(into: [PostgresIntegrationError?]()) { $0.append($1) }
        }
        #expect(failures == [PostgresIntegrationError?](repeating: .database(operation: "outbox append", detail: "refused"), count: 4))
        #expect(try await first.map(\.messageId) == ["a"])
        // The next caller gets a transaction of its own, which succeeds.
        #expect(try await coalescer.append([event("c")]).map(\.messageId) == ["c"])
        #expect(commits.batches.count == 3)
    }

    @Test func aTransactionIsGivenItsEarliestCallersDeadlineAndALateCallerIsNotCommitted() async throws {
        let timeout = Duration.seconds(60)
        let commits = FakeCommits()
        let coalescer = commits.coalescer(timeout: timeout)
        let firstCalled = ContinuousClock.now
        async let first = coalescer.append([event("a")])
        try await waitUntil("the first transaction is in flight") { coalescer.transactionCount == 1 }
        let firstQueued = ContinuousClock.now
        let secondCalled = ContinuousClock.now
        async let second = coalescer.append([event("b")])
        try await waitUntil("the second caller waits") { coalescer.pendingCount == 1 }
        let secondQueued = ContinuousClock.now
        commits.open()
        _ = try await (first, second)
        // Each transaction ends by the deadline of the callers in it: the first's, then the second's
        // (it waited for the first transaction within its own time, not on top of it).
        let deadlines = commits.deadlines
        #expect(deadlines.count == 2)
        #expect(deadlines[0] >= firstCalled + timeout && deadlines[0] <= firstQueued + timeout)
        #expect(deadlines[1] >= secondCalled + timeout && deadlines[1] <= secondQueued + timeout)
        // A caller whose deadline passed before its transaction began fails, and is not committed.
        let late = FakeCommits()
        late.open()
        await #expect(throws: PostgresIntegrationError.timedOut(operation: "outbox append")) {
            try await late.coalescer(timeout: .zero).append([event("late")])
        }
        #expect(late.batches.isEmpty)
    }

    @Test func theBoundsAreDueOnTheFirstAppendThenEveryNEventsOrInterval() {
        let schedule = BoundsSchedule()
        let configuration = PostgresOutboxConfiguration(boundsCheckInterval: .seconds(1), boundsCheckEvents: 10)
        let start = ContinuousClock.now
        #expect(schedule.isDue(adding: 1, at: start, configuration: configuration))
        schedule.committed(1, checked: true, at: start)
        #expect(!schedule.isDue(adding: 9, at: start + .milliseconds(999), configuration: configuration))
        #expect(schedule.isDue(adding: 10, at: start, configuration: configuration))
        #expect(schedule.isDue(adding: 1, at: start + .seconds(1), configuration: configuration))
        schedule.committed(6, checked: false, at: start)
        #expect(!schedule.isDue(adding: 3, at: start, configuration: configuration))
        #expect(schedule.isDue(adding: 4, at: start, configuration: configuration))
        schedule.committed(4, checked: true, at: start + .milliseconds(500))
        #expect(!schedule.isDue(adding: 9, at: start + .milliseconds(1499), configuration: configuration))
        #expect(schedule.isDue(adding: 1, at: start + .milliseconds(1500), configuration: configuration))
    }

    /// Many tasks appending at once: every event is stored once, at the sequence number its caller
    /// got back, each caller's events in the order given (within a call and from call to call),
    /// and the calls shared transactions.
    @Test func concurrentAppendsAllCommitWithDistinctSequencesInOrderPerCaller() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1, operationTimeout: .seconds(15)) { databases in
                let store = PostgresOutboxStore(database: databases[0])
                let (callers, calls) = (24, 15)
                let results = try await withThrowingTaskGroup(of: (Int, [[OutboxRecord]]).self) { group in
                    for caller in 0..<callers {
                        group.addTask {
                            var records: [[OutboxRecord]] = []
                            for call in 0..<calls {
                                let events = (0..<(1 + (caller + call) % 4)).map {
                                    event("t\(caller)-c\(call)-e\($0)", profile: $0 == 1 ? nil : "p\(caller % 5)")
                                }
                                let stored = try await store.append(events)
                                #expect(stored.map(\.messageId) == events.map(\.messageId), "caller \(caller) call \(call)")
                                #expect(stored.map(\.payload) == events.map(\.payload))
                                #expect(stored.map(\.profileId) == events.map(\.profileId))
                                records.append(stored)
                            }
                            return (caller, records)
                        }
                    }
                    return try await group.reduce(into: [Int: [[OutboxRecord]]]()) { $0[$1.0] = $1.1 }
                }
                var returned: [UInt64: String] = [:]
                for caller in 0..<callers {
                    let sequences = (results[caller] ?? []).flatMap { $0.map(\.sequence) }
                    #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count, "caller \(caller)")
                    for record in (results[caller] ?? []).joined() {
                        #expect(returned.updateValue(record.messageId, forKey: record.sequence) == nil, "sequence \(record.sequence) twice")
                    }
                }
                let expectedCount = (0..<callers).reduce(0) { total, caller in
                    total + (0..<calls).reduce(0) { $0 + 1 + (caller + $1) % 4 }
                }
                #expect(returned.count == expectedCount)
                // What the table holds at each sequence number is what its caller was told.
                var stored: [UInt64: String] = [:]
                for try await (sequence, messageId, profileId) in try await databases[0].client.query(
                    "SELECT sequence, message_id, profile_id FROM optimization.outbox_events", logger: quietLogger
                ).decode((Int64, String, String?).self) {
                    stored[UInt64(sequence)] = messageId
                    #expect((profileId == nil) == messageId.hasSuffix("-e1"), "\(messageId)")
                }
                #expect(stored.count == returned.count)
                let misplaced = returned.filter { stored[$0.key] != $0.value }.keys.sorted()
                #expect(misplaced.isEmpty, "\(misplaced.count) events are not stored at the sequence returned, first \(misplaced.prefix(5))")
                // Group commit: the calls shared transactions (the coalescer's own test shows it
                // deterministically; here 24 callers keep each transaction busy).
                #expect(store.appender.transactionCount < callers * calls)
            }
        }
    }

    @Test func theBoundsAreAppliedEveryBoundsCheckEventsNotOnEveryAppend() async throws {
        try await withPostgresTestServer { server in
            try await withDatabases(server, count: 1) { databases in
                let reports = Mutex<[OutboxDropReport]>([])
                let store = PostgresOutboxStore(database: databases[0], configuration: .init(
                    maxEvents: 5, boundsCheckInterval: .seconds(3600), boundsCheckEvents: 10,
                    onDrop: { report in reports.withLock { $0.append(report) } }))
                try await store.append((0..<4).map { outboxEvent($0, profile: "p") })       // the first append checks
                try await store.append((4..<8).map { outboxEvent($0, profile: "p") })       // 4 since: not due
                #expect(try await store.depth() == 8)
                #expect(reports.withLock { $0 }.isEmpty)
                try await store.append((8..<14).map { outboxEvent($0, profile: "p") })      // 10 since: due
                #expect(try await store.depth() == 5)
                let dropped = reports.withLock { $0 }
                #expect(dropped.map(\.reason) == [.maxEvents])
                #expect(dropped.first?.records.map(\.messageId) == (0..<9).map { "m-\($0)" })
            }
        }
    }
}
