import HostPlatform

/// The deciding side of an ``ExperienceQueue``: the engine that builds each upsert and says what
/// its answer means (JavaScript decides, Swift delivers). The queue owns order, flights, backoff,
/// the circuit and the outbox; the handler owns the request's shape and the visitor's state.
///
/// **Threading.** The queue calls the handler outside its own lock and never from inside a call
/// the handler made into the queue, one flight at a time; the calls may block (an engine call).
package protocol ExperienceFlightHandler: Sendable {
    /// The upsert that carries `events` (their JSON texts, oldest first) for the visitor now.
    /// - Throws: when no request can be built; the flight then fails like a transport failure
    ///   (the events stay queued for a retry).
    func request(carrying events: [String]) throws -> FetchRequest

    /// A flight ended; `answer` says how and which waiting senders it settles.
    func answered(_ answer: ExperienceFlightAnswer)

    /// Senders that stop waiting without an answer (their events stay queued for a later
    /// flight, or left the queue without being sent); each learns only that its event was accepted.
    func released(tickets: [UInt64])
}

/// How one flight of an ``ExperienceQueue`` ended, for its ``ExperienceFlightHandler``.
package struct ExperienceFlightAnswer: Sendable, Equatable {
    /// What the queue did with the flight's events.
    package enum Disposition: String, Sendable {
        /// 2xx: the events arrived and left the queue (the handler reads the answer's body).
        case delivered
        /// Another 4xx: the API refuses them; they left the queue.
        case dropped
        /// 401/403/404: delivery stopped for good; every queued event was discarded.
        case disabled
        /// 408/429/5xx or no answer: the events stay queued for a retry.
        case retrying
        /// The queue was purged while the request was in flight: its events were already gone.
        case stale
    }

    /// What the queue did.
    package var disposition: Disposition
    /// The waiting senders this answer settles.
    package var tickets: [UInt64]
    /// The HTTP status (0 without an answer).
    package var status: Int
    /// The queue's reason for a refusal or failure, without visitor data.
    package var reason: String
    /// The answer, when there was one.
    package var response: FetchResponse?
    /// The transport's failure, when there was no answer.
    package var failure: String?
    /// The transport's failure was a timeout (its error said so through `FetchTimeoutReporting`).
    package var timedOut: Bool

    /// Creates a report (the queue does; tests build their own).
    package init(
        disposition: Disposition, tickets: [UInt64], status: Int, reason: String, response: FetchResponse?, failure: String?,
        timedOut: Bool = false
    ) {
        self.disposition = disposition
        self.tickets = tickets
        self.status = status
        self.reason = reason
        self.response = response
        self.failure = failure
        self.timedOut = timedOut
    }
}
