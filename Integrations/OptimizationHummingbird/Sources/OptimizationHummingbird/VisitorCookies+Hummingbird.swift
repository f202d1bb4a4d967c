import Hummingbird
import Optimization

extension VisitorCookies {
    /// The state in the Hummingbird request's `Cookie` fields, or a new visitor's (see
    /// `VisitorCookies.state(cookieHeader:)`). Pure apart from the codec's refusal count.
    public func state(of request: Request) -> VisitorState {
        state(cookieHeader: request.headers[values: .cookie].joined(separator: "; "))
    }

    /// The cookie storing `state` as a Hummingbird `Cookie`: the value from
    /// `VisitorCookies.value(for:)` (sealed now, without the selections when too long), `Max-Age`
    /// `maxAge`, `Path=/`, `HttpOnly`, `SameSite=Lax` and `Secure` unless `secure` is
    /// false. ``OptimizationMiddleware`` writes `VisitorCookies.setCookieHeader(for:)`, the same
    /// cookie.
    public func cookie(for state: VisitorState) -> Cookie {
        Cookie(name: name, value: value(for: state), maxAge: maxAge, path: Self.path, secure: secure, httpOnly: true, sameSite: .lax)
    }
}
