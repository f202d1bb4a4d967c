import Foundation
import HostPlatform
import Logging
import Synchronization

extension DurableOutbox {
    /// The longest delay of the expiry timer, in milliseconds (one day).
    private static let longestExpiryTimerMilliseconds: Double = 86_400_000

    /// Keeps one timer at the earliest expiry of an undelivered event (`candidate`: the
    /// `acceptedAt` of events just added, which may only move it earlier).
    func scheduleExpiry(_ guarded: inout Guarded, candidate: Double? = nil) {
        guard !guarded.closed else { return }
        let due: Double
        if let existing = guarded.expiryDue {
            guard let candidate, candidate + configuration.timeToLive.inMilliseconds < existing else { return }
            due = candidate + configuration.timeToLive.inMilliseconds
            guarded.expiryTimer?.cancel()
        } else {
            guard let next = guarded.storage.nextExpiry else { return }
            due = next
        }
        guarded.expiryDue = due
        // Clamped to a day: a timer that fires early finds nothing due and schedules the next.
        let delay = min(max(0, due - clock.now()), Self.longestExpiryTimerMilliseconds)
        guarded.expiryTimer = clock.schedule(after: .milliseconds(delay.isFinite ? delay : 0)) { [weak self] in self?.expireDue() }
    }

    private func expireDue() {
        let reports = state.withLock { guarded -> [OutboxDropReport] in
            guard !guarded.closed else { return [] }
            guarded.expiryTimer = nil
            guarded.expiryDue = nil
            let reports = guarded.storage.expire(now: clock.now())
            scheduleExpiry(&guarded)
            scheduleSync(&guarded)
            return reports
        }
        deliver(reports)
    }
}
