import HTTPTypes
import Hummingbird
import Optimization

extension OptimizationReplayTickets.CommitOutcome {
    /// The HTTP status the replay route answers with (`statusCode` as an `HTTPResponse.Status`).
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: statusCode) }
}

extension OptimizationReplayTickets {
    /// A sealed ticket for `replay`, bound to the visitor of `context` (its nonce, issued now and
    /// stored by the response's state cookie when it has none): `issue(_:for:client:)` of the library
    /// for a Hummingbird request. Nil before ``OptimizationMiddleware`` ran, or when the library
    /// issues no ticket (see `issue(_:visitorNonce:client:)`).
    /// - Parameters:
    ///   - replay: the page's replay (`OptimizationHandoff.replay`).
    ///   - context: the request's context, prepared by ``OptimizationMiddleware``.
    ///   - client: the key the tickets' issuance limit counts by (see `issue(_:visitorNonce:client:)`).
    public func issue(_ replay: OptimizationHandoff.Replay, for context: OptimizationContext, client: String? = nil) -> String? {
        context.state.flatMap { issue(replay, for: $0, client: client) }
    }
}

extension RouterMethods where Context: OptimizationRequestContext {
    /// Mounts the replay route: `POST path` with the body `{"ticket": "<sealed ticket>"}` (at most
    /// 1 MB), as a handoff page carries it (`OptimizationReplayTickets.issue(_:for:client:)`).
    /// The ticket's replay is committed once, for the visitor it was issued to, with that
    /// visitor's request (`OptimizationReplayTickets.commit(_:for:visitorState:logger:)`).
    ///
    /// 403 before anything is read when a browser sent it on behalf of another site
    /// (`CrossSiteRequestCheck`, as the consent route). 204 committed; 422 a body that is not
    /// `{"ticket": string}`; 403 a forged, tampered or
    /// expired ticket, one issued by another process when the ledger is not shared, a ticket
    /// issued to another visitor (the state cookie's nonce differs) or consent blocking it now;
    /// 409 already committed; 503 the ledger is full or cannot be reached; 502 the Experience
    /// API did not take it. Only 204 and 502 make an upstream call.
    ///
    /// Needs ``OptimizationMiddleware`` before it (500 otherwise).
    /// - Parameters:
    ///   - path: the route's path; default `/replay`.
    ///   - tickets: opens tickets and records committed ones.
    ///   - acceptsRequestsWithoutSiteHeaders: true also accepts a request with none of
    ///     `Sec-Fetch-Site`, `Origin`, `Referer` (curl-style clients); default false.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addReplayRoute(_ path: RouterPath = "/replay", tickets: OptimizationReplayTickets, acceptsRequestsWithoutSiteHeaders: Bool = false) -> Self {
        post(path) { request, context -> Response in
            let optimization = try context.optimization.request
            guard CrossSiteRequestCheck.isSameSite(request, acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders) else {
                context.logger.notice("replay refused: the request came from another site")
                return Response(status: .forbidden)
            }
            let body = try await request.body.collect(upTo: OptimizationReplayTickets.maximumRequestBodyBytes)
            guard let ticket = OptimizationReplayTickets.ticketText(inRequestBody: Array(body.readableBytesView)) else {
                return Response(status: .unprocessableContent)
            }
            let visitorState = context.optimization.visitorState
            return Response(status: await tickets.commit(ticket, for: optimization, visitorState: visitorState, logger: context.logger).status)
        }
        return self
    }
}
