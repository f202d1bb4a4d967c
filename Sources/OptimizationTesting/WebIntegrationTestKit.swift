import Foundation
import HostPlatform
import Optimization

/// What a web integration's test application is made of, in one value: a service (not started)
/// whose calls go to a ``LocalOptimizationAPIServer``, the clock of every timer, the visitor
/// cookies and replay tickets sealed with ``WebIntegrationFixtures/keys``, and a record of the ids
/// a webhook route invalidated.
///
/// **Threading.** An immutable `Sendable` value; the recorder and the clock are thread-safe.
public struct WebIntegrationTestKit: Sendable {
    /// One engine, calls to the server, timers on ``clock``.
    public let service: OptimizationService
    /// Starts at the current wall-clock time and moves only when a test advances it.
    public let clock: ManualClock
    /// The visitor cookies, sealed on ``clock`` for `VisitorCookies.maxAge`.
    public let cookies: VisitorCookies
    /// Replay tickets living 600 s on ``clock``.
    public let tickets: OptimizationReplayTickets
    /// Ids the webhook route invalidated.
    public let invalidated: SendableRecorder<String>

    /// - Parameters:
    ///   - server: where the service's Experience and Insights calls go.
    ///   - clientId: the configuration's client id.
    ///   - allowedEventTypes: the events allowed before consent; nil is the library's default.
    ///   - secureCookies: whether the cookies carry `Secure`.
    public init(server: LocalOptimizationAPIServer, clientId: String, allowedEventTypes: [String]? = nil, secureCookies: Bool = true) {
        clock = ManualClock(start: Date().timeIntervalSince1970 * 1000)
        service = server.makeService(clientId: clientId, allowedEventTypes: allowedEventTypes, clock: clock)
        cookies = VisitorCookies(
            codec: VisitorStateCodec(keys: WebIntegrationFixtures.keys, lifetime: .seconds(VisitorCookies.maxAge), clock: clock),
            secure: secureCookies)
        tickets = OptimizationReplayTickets(keys: WebIntegrationFixtures.keys, lifetime: .seconds(600), clock: clock)
        invalidated = SendableRecorder()
    }

    /// A `Cookie` header value carrying `state` sealed with the app's key.
    public func cookie(_ state: VisitorState) -> String {
        cookies.cookieHeader(for: state)
    }
}
