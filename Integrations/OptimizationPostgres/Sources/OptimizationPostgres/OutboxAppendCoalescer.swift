import Optimization
import Synchronization

/// Group commit for ``PostgresOutboxStore/append(_:)``: one transaction at a time, and the calls
/// that arrive while it is in flight are committed together by the next one.
///
/// - Each caller returns only after the transaction holding its events committed, with its own
///   records, in the order it gave them. Within a transaction the callers' events are stored in
///   arrival order, so one caller's events get increasing sequence numbers, and a caller's next
///   call gets higher ones than its previous call.
/// - A failed transaction fails every caller in it (none of their events was stored).
/// - **Time bound**: each caller has a deadline, its arrival plus `timeout`. A transaction is
///   given until the earliest deadline of its callers (its `commit` must give up then); a caller
///   still waiting at its deadline fails with ``PostgresIntegrationError/timedOut(operation:)``
///   without being committed. The transaction in flight when a caller arrives holds only callers
///   that arrived earlier, so it ends before that caller's deadline too: no caller waits much
///   longer than `timeout`.
/// - Cancelling a caller's task does not withdraw its events (they may be committed already);
///   the caller still waits for the outcome, within its deadline.
///
/// **Threading.** `Sendable`; the transactions run on a task of their own, one at a time.
final class OutboxAppendCoalescer: Sendable {
    /// Commits `events` in one transaction, giving up at `deadline`; returns their records in the
    /// same order.
    typealias Commit = @Sendable (_ events: [OutboxEvent], _ deadline: ContinuousClock.Instant)
        async throws(PostgresIntegrationError) -> [OutboxRecord]

    private struct Waiter {
        let events: [OutboxEvent]
        let deadline: ContinuousClock.Instant
        let continuation: CheckedContinuation<Result<[OutboxRecord], PostgresIntegrationError>, Never>
    }

    private struct State {
        var pending: [Waiter] = []
        var committing = false
        var transactions = 0
    }

    private let state = Mutex(State())
    private let timeout: Duration
    private let commit: Commit

    /// A coalescer whose callers wait at most `timeout`, committing through `commit`.
    init(timeout: Duration, commit: @escaping Commit) {
        self.timeout = timeout
        self.commit = commit
    }

    /// How many transactions were started (for tests).
    var transactionCount: Int { state.withLock { $0.transactions } }

    /// How many callers wait for the next transaction (for tests).
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Commits `events` with those of the concurrent callers.
    /// - Returns: their records, in the order given.
    /// - Throws: the transaction's error (nothing of this call was stored), or
    ///   ``PostgresIntegrationError/timedOut(operation:)`` when the deadline passed first.
    func append(_ events: [OutboxEvent]) async throws(PostgresIntegrationError) -> [OutboxRecord] {
        guard !events.isEmpty else { return [] }
        let deadline = ContinuousClock.now + timeout
        let result = await withCheckedContinuation { continuation in
            let lead = state.withLock { state -> Bool in
                state.pending.append(Waiter(events: events, deadline: deadline, continuation: continuation))
                guard !state.committing else { return false }
                state.committing = true
                return true
            }
            // Detached: the transactions serve every caller, so they carry none's task-locals.
            if lead { Task.detached { await self.drain() } }
        }
        return try result.get()
    }

    /// Commits the waiting callers, one transaction at a time, until none is left.
    private func drain() async {
        while true {
            // Lets the callers just resumed (or just arrived) enqueue first: one transaction for
            // them, rather than one for the first of them and another for the rest.
            await Task.yield()
            guard let batch = nextBatch() else { return }
            let now = ContinuousClock.now
            var live: [Waiter] = []
            for waiter in batch {
                if waiter.deadline <= now {
                    waiter.continuation.resume(returning: .failure(.timedOut(operation: "outbox append")))
                } else {
                    live.append(waiter)
                }
            }
            guard let deadline = live.map(\.deadline).min() else { continue }
            let events = live.flatMap(\.events)
            state.withLock { $0.transactions += 1 }
            let result: Result<[OutboxRecord], PostgresIntegrationError>
            do {
                result = .success(try await commit(events, deadline))
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let records) where records.count == events.count:
                var start = records.startIndex
                for waiter in live {
                    let end = start + waiter.events.count
                    waiter.continuation.resume(returning: .success(Array(records[start..<end])))
                    start = end
                }
            case .success(let records):
                // A broken commit (the store's checks the count inside its transaction, which then
                // rolls back): never hand a caller records of another's events.
                let error = PostgresIntegrationError.database(
                    operation: "outbox append", detail: "\(records.count) records returned for \(events.count) events")
                for waiter in live { waiter.continuation.resume(returning: .failure(error)) }
            case .failure(let error):
                for waiter in live { waiter.continuation.resume(returning: .failure(error)) }
            }
        }
    }

    /// Takes every waiting caller, or ends the drain (under the lock, so a caller arriving now
    /// starts a new one).
    private func nextBatch() -> [Waiter]? {
        state.withLock { state -> [Waiter]? in
            guard !state.pending.isEmpty else {
                state.committing = false
                return nil
            }
            let batch = state.pending
            state.pending = []
            return batch
        }
    }
}
