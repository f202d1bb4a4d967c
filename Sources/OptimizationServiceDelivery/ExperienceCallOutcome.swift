import OptimizationJSON
import OptimizationVocabulary

/// The Experience API outcome of one service call, as the shared core reports it in its answer's
/// `experience` (`{ok: true, status, data}` or `{ok: false, kind, status, reason, code?}`),
/// decoded once. The Experience circuit, the metrics and the call's ``EventOutcome`` all read
/// this value; nothing else reads the shared core's `kind` strings.
package struct ExperienceCallOutcome: Sendable, Equatable {
    /// What became of the call, in the shared core's words.
    package enum Kind: String, Sendable {
        /// The API answered with a 2xx: ``ExperienceCallOutcome/data`` holds its data.
        case answered
        /// A transient failure (408, 429, 5xx, a transport failure): worth another call later.
        case retry
        /// The API refused the call's events (another 4xx).
        case drop
        /// The API refused the credentials (401, 403, 404).
        case disable
        /// The answer could not be read; also any `kind` this host does not know.
        case invalid
        /// The call's budget ran out before an answer.
        case timeout
        /// The service's Experience circuit was open: no request was sent.
        case circuitOpen
    }

    /// What became of the call.
    package let kind: Kind
    /// The HTTP status of the answer; 0 without one.
    package let status: Int
    /// Why the call failed, in words (empty when it was answered).
    package let reason: String
    /// The API's error code (such as `ERR_PROFILE_OVERLOAD`), when it gave one.
    package let code: String?
    /// The answer's data (`{profile, selectedOptimizations, changes}`) when it was answered.
    package let data: JSONValue?

    /// Decodes the shared core's `experience` value.
    package init(_ experience: JSONValue) {
        status = experience["status"]?.intValue ?? 0
        code = experience["code"]?.stringValue
        if experience["ok"]?.boolValue == true {
            kind = .answered
            reason = ""
            data = experience["data"]
        } else {
            kind = experience["kind"]?.stringValue.flatMap(Kind.init(rawValue:)).flatMap { $0 == .answered ? nil : $0 } ?? .invalid
            reason = experience["reason"]?.stringValue ?? "Experience API call failed"
            data = nil
        }
    }

    /// Whether the call counts as a failure of the API for the Experience circuit: a transient
    /// failure (`retry`, `timeout`), unless the API reported an overloaded profile
    /// (`ERR_PROFILE_OVERLOAD`: one visitor's calls, not the API's health).
    package var isTransientAPIFailure: Bool {
        (kind == .retry || kind == .timeout) && code != "ERR_PROFILE_OVERLOAD"
    }

    /// The event call's outcome: `budget` is the call's budget (what a timeout reports).
    package func eventOutcome(budget: Duration) -> EventOutcome {
        switch kind {
        case .answered: return .delivered
        case .timeout: return .timedOut(after: budget)
        case .circuitOpen: return .circuitOpen
        case .retry: return .failed(status: status, code: code, reason: reason)
        case .drop, .disable, .invalid: return .refused(status: status, code: code, reason: reason)
        }
    }
}
