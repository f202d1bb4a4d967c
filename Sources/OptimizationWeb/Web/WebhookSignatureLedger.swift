import Synchronization

/// The signatures of the webhooks a ``ContentfulWebhookReceiver`` took, each kept until its
/// request's timestamp is older than the verifier's time to live (after which the verifier
/// refuses the request anyway), so a captured webhook cannot be sent again while it is fresh.
///
/// Only verified signatures are recorded, so the record grows with Contentful's sending rate,
/// not an attacker's; it holds at most ``capacity`` (the oldest leave first when more arrive).
///
/// **Threading.** Thread-safe: the lock is held for one lookup and insertion.
final class WebhookSignatureLedger: Sendable {
    /// The most signatures kept.
    let capacity: Int
    /// Signature (lower-case hex) → when it may be forgotten (ms since the Unix epoch).
    private let seen = Mutex<[String: Double]>([:])

    init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// Records `signature` until `forgetAfter`; false when it is already recorded (a replay).
    func record(_ signature: String, forgetAfter: Double, now: Double) -> Bool {
        let key = signature.lowercased()
        return seen.withLock { seen in
            if let until = seen[key], until > now { return false }
            if seen.count >= capacity {
                seen = seen.filter { $0.value > now }
                while seen.count >= capacity, let oldest = seen.min(by: { $0.value < $1.value }) { seen[oldest.key] = nil }
            }
            seen[key] = forgetAfter
            return true
        }
    }

    /// How many signatures are kept.
    var count: Int { seen.withLock { $0.count } }
}
