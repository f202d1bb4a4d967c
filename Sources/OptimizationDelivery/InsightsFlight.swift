/// The requests of one Insights flush and what their answers decided: the queued batches packed
/// into requests within ``DeliveryPolicy/insightsMaxRequestBytes``, and the bisection of a request
/// the API refused while it held several profiles' events. A value owned by the flight's task (no
/// lock, no I/O): the queue asks it for the next request, sends it and tells it the answer.
///
/// **Packing.** Profiles in the queue's order, each profile's events in order; a request is closed
/// when the next event would take it past the bound, and the profile's remaining events continue
/// in the next request (with the profile again). An event that does not fit in a request of its
/// own is never sent: it is set aside in ``oversized``.
///
/// **Bisection.** A request refused with a 4xx (``DeliveryOutcome/drop(status:reason:)`` or
/// ``DeliveryOutcome/disable(status:reason:)``) while it held several profiles' batches is split
/// into two halves of its batches, sent next (depth first), so the profiles whose events the API
/// refuses are found and every other profile's events are delivered. A refused request of one
/// profile is that profile's refusal (its events are dropped, as before bisection existed), except
/// a 401/403/404 while nothing of the flight has been accepted: that may be the credential, so the
/// request is a *suspect* (its events stay queued) until a 2xx of the same flight proves the
/// credential good, which makes every suspect a refusal. Two suspects and no 2xx end the flight: a
/// credential refusal (``credentialRefusal``). A retryable answer (408, 429, 5xx, a transport
/// failure) ends the flight too: what was not accepted or refused stays queued. A flight sends at
/// most ``maxRequests`` requests; what it did not get to stays queued.
struct InsightsFlight: Sendable {
    /// One request: batches of distinct profiles, and its body's size in bytes.
    struct Request: Sendable {
        var batches: [InsightsQueue.Bucket]
        var bytes: Int

        /// The profiles it holds events of (a profile appears once in a request).
        var profileCount: Int { batches.count }

        /// `[{"profile":…,"events":[…]},…]`: the texts as they are (no second serialization).
        var body: String {
            var body = "["
            for (index, batch) in batches.enumerated() {
                if index > 0 { body += "," }
                body += #"{"profile":"# + batch.profileJSON + #","events":["#
                for (position, queued) in batch.events.enumerated() {
                    if position > 0 { body += "," }
                    body += queued.event.eventJSON
                }
                body += "]}"
            }
            body += "]"
            return body
        }
    }

    /// One refused request: its batches and the answer, for the `batchDropped` report.
    struct Refusal: Sendable {
        var batches: [InsightsQueue.Bucket]
        var status: Int
        var reason: String
    }

    /// The most requests one flight sends (a bisection of k refused profiles among n takes about
    /// 2·k·log2(n)); the rest stays queued for the next flight.
    static let maxRequests = 64

    /// `[` and `]` of a request's body.
    static let envelopeBytes = 2
    /// `{"profile":` + `,"events":[` + `]}` around a batch's profile and events.
    static let batchOverheadBytes = 11 + 11 + 2

    /// Requests not sent yet, the next first.
    private(set) var pending: [Request]
    /// Events that do not fit in a request of their own (never sent).
    private(set) var oversized: [InsightsQueue.Queued] = []
    /// Batches the API accepted (2xx).
    private(set) var delivered: [InsightsQueue.Bucket] = []
    /// Requests the API refused, per refused request (their events are dropped).
    private(set) var refused: [Refusal] = []
    /// Single-profile requests answered 401/403/404 before any 2xx of this flight.
    private(set) var suspects: [Refusal] = []
    /// The retryable answer that ended the flight, if one did.
    private(set) var retry: (status: Int, reason: String, retryAfterMilliseconds: Double?)?
    /// Requests sent so far.
    private(set) var sentRequests = 0

    /// Packs `batches` into requests of at most `maxBytes` bytes (see the type).
    init(batches: [InsightsQueue.Bucket], maxBytes: Int) {
        var requests: [Request] = []
        var current = Request(batches: [], bytes: Self.envelopeBytes)
        for bucket in batches {
            let head = Self.batchOverheadBytes + bucket.profileJSON.utf8.count
            var batch = InsightsQueue.Bucket(profileJSON: bucket.profileJSON, events: [])
            for queued in bucket.events {
                let eventBytes = queued.event.eventJSON.utf8.count
                guard Self.envelopeBytes + head + eventBytes <= maxBytes else {
                    oversized.append(queued)
                    continue
                }
                // A new batch costs its head (and a comma after another batch); a further event of
                // the batch its comma.
                var cost = batch.events.isEmpty ? head + (current.batches.isEmpty ? 0 : 1) + eventBytes : 1 + eventBytes
                if current.bytes + cost > maxBytes {
                    if !batch.events.isEmpty { current.batches.append(batch) }
                    requests.append(current)
                    current = Request(batches: [], bytes: Self.envelopeBytes)
                    batch.events.removeAll()
                    cost = head + eventBytes
                }
                batch.events.append(queued)
                current.bytes += cost
            }
            if !batch.events.isEmpty {
                current.batches.append(batch)
            }
        }
        if !current.batches.isEmpty { requests.append(current) }
        pending = requests
    }

    /// Whether nothing of the flight has been accepted (no 2xx yet).
    var nothingDelivered: Bool { delivered.isEmpty }

    /// The next request to send, taken off ``pending``; nil when the flight is over (nothing
    /// left, a retryable answer, two suspects before any 2xx, or ``maxRequests`` sent).
    mutating func next() -> Request? {
        guard retry == nil, !pending.isEmpty, sentRequests < Self.maxRequests else { return nil }
        guard !(suspects.count >= 2 && nothingDelivered) else { return nil }
        sentRequests += 1
        return pending.removeFirst()
    }

    /// Records the answer to `request` (the one ``next()`` returned last).
    mutating func record(_ outcome: DeliveryOutcome, for request: Request) {
        switch outcome {
        case .delivered:
            delivered += request.batches
            // The credential is good: what was refused for it was refused for its content.
            refused += suspects
            suspects.removeAll()
        case .retry(let status, let reason, let retryAfter):
            retry = (status, reason, retryAfter)
            pending.insert(request, at: 0)
        case .drop(let status, let reason):
            refuse(request, status: status, reason: reason, suspect: false)
        case .disable(let status, let reason):
            refuse(request, status: status, reason: reason, suspect: nothingDelivered)
        }
    }

    /// A refused request: bisected when it holds several profiles; else refused, or a suspect.
    private mutating func refuse(_ request: Request, status: Int, reason: String, suspect: Bool) {
        guard request.profileCount < 2 else {
            pending.insert(contentsOf: request.halves, at: 0)
            return
        }
        let refusal = Refusal(batches: request.batches, status: status, reason: reason)
        if suspect { suspects.append(refusal) } else { refused.append(refusal) }
    }

    /// When the flight ended with suspects and no 2xx: the first suspect's answer. The suspects'
    /// events stay queued; the queue counts a credential refusal.
    var credentialRefusal: Refusal? {
        retry == nil && nothingDelivered ? suspects.first : nil
    }
}

extension InsightsFlight.Request {
    /// The two halves of its batches (the first half the smaller), each sized.
    var halves: [InsightsFlight.Request] {
        let middle = batches.count / 2
        return [Array(batches[..<middle]), Array(batches[middle...])].map(InsightsFlight.Request.init(batches:))
    }

    /// A request of `batches`, sized.
    init(batches: [InsightsQueue.Bucket]) {
        let commas = max(0, batches.count - 1)
        let bytes = batches.reduce(InsightsFlight.envelopeBytes + commas) { total, batch in
            total + InsightsFlight.batchOverheadBytes + batch.profileJSON.utf8.count
                + batch.events.reduce(max(0, batch.events.count - 1)) { $0 + $1.event.eventJSON.utf8.count }
        }
        self.init(batches: batches, bytes: bytes)
    }
}
