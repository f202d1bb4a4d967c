import Hummingbird
import Optimization

extension RouterMethods where Context: OptimizationRequestContext {
    /// Mounts the consent route: `POST path` with the form field `consent=accept|decline`
    /// (`application/x-www-form-urlencoded`, at most 4 KB), as a plain HTML form posts it
    /// (`ConsentChoice`).
    ///
    /// - 303 to `redirectTo`, storing the choice in the visitor's state cookie: accepting keeps the
    ///   visitor's state and records the consent; declining replaces the state with the choice
    ///   alone (no profile id, no selections).
    /// - 403 when a browser sent it on behalf of another site (`CrossSiteRequestCheck`:
    ///   `Sec-Fetch-Site`, then `Origin`, then `Referer` must be same-origin, and a request with
    ///   none of them is refused unless `acceptsRequestsWithoutSiteHeaders`): no cookie is
    ///   written, the consent is unchanged.
    /// - 400 for a body without `consent=accept` or `consent=decline`.
    ///
    /// Needs ``OptimizationMiddleware`` before it (it writes the cookie; without the middleware the
    /// route answers 500). Sends nothing to the Optimization APIs.
    /// - Parameters:
    ///   - path: the route's path; default `/consent`.
    ///   - redirectTo: the `Location` of the 303; default `/`.
    ///   - acceptsRequestsWithoutSiteHeaders: true also accepts a request with none of
    ///     `Sec-Fetch-Site`, `Origin`, `Referer` (curl-style clients); default false.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addConsentRoute(_ path: RouterPath = "/consent", redirectTo: String = "/", acceptsRequestsWithoutSiteHeaders: Bool = false) -> Self {
        post(path) { request, context -> Response in
            guard let state = context.optimization.state else {
                throw HTTPError(.internalServerError, message: "OptimizationMiddleware is not installed for this route")
            }
            guard CrossSiteRequestCheck.isSameSite(request, acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders) else {
                context.logger.notice("consent refused: the request came from another site")
                return Response(status: .forbidden)
            }
            let form = try await request.body.collect(upTo: ConsentChoice.maximumFormBytes)
            guard let choice = ConsentChoice(formBody: Array(form.readableBytesView)) else {
                throw HTTPError(.badRequest, message: "consent must be accept or decline")
            }
            state.store(choice.applied(to: state.visitorState))
            return Response(status: .seeOther, headers: [.location: redirectTo])
        }
        return self
    }
}
