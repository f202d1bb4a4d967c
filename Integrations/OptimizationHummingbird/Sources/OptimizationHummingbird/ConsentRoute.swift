import Foundation
import Hummingbird
import Optimization

extension RouterMethods where Context: OptimizationRequestContext {
    /// Mounts the consent route: `POST path` with the form field `consent=accept|decline`
    /// (`application/x-www-form-urlencoded`, at most 4 KB), as a plain HTML form posts it.
    ///
    /// - 303 to `redirectTo`, storing the choice in the visitor's state cookie: accepting keeps the
    ///   visitor's state and records the consent; declining replaces the state with the choice
    ///   alone (no profile id, no selections).
    /// - 403 when a browser sent it on behalf of another site (``CrossSiteRequestCheck``:
    ///   `Sec-Fetch-Site`, then `Origin`, then `Referer` must be same-origin): no cookie is
    ///   written, the consent is unchanged.
    /// - 400 for a body without `consent=accept` or `consent=decline`.
    ///
    /// Needs ``OptimizationMiddleware`` before it (it writes the cookie; without the middleware the
    /// route answers 500). Sends nothing to the Optimization APIs.
    /// - Parameters:
    ///   - path: the route's path; default `/consent`.
    ///   - redirectTo: the `Location` of the 303; default `/`.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addConsentRoute(_ path: RouterPath = "/consent", redirectTo: String = "/") -> Self {
        post(path) { request, context -> Response in
            let optimization = context.optimization
            guard optimization.isPrepared else {
                throw HTTPError(.internalServerError, message: "OptimizationMiddleware is not installed for this route")
            }
            guard CrossSiteRequestCheck.isSameSite(request) else {
                context.logger.notice("consent refused: the request came from another site")
                return Response(status: .forbidden)
            }
            let body = try await request.body.collect(upTo: 4096)
            let accepted: Bool
            switch ConsentForm.fields(String(buffer: body))["consent"] {
            case "accept": accepted = true
            case "decline": accepted = false
            default: throw HTTPError(.badRequest, message: "consent must be accept or decline")
            }
            var next = VisitorState(consent: accepted)
            if accepted {
                next = optimization.visitorState
                next.consent = true
            }
            optimization.store(next)
            return Response(status: .seeOther, headers: [.location: redirectTo])
        }
        return self
    }
}

/// The consent route's form.
enum ConsentForm {
    /// `application/x-www-form-urlencoded` fields (the last of a repeated name wins).
    static func fields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }
}
