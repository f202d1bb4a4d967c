import Optimization
import Vapor

extension RoutesBuilder {
    /// Mounts the consent route: `POST path` with the form field `consent=accept|decline`
    /// (`application/x-www-form-urlencoded`, at most 4 KB), as a plain HTML form posts it
    /// (the library's `ConsentChoice`).
    ///
    /// - 303 to `redirectTo`, storing the choice in the visitor's state cookie: accepting keeps the
    ///   visitor's state and records the consent; declining replaces the state with the choice
    ///   alone (no profile id, no selections).
    /// - 403 when a browser sent it on behalf of another site (`CrossSiteRequestCheck`:
    ///   `Sec-Fetch-Site`, then `Origin`, then `Referer` must be same-origin, and a request with
    ///   none of them is refused unless `acceptsRequestsWithoutSiteHeaders`): no cookie is
    ///   written, the consent is unchanged.
    /// - 400 for a body without `consent=accept` or `consent=decline`; 413 for one over 4 KB.
    ///
    /// Needs ``OptimizationMiddleware`` before it (it writes the cookie; without the middleware the
    /// route answers 500). Sends nothing to the Optimization APIs.
    /// - Parameters:
    ///   - path: the route's path; default `/consent`.
    ///   - redirectTo: the `Location` of the 303; default `/`.
    ///   - acceptsRequestsWithoutSiteHeaders: true also accepts a request with none of
    ///     `Sec-Fetch-Site`, `Origin`, `Referer` (curl-style clients); default false.
    /// - Returns: the route.
    @discardableResult
    public func addConsentRoute(_ path: [PathComponent] = ["consent"], redirectTo: String = "/", acceptsRequestsWithoutSiteHeaders: Bool = false) -> Route {
        on(.POST, path, body: .stream) { request async throws -> Response in
            let visitor = try request.optimizationState
            guard CrossSiteRequestCheck.isSameSite(request, acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders) else {
                request.logger.notice("consent refused: the request came from another site")
                return Response(status: .forbidden)
            }
            guard let form = try await request.bodyBytes(upTo: ConsentChoice.maximumFormBytes) else {
                throw Abort(.payloadTooLarge)
            }
            guard let choice = ConsentChoice(formBody: form) else {
                throw Abort(.badRequest, reason: "consent must be accept or decline")
            }
            visitor.store(choice.applied(to: visitor.visitorState))
            return Response(status: .seeOther, headers: ["Location": redirectTo])
        }
    }
}

extension CrossSiteRequestCheck {
    /// True when the Vapor `request` may change the visitor's state: its `Sec-Fetch-Site`,
    /// `Origin` and `Referer` fields checked against its `Host` by
    /// `CrossSiteRequestCheck.isSameSite(secFetchSite:origin:referer:host:acceptsRequestsWithoutSiteHeaders:)`
    /// (a request with none of them is refused unless `acceptsRequestsWithoutSiteHeaders`). Pure.
    public static func isSameSite(_ request: Request, acceptsRequestsWithoutSiteHeaders: Bool = false) -> Bool {
        let fields = request.headers
        return isSameSite(
            secFetchSite: fields.first(name: "Sec-Fetch-Site"), origin: fields.first(name: .origin),
            referer: fields.first(name: .referer), host: fields.first(name: .host),
            acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders)
    }
}
