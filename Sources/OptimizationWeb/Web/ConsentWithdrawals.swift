import OrderedCollections
import Synchronization
import HostPlatform

/// The visitors who declined consent, by their nonce (``VisitorState/nonce``) and the time of the
/// decline, so that a copy of a visitor's cookie sealed before the decline (a backup, another
/// browser profile, an attacker's copy) cannot bring the consent back: ``VisitorCookies`` reads
/// such a cookie as declined.
///
/// Each record is kept for ``retention`` (give it the visitor-state codec's lifetime: an older
/// cookie no longer opens anyway), at most ``capacity`` of them (the oldest leave first).
/// Accepting consent gives the visitor a nonce (`ConsentChoice.accept`), so every cookie that
/// carries consent can be matched; a cookie sealed before nonces existed cannot.
///
/// **Scope.** The record is this process's: a decline taken by one replica is not known to
/// another. A fleet needs each visitor on the replica that recorded the decline, or accepts the
/// window of the cookie's lifetime on the others.
///
/// **Cost.** A lookup is one dictionary read under a lock; records leave in one removal of the
/// expired prefix (they are kept in decline order).
///
/// **Threading.** Thread-safe: share one (``VisitorCookies`` holds it).
public final class ConsentWithdrawals: Sendable {
    /// How long a decline is remembered.
    public let retention: Duration
    /// The most declines remembered.
    public let capacity: Int
    private let clock: any HostClock
    private let retentionMilliseconds: Double
    /// Nonce → when the visitor declined (ms since the Unix epoch), in decline order.
    private let records = Mutex<OrderedDictionary<String, Double>>([:])

    /// - Parameters:
    ///   - retention: how long a decline is remembered: the visitor-state codec's lifetime.
    ///   - capacity: the most declines remembered; default 100,000.
    ///   - clock: the time of declines; give the codec's clock.
    public init(retention: Duration, capacity: Int = 100_000, clock: any HostClock = SystemClock()) {
        retentionMilliseconds = max(1, retention.inMilliseconds)
        self.retention = retention
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// Records that the visitor with `nonce` declined now.
    public func recordDecline(nonce: String) {
        let now = clock.now()
        records.withLock { records in
            removeExpired(&records, now: now)
            records.removeValue(forKey: nonce)
            if records.count >= capacity { records.removeFirst(records.count - capacity + 1) }
            records[nonce] = now
        }
    }

    /// When the visitor with `nonce` last declined (ms since the Unix epoch), or nil.
    public func declinedAt(nonce: String) -> Double? {
        records.withLock { records in
            guard let at = records[nonce], at + retentionMilliseconds > clock.now() else { return nil }
            return at
        }
    }

    /// How many declines are remembered (expired ones until the next decline removes them).
    public var count: Int { records.withLock { $0.count } }

    private func removeExpired(_ records: inout OrderedDictionary<String, Double>, now: Double) {
        let limit = now - retentionMilliseconds
        let expired = records.expiredPrefixCount { $0 <= limit }
        if expired > 0 { records.removeFirst(expired) }
    }
}
