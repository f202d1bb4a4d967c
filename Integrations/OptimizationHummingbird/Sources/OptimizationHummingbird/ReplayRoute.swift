import HTTPTypes
import Hummingbird
import JavaScriptHost
import Logging
import Optimization

/// Issues and commits the replay tickets of handoff pages: a page that hands its evaluation to
/// the browser (`OptimizationRequest.prepareRequestHandoff(routeKey:initialEvents:page:)`)
/// carries its replay as a sealed ``ReplayTicket`` (``issue(_:profileId:)``), and the replay route
/// (``Hummingbird/RouterMethods/addReplayRoute(_:tickets:)``) commits each ticket once, for the
/// visitor it was issued to (``commit(_:for:visitorState:logger:)``).
///
/// **Threading.** An immutable `Sendable` value (the ledger is thread-safe): share one.
public struct OptimizationReplayTickets: Sendable {
    /// Seals and opens tickets (purpose ``ReplayTicket/purpose``); its lifetime bounds how long a
    /// page's replay may be committed.
    public let codec: SignedValueCodec
    /// The tickets this process committed.
    public let ledger: ReplayLedger

    /// - Parameters:
    ///   - codec: seals and opens tickets; its purpose should be ``ReplayTicket/purpose``.
    ///   - ledger: records committed tickets; keep ids at least as long as a ticket lives.
    public init(codec: SignedValueCodec, ledger: ReplayLedger) {
        self.codec = codec
        self.ledger = ledger
    }

    /// Tickets sealed with `keys` (the visitor-state keys will do: the purpose keeps tickets and
    /// state apart) for `lifetime`, and a ledger keeping each committed id as long.
    /// - Parameters:
    ///   - keys: the signing keys (the first signs, every key verifies).
    ///   - lifetime: how long a ticket may be committed; default 10 minutes.
    ///   - capacity: the most committed ids kept at once; default 100,000.
    ///   - clock: the time of expiry; default wall-clock time.
    public init(keys: VisitorStateKeys, lifetime: Duration = .seconds(600), capacity: Int = 100_000, clock: any HostClock = SystemClock()) {
        let codec = SignedValueCodec(keys: keys, purpose: ReplayTicket.purpose, lifetime: lifetime, clock: clock)
        self.init(codec: codec, ledger: ReplayLedger(retention: codec.lifetime, capacity: capacity, clock: clock))
    }

    /// A sealed ticket for `replay`, bound to the visitor whose state will carry `profileId` (nil:
    /// a visitor without a profile id), or nil when the replay's events cannot be written as JSON.
    /// The sealed text is only `A–Z a–z 0–9 - _ .`: safe in JSON and HTML as it is.
    public func issue(_ replay: OptimizationHandoff.Replay, profileId: String?) -> String? {
        ReplayTicket(profileId: profileId, replay: replay).sealed(with: codec)
    }

    /// What ``commit(_:for:visitorState:logger:)`` did, and the HTTP status that tells it.
    public enum CommitOutcome: Sendable, Equatable {
        /// Committed: 204.
        case committed
        /// Forged, tampered, expired or of another purpose: 403, nothing sent.
        case invalidTicket
        /// Issued to another visitor (the state's profile id differs): 403, nothing sent.
        case otherVisitor
        /// The visitor's consent blocks every event of the replay now: 403, nothing sent.
        case blockedByConsent
        /// Committed before by this process: 409, nothing sent.
        case alreadyCommitted
        /// The ledger is full of unexpired ids: 503, nothing sent.
        case ledgerFull
        /// The library refused the replay (not a replay it can commit): 422.
        case invalidReplay
        /// The Experience API did not take it (failure, timeout, open circuit): 502.
        case notDelivered

        /// The HTTP status the replay route answers with.
        public var status: HTTPResponse.Status {
            switch self {
            case .committed: .noContent
            case .invalidTicket, .otherVisitor, .blockedByConsent: .forbidden
            case .alreadyCommitted: .conflict
            case .ledgerFull: .serviceUnavailable
            case .invalidReplay: .unprocessableContent
            case .notDelivered: .badGateway
            }
        }
    }

    /// Commits the replay sealed in `ticket` once, with `optimization` (the presenting visitor's
    /// request, whose consent gates each event), when the ticket opens with ``codec`` and was
    /// issued to the visitor whose verified state is `visitorState`. The replay is taken from the
    /// ticket, never from the request. Only ``CommitOutcome/committed`` and
    /// ``CommitOutcome/notDelivered`` (and ``CommitOutcome/blockedByConsent``, which sends
    /// nothing) reach the engine; a ticket is claimed in the ledger before the call, so a failed
    /// call is not retried with the same ticket.
    /// - Parameters:
    ///   - ticket: the sealed ticket text the page carried.
    ///   - optimization: the presenting visitor's request (``OptimizationContext/request``).
    ///   - visitorState: the presenting visitor's verified state
    ///     (``OptimizationContext/visitorState``).
    ///   - logger: refusals are logged at notice level, without the ticket or visitor.
    /// - Returns: what was done; ``CommitOutcome/status`` is the HTTP answer.
    public func commit(_ ticket: String, for optimization: OptimizationRequest, visitorState: VisitorState, logger: Logger) async -> CommitOutcome {
        guard let ticket = ReplayTicket(sealed: ticket, codec: codec) else {
            logger.notice("replay refused: the ticket is forged, tampered or expired")
            return .invalidTicket
        }
        guard ticket.profileId == visitorState.profileId else {
            logger.notice("replay refused: the ticket was issued to another visitor")
            return .otherVisitor
        }
        switch ledger.claim(ticket.id) {
        case .claimed: break
        case .alreadyCommitted: return .alreadyCommitted
        case .full:
            logger.warning("replay refused: the ledger of committed replays is full")
            return .ledgerFull
        }
        do {
            switch try await optimization.commitReplay(ticket.replay).outcome {
            case .delivered, .accepted: return .committed
            case .blocked: return .blockedByConsent
            default: return .notDelivered
            }
        } catch {
            logger.warning("replay not committed", metadata: ["error": "\(error)"])
            return .invalidReplay
        }
    }
}

extension RouterMethods where Context: OptimizationRequestContext {
    /// Mounts the replay route: `POST path` with the body `{"ticket": "<sealed ticket>"}` (at most
    /// 1 MB), as a handoff page carries it (``OptimizationReplayTickets/issue(_:profileId:)``).
    /// The ticket's replay is committed once, for the visitor it was issued to, with that
    /// visitor's request (``OptimizationReplayTickets/commit(_:for:visitorState:logger:)``).
    ///
    /// 204 committed; 422 a body that is not `{"ticket": string}`; 403 a forged, tampered or
    /// expired ticket, a ticket issued to another visitor (the state cookie's profile id differs)
    /// or consent blocking it now; 409 already committed by this process; 503 the ledger is full;
    /// 502 the Experience API did not take it. Only 204 and 502 make an upstream call.
    ///
    /// Needs ``OptimizationMiddleware`` before it (500 otherwise).
    /// - Parameters:
    ///   - path: the route's path; default `/replay`.
    ///   - tickets: opens tickets and records committed ones.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addReplayRoute(_ path: RouterPath = "/replay", tickets: OptimizationReplayTickets) -> Self {
        post(path) { request, context -> Response in
            let optimization = try context.optimization.request
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let json = try? JSONValue(jsonText: String(buffer: body)), let text = json["ticket"]?.stringValue else {
                return Response(status: .unprocessableContent)
            }
            let outcome = await tickets.commit(text, for: optimization, visitorState: context.optimization.visitorState, logger: context.logger)
            return Response(status: outcome.status)
        }
        return self
    }
}
