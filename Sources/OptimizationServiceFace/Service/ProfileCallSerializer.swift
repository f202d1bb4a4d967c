import Synchronization
import HostPlatform

/// Runs a service's Experience calls one at a time per profile id: the Experience API refuses
/// concurrent work on one profile (429 `ERR_PROFILE_OVERLOAD`), and a visitor's parallel requests
/// (several tabs, parallel fetches) would otherwise race. Calls for one profile wait in arrival
/// order; a call that waits longer than its budget gives up without a request. Calls for
/// different profiles never wait for each other.
///
/// **Threading.** Thread-safe; waiting suspends the task (no thread is blocked). Budgets run on
/// the service's `HostClock`.
final class ProfileCallSerializer: Sendable {
    private struct Waiter {
        let ticket: Int
        let continuation: CheckedContinuation<Bool, Never>
        var timer: (any HostTimer)?
    }

    private struct State {
        /// Profiles a call holds now.
        var held: Set<String> = []
        /// Calls waiting for a held profile, oldest first.
        var waiting: [String: [Waiter]] = [:]
        var nextTicket = 0
    }

    private let state = Mutex(State())
    private let clock: any HostClock

    init(clock: any HostClock) {
        self.clock = clock
    }

    /// Waits until no other call holds `profileId`, then holds it; call ``release(_:)`` after
    /// the call.
    /// - Returns: true when the caller holds the profile; false when `budget` ran out first (the
    ///   caller holds nothing).
    func acquire(_ profileId: String, within budget: Duration) async -> Bool {
        // A free profile is taken without suspending.
        let taken = state.withLock { state -> Bool in
            guard !state.held.contains(profileId) else { return false }
            state.held.insert(profileId)
            return true
        }
        if taken { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ticket = state.withLock { state -> Int? in
                guard state.held.contains(profileId) else {
                    state.held.insert(profileId)
                    return nil
                }
                state.nextTicket += 1
                state.waiting[profileId, default: []].append(Waiter(ticket: state.nextTicket, continuation: continuation))
                return state.nextTicket
            }
            guard let ticket else {
                continuation.resume(returning: true)
                return
            }
            let timer = clock.schedule(after: budget) { [weak self] in self?.giveUp(profileId, ticket: ticket) }
            let stillWaiting = state.withLock { state -> Bool in
                guard let index = state.waiting[profileId]?.firstIndex(where: { $0.ticket == ticket }) else { return false }
                state.waiting[profileId]?[index].timer = timer
                return true
            }
            if !stillWaiting { timer.cancel() }
        }
    }

    /// Ends the caller's hold on `profileId`; the oldest waiting call for it goes next.
    func release(_ profileId: String) {
        let next = state.withLock { state -> Waiter? in
            guard var queue = state.waiting[profileId], !queue.isEmpty else {
                state.held.remove(profileId)
                state.waiting[profileId] = nil
                return nil
            }
            let next = queue.removeFirst()
            state.waiting[profileId] = queue.isEmpty ? nil : queue
            return next
        }
        guard let next else { return }
        next.timer?.cancel()
        next.continuation.resume(returning: true)
    }

    /// Calls waiting now, over all profiles (for tests).
    var waitingCount: Int {
        state.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } }
    }

    private func giveUp(_ profileId: String, ticket: Int) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiting[profileId]?.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            let waiter = state.waiting[profileId]?.remove(at: index)
            if state.waiting[profileId]?.isEmpty == true { state.waiting[profileId] = nil }
            return waiter
        }
        waiter?.continuation.resume(returning: false)
    }
}
