import OptimizationJSON
import Synchronization

/// How an event call went. `OptimizationClient` and `OptimizationRequest` answer every event
/// method with an ``EventResult`` holding one of these.
public enum EventOutcome: Sendable, Equatable, CustomStringConvertible {
    /// The event is in its delivery path: sent, or queued to be sent. A queued event survives
    /// transient failures (it is retried) and, with a durable outbox, restarts.
    case accepted
    /// The Experience API answered the call before it returned and took the event;
    /// ``EventResult/data`` holds the answer (profile, selections, changes).
    case delivered
    /// No event was built: consent did not allow the call (it was reported once on the face's
    /// blocked-event stream), or it repeated one already accepted.
    case blocked(EventBlockReason)
    /// The API refused the event: a 4xx other than 408 and 429 (401, 403 and 404 mean a wrong
    /// client id, environment or base URL), or an answer that is not an Experience response.
    /// `code` is the API's error code when its answer carries one. The event is not sent again.
    case refused(status: Int, code: String?, reason: String)
    /// The Experience call's latency budget ran out first: the HTTP request was cancelled and a
    /// late answer is never applied.
    case timedOut(after: Duration)
    /// The Experience circuit is open after repeated failures: no request was made.
    case circuitOpen
    /// A transient failure of the Experience call: a 408, 429 or 5xx answer (`status`), or a
    /// transport error (status 0). `code` is the API's error code when its answer carries one:
    /// `ERR_PROFILE_OVERLOAD` (429) when the profile stayed overloaded after the retries its
    /// budget allowed.
    case failed(status: Int, code: String?, reason: String)

    public var description: String {
        switch self {
        case .accepted: return "accepted"
        case .delivered: return "delivered"
        case .blocked(let reason): return "blocked (\(reason.rawValue))"
        case .refused(let status, let code, let reason): return "refused (\(status)\(code.map { ", \($0)" } ?? "")): \(reason)"
        case .timedOut(let budget): return "timed out after \(budget)"
        case .circuitOpen: return "circuit open"
        case .failed(let status, let code, let reason): return "failed (\(status)\(code.map { ", \($0)" } ?? "")): \(reason)"
        }
    }
}

/// Why an event call built no event.
public enum EventBlockReason: String, Sendable, Equatable {
    /// Consent did not allow the call (the event type is not on the allow-list before consent).
    case consent
    /// The call repeated one already accepted (`trackCurrentScreen` with the current screen's key).
    case duplicate
}

/// What an event call did: the same answer on both faces.
public struct EventResult: Sendable, Equatable {
    /// How the call went.
    public let outcome: EventOutcome
    /// The event as built and handed to its delivery path (for a sticky view, the one sent to the
    /// Experience API); nil when none was built (blocked). Built from the engine's answer the
    /// first time it is read.
    public var event: JSONValue? {
        switch eventStorage {
        case .built(let event): return event
        case .deferred(let deferred): return deferred.value
        }
    }
    /// The Experience API's answer when the call received one in time (``EventOutcome/delivered``):
    /// `{profile, selectedOptimizations, changes}` as the API sent them (preview overrides are
    /// not applied here).
    public let data: JSONValue?

    private let eventStorage: EventStorage

    /// Whether an event was built and handed to its delivery path: every outcome but
    /// ``EventOutcome/blocked(_:)``. ``outcome`` says how its delivery went.
    public var accepted: Bool {
        if case .blocked = outcome { return false }
        return true
    }

    /// A result with the given parts.
    /// - Parameters:
    ///   - outcome: how the call went.
    ///   - event: the event as built, if one was.
    ///   - data: the Experience API's answer, when the call received one in time.
    public init(outcome: EventOutcome, event: JSONValue? = nil, data: JSONValue? = nil) {
        self.outcome = outcome
        self.eventStorage = .built(event)
        self.data = data
    }

    /// A result whose event is read from the engine's answer only when ``event`` is asked for.
    package init(outcome: EventOutcome, eventIn document: (any LazyJSONValue)?, data: JSONValue? = nil) {
        self.outcome = outcome
        self.eventStorage = document.map { .deferred(DeferredJSONValue($0)) } ?? .built(nil)
        self.data = data
    }

    /// Two results are equal when their outcomes, events and data are.
    public static func == (lhs: EventResult, rhs: EventResult) -> Bool {
        lhs.outcome == rhs.outcome && lhs.data == rhs.data && lhs.event == rhs.event
    }

    private enum EventStorage: Sendable {
        case built(JSONValue?)
        case deferred(DeferredJSONValue)
    }
}

/// A JSON value that is built into a tree only when ``value`` is read (a value of an engine's
/// answer, read in place until then).
package protocol LazyJSONValue: Sendable {
    /// The value as a tree, built on each read.
    var value: JSONValue { get }
}

/// A ``LazyJSONValue`` built into a tree on first use, then kept. Thread-safe.
final class DeferredJSONValue: Sendable {
    private let document: any LazyJSONValue
    private let built = Mutex<JSONValue?>(nil)

    init(_ document: any LazyJSONValue) {
        self.document = document
    }

    var value: JSONValue {
        built.withLock { cached in
            if let cached { return cached }
            let value = document.value
            cached = value
            return value
        }
    }
}
