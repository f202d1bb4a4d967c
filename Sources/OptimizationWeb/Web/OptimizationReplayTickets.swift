import OptimizationServiceFace
import Logging
import OptimizationJSON
import HostPlatform

/// Issues and commits the replay tickets of handoff pages: a page that hands its evaluation to
/// the browser (`OptimizationRequest.prepareRequestHandoff(routeKey:initialEvents:page:)`)
/// carries its replay as a sealed ``ReplayTicket`` (``issue(_:for:client:)``), and an integration's
/// replay route commits each ticket once, for the visitor it was issued to
/// (``commit(_:for:visitorState:logger:)``).
///
/// **Once.** A ticket is claimed in the ``ledger`` before its replay is sent. With a ledger of
/// this process alone (``ReplayLedger/isSharedAcrossProcesses`` false), every ticket names this
/// process as its issuer (a random value per instance) and no other process commits it: not
/// another replica, not this app after a restart. With a shared ledger (a database), any
/// replica commits it, once.
///
/// **Bound to the visitor.** A ticket carries the visitor's nonce (``VisitorState/nonce``,
/// issued with the first ticket), never the optional profile id: a visitor without a profile
/// (no consent) cannot commit another such visitor's ticket.
///
/// **Threading.** An immutable `Sendable` value (the ledger is thread-safe): share one.
public struct OptimizationReplayTickets: Sendable {
    /// The largest body the replay route reads: 1 MiB (a ticket carries the page's events).
    public static let maximumRequestBodyBytes = 1 << 20
    /// The longest route key a ticket carries, in UTF-8 bytes: a longer one is carried without
    /// its query (`?…`), and one whose path alone is longer gets no ticket.
    public static let maximumRouteKeyBytes = 1_024

    /// Seals and opens tickets (purpose ``ReplayTicket/purpose``); its lifetime bounds how long a
    /// page's replay may be committed.
    public let codec: SignedValueCodec
    /// The record of committed tickets.
    public let ledger: any ReplayLedger
    /// The issuer this instance writes into its tickets and requires of the tickets it commits;
    /// nil when the ledger is shared across processes.
    public let issuer: String?
    /// How many tickets one client may be issued (``issue(_:visitorNonce:client:)``); nil for no bound.
    public let issuanceLimit: ReplayIssuanceLimit?

    /// - Parameters:
    ///   - codec: seals and opens tickets; its purpose should be ``ReplayTicket/purpose``.
    ///   - ledger: records committed tickets; keep ids at least as long as a ticket lives.
    ///   - issuanceLimit: bounds the tickets issued per client; default nil (no bound).
    public init(codec: SignedValueCodec, ledger: any ReplayLedger, issuanceLimit: ReplayIssuanceLimit? = nil) {
        self.codec = codec
        self.ledger = ledger
        self.issuer = ledger.isSharedAcrossProcesses ? nil : ReplayTicket.randomHex()
        self.issuanceLimit = issuanceLimit
    }

    /// Tickets sealed with `keys` (the visitor-state keys will do: the purpose keeps tickets and
    /// state apart) for `lifetime`, and a ledger of this process keeping each committed id as long.
    /// - Parameters:
    ///   - keys: the signing keys (the first signs, every key verifies).
    ///   - lifetime: how long a ticket may be committed; default 10 minutes.
    ///   - capacity: the most committed ids kept at once; default 100,000.
    ///   - clock: the time of expiry; default wall-clock time.
    public init(keys: VisitorStateKeys, lifetime: Duration = .seconds(600), capacity: Int = 100_000, clock: any HostClock = SystemClock()) {
        let codec = SignedValueCodec(keys: keys, purpose: ReplayTicket.purpose, lifetime: lifetime, clock: clock)
        self.init(codec: codec, ledger: InMemoryReplayLedger(retention: codec.lifetime, capacity: capacity, clock: clock))
    }

    /// A sealed ticket for `replay`, bound to the visitor whose state carries `visitorNonce`, or
    /// nil when the replay's events cannot be written as JSON, its route's path is longer than
    /// ``maximumRouteKeyBytes``, the ticket would be too long to open, or `client` had its bound
    /// of tickets (``issuanceLimit``). The sealed text is only `A–Z a–z 0–9 - _ .`: safe in JSON
    /// and HTML as it is.
    /// - Parameters:
    ///   - replay: the page's replay (`OptimizationHandoff.replay`).
    ///   - visitorNonce: the nonce of the visitor the ticket is for (``VisitorState/nonce``).
    ///   - client: the key ``issuanceLimit`` counts tickets by (the connection's address, say);
    ///     nil counts nothing.
    public func issue(_ replay: OptimizationHandoff.Replay, visitorNonce: String, client: String? = nil) -> String? {
        guard VisitorNonce.isWellFormed(visitorNonce) else { return nil }
        if let client, let issuanceLimit, !issuanceLimit.admit(client: client) { return nil }
        var replay = replay
        if replay.routeKey.utf8.count > Self.maximumRouteKeyBytes {
            let path = replay.routeKey.prefix { $0 != "?" }
            guard path.utf8.count <= Self.maximumRouteKeyBytes else { return nil }
            replay.routeKey = String(path)
        }
        return ReplayTicket(visitorNonce: visitorNonce, issuer: issuer, replay: replay).sealed(with: codec)
    }

    /// ``issue(_:visitorNonce:client:)`` for the visitor of `state`: its nonce, issued now when
    /// its state has none (the response's state cookie then stores it).
    /// - Parameters:
    ///   - replay: the page's replay (`OptimizationHandoff.replay`).
    ///   - state: the visitor's request state.
    ///   - client: the key ``issuanceLimit`` counts tickets by; nil counts nothing.
    public func issue(_ replay: OptimizationHandoff.Replay, for state: OptimizationRequestState, client: String? = nil) -> String? {
        issue(replay, visitorNonce: state.visitorNonce(), client: client)
    }

    /// The sealed ticket text of a replay route's body, `{"ticket": "<sealed ticket>"}` (UTF-8
    /// JSON); nil for any other body (not JSON, not an object, no string `ticket`), which the
    /// route answers with 422. Pure; never throws.
    public static func ticketText(inRequestBody body: [UInt8]) -> String? {
        guard let json = try? JSONValue(jsonText: String(decoding: body, as: UTF8.self)) else { return nil }
        return json["ticket"]?.stringValue
    }

    /// Commits the replay sealed in `ticket` once, with `optimization` (the presenting visitor's
    /// request, whose consent gates each event), when the ticket opens with ``codec``, was issued
    /// to the visitor whose verified state is `visitorState` (same nonce) and, with a ledger of
    /// this process, by this instance. The replay is taken from the ticket, never from the
    /// request. Only ``CommitOutcome/committed`` and ``CommitOutcome/notDelivered`` (and
    /// ``CommitOutcome/blockedByConsent``, which sends nothing) reach the engine; a ticket is
    /// claimed in the ledger before the call, so a failed call is not retried with the same
    /// ticket. Never throws: every failure is an outcome.
    /// - Parameters:
    ///   - ticket: the sealed ticket text the page carried.
    ///   - optimization: the presenting visitor's request.
    ///   - visitorState: the presenting visitor's verified state (from its state cookie).
    ///   - logger: refusals are logged at notice level, without the ticket or visitor.
    /// - Returns: what was done; ``CommitOutcome/statusCode`` is the HTTP answer.
    public func commit(_ ticket: String, for optimization: OptimizationRequest, visitorState: VisitorState, logger: Logger) async -> CommitOutcome {
        guard let ticket = ReplayTicket(sealed: ticket, codec: codec) else {
            logger.notice("replay refused: the ticket is forged, tampered or expired")
            return .invalidTicket
        }
        guard ticket.issuer == issuer else {
            logger.notice("replay refused: the ticket was issued by another process (a replica or before a restart) and the ledger is not shared")
            return .invalidTicket
        }
        guard let nonce = visitorState.nonce, ticket.visitorNonce == nonce else {
            logger.notice("replay refused: the ticket was issued to another visitor")
            return .otherVisitor
        }
        let claim: ReplayClaim
        do {
            claim = try await ledger.claim(ticket.id)
        } catch {
            logger.warning("replay refused: the ledger of committed replays cannot be reached", metadata: ["error": "\(error)"])
            return .ledgerUnavailable
        }
        switch claim {
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
