import Optimization
import Vapor

extension RoutesBuilder {
    /// Mounts the replay route: `POST path` with the body `{"ticket": "<sealed ticket>"}` (at most
    /// 1 MB), as a handoff page carries it (`OptimizationReplayTickets.issue(_:for:client:)`). The
    /// ticket's replay is committed once, for the visitor it was issued to, with that visitor's
    /// request (`OptimizationReplayTickets.commit(_:for:visitorState:logger:)`).
    ///
    /// 403 before anything is read when a browser sent it on behalf of another site
    /// (`CrossSiteRequestCheck`, as the consent route). 204 committed; 422 a body that is not
    /// `{"ticket": string}`; 403 a forged, tampered or
    /// expired ticket, one issued by another process when the ledger is not shared, a ticket
    /// issued to another visitor (the state cookie's nonce differs) or consent blocking it now;
    /// 409 already committed; 503 the ledger is full or cannot be reached;
    /// 502 the Experience API did not take it; 413 a body over 1 MB. Only 204 and 502 make an
    /// upstream call.
    ///
    /// Needs ``OptimizationMiddleware`` before it (500 otherwise).
    /// - Parameters:
    ///   - path: the route's path; default `/replay`.
    ///   - tickets: opens tickets and records committed ones.
    ///   - acceptsRequestsWithoutSiteHeaders: true also accepts a request with none of
    ///     `Sec-Fetch-Site`, `Origin`, `Referer` (curl-style clients); default false.
    /// - Returns: the route.
    @discardableResult
    public func addReplayRoute(
        _ path: [PathComponent] = ["replay"], tickets: OptimizationReplayTickets, acceptsRequestsWithoutSiteHeaders: Bool = false
    ) -> Route {
        on(.POST, path, body: .stream) { request async throws -> Response in
            let visitor = try request.optimizationState
            guard CrossSiteRequestCheck.isSameSite(request, acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders) else {
                request.logger.notice("replay refused: the request came from another site")
                return Response(status: .forbidden)
            }
            guard let body = try await request.bodyBytes(upTo: OptimizationReplayTickets.maximumRequestBodyBytes) else {
                throw Abort(.payloadTooLarge)
            }
            guard let text = OptimizationReplayTickets.ticketText(inRequestBody: body) else {
                return Response(status: .unprocessableEntity)
            }
            let outcome = await tickets.commit(text, for: visitor.request, visitorState: visitor.visitorState, logger: request.logger)
            return Response(status: HTTPResponseStatus(statusCode: outcome.statusCode))
        }
    }
}
