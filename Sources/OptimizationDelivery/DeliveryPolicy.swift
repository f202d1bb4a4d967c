import HostPlatform

/// Every number of the delivery path, resolved: when a queue flushes, how long it backs off, when
/// its circuit opens, how many events it holds. One value per queue; the defaults are the
/// Optimization SDK suite's.
///
/// Build it from a user's ``QueuePolicy`` with ``init(_:insightsMaxEvents:)``: every field the
/// policy leaves unset takes its default, durations shorter than 1 ms take their default, the
/// backoff cap is raised to the base backoff and the jitter ratio is clamped to [0, 1].
public struct DeliveryPolicy: Sendable, Equatable {
    /// The periodic flush of a queue that holds events. Default 30 s.
    public var flushInterval: Duration
    /// The wait after the first failure; it doubles with each further failure. Default 500 ms.
    public var baseBackoff: Duration
    /// The cap of the doubling backoff (never below ``baseBackoff``). Default 30 s.
    public var maxBackoff: Duration
    /// Extra random wait, as a fraction of the backoff, in [0, 1]. Default 0.2.
    public var jitterRatio: Double
    /// Consecutive failures after which the circuit opens. Default 8.
    public var maxConsecutiveFailures: Int
    /// How long an open circuit sends nothing. Default 120 s.
    public var circuitOpenDuration: Duration
    /// Queued events that start a flush at once. Default 25.
    public var flushThreshold: Int
    /// The most Insights events a queue holds in memory. Without a durable outbox it is a cap
    /// (beyond it the oldest events not in flight are dropped); with one it is the window of the
    /// stored backlog held in memory (nothing is dropped for room). Default 1,000.
    public var insightsMaxEvents: Int
    /// The most Experience events a client's queue holds in memory: a cap without a durable
    /// outbox (beyond it the oldest events not in flight are dropped, `offlineDrop`), the window
    /// of the stored backlog with one. Default 100 (``QueuePolicy/offlineMaxEvents``).
    public var experienceMaxEvents: Int
    /// The most bytes (UTF-8 of the JSON body) one Insights request carries. A flush whose events
    /// are larger is sent as several requests, each within the bound (a profile's events may be
    /// split over two requests, each with the profile); an event that does not fit in a request
    /// of its own is never sent: it is dropped, counted and reported (``QueueEventType/batchDropped``
    /// with status 413). At least 1,024. Default 131,072 (128 KiB).
    public var insightsMaxRequestBytes: Int
    /// Consecutive 401/403/404 answers of the Insights API, without a 2xx between them, after which
    /// Insights delivery is disabled for the queue (``DeliveryOutcome/disable(status:reason:)``).
    /// Fewer are retried with the backoff like a failure: one visitor's content refused by a WAF
    /// cannot stop delivery for every visitor, a wrong client id still does. At least 1. Default 3.
    public var maxConsecutiveCredentialRefusals: Int

    /// The defaults.
    public static let standard = DeliveryPolicy(
        flushInterval: .seconds(30), baseBackoff: .milliseconds(500), maxBackoff: .seconds(30), jitterRatio: 0.2,
        maxConsecutiveFailures: 8, circuitOpenDuration: .seconds(120), flushThreshold: 25, insightsMaxEvents: 1_000,
        experienceMaxEvents: 100, insightsMaxRequestBytes: 131_072, maxConsecutiveCredentialRefusals: 3)

    /// Creates a policy from explicit numbers, normalised as the type describes.
    public init(
        flushInterval: Duration, baseBackoff: Duration, maxBackoff: Duration, jitterRatio: Double, maxConsecutiveFailures: Int,
        circuitOpenDuration: Duration, flushThreshold: Int, insightsMaxEvents: Int, experienceMaxEvents: Int = 100,
        insightsMaxRequestBytes: Int = 131_072, maxConsecutiveCredentialRefusals: Int = 3
    ) {
        func atLeastOneMillisecond(_ value: Duration, _ fallback: Duration) -> Duration {
            value.inMilliseconds >= 1 ? .milliseconds(value.wholeMilliseconds) : fallback
        }
        self.flushInterval = atLeastOneMillisecond(flushInterval, .seconds(30))
        self.baseBackoff = atLeastOneMillisecond(baseBackoff, .milliseconds(500))
        self.maxBackoff = max(self.baseBackoff, atLeastOneMillisecond(maxBackoff, .seconds(30)))
        self.jitterRatio = jitterRatio.isFinite ? min(1, max(0, jitterRatio)) : 0.2
        self.maxConsecutiveFailures = max(1, maxConsecutiveFailures)
        self.circuitOpenDuration = atLeastOneMillisecond(circuitOpenDuration, .seconds(120))
        self.flushThreshold = max(1, flushThreshold)
        self.insightsMaxEvents = max(1, insightsMaxEvents)
        self.experienceMaxEvents = max(1, experienceMaxEvents)
        self.insightsMaxRequestBytes = max(1_024, insightsMaxRequestBytes)
        self.maxConsecutiveCredentialRefusals = max(1, maxConsecutiveCredentialRefusals)
    }

    /// The policy of a user's ``QueuePolicy``.
    /// - Parameters:
    ///   - policy: the user's settings; nil (or an unset field) takes the defaults.
    ///   - insightsMaxEvents: the Insights queue's capacity (nil: 1,000).
    public init(_ policy: QueuePolicy?, insightsMaxEvents: Int? = nil) {
        let standard = DeliveryPolicy.standard
        let flush = policy?.flush
        self.init(
            flushInterval: flush?.flushInterval ?? standard.flushInterval,
            baseBackoff: flush?.baseBackoff ?? standard.baseBackoff,
            maxBackoff: flush?.maxBackoff ?? standard.maxBackoff,
            jitterRatio: flush?.jitterRatio ?? standard.jitterRatio,
            maxConsecutiveFailures: flush?.maxConsecutiveFailures ?? standard.maxConsecutiveFailures,
            circuitOpenDuration: flush?.circuitOpenDuration ?? standard.circuitOpenDuration,
            flushThreshold: standard.flushThreshold,
            insightsMaxEvents: insightsMaxEvents ?? standard.insightsMaxEvents,
            experienceMaxEvents: policy?.offlineMaxEvents.flatMap { $0 >= 1 ? $0 : nil } ?? standard.experienceMaxEvents,
            insightsMaxRequestBytes: standard.insightsMaxRequestBytes,
            maxConsecutiveCredentialRefusals: standard.maxConsecutiveCredentialRefusals)
    }

    /// The backoff after `consecutiveFailures` failures (at least 1), in milliseconds:
    /// `round(min(maxBackoff, baseBackoff · 2^(n−1)) · (1 + jitterRatio · random))`.
    /// - Parameters:
    ///   - consecutiveFailures: failures in a row, the one just counted included.
    ///   - random: a number in [0, 1) (clamped), the jitter's share.
    public func retryDelayMilliseconds(consecutiveFailures: Int, random: Double) -> Double {
        let failures = max(1, consecutiveFailures)
        let base = baseBackoff.inMilliseconds
        // 2^(n−1) overflows for huge n; the cap bounds it.
        let exponential = failures > 62 ? Double.infinity : base * Double(UInt64(1) << UInt64(failures - 1))
        let capped = min(maxBackoff.inMilliseconds, exponential)
        let unit = random.isFinite ? min(max(random, 0), 0.9999999999999999) : 0
        return (capped * (1 + jitterRatio * unit)).rounded()
    }
}
