/// Refuses a state-changing request (the consent and replay routes' `POST`) that a browser sent on
/// behalf of another site, by the headers browsers set themselves and pages cannot forge:
///
/// 1. `Sec-Fetch-Site`, when present, must be `same-origin` (or `none`, a request the user made
///    directly); `same-site` (another subdomain) and `cross-site` are refused.
/// 2. Otherwise `Origin`, when present, must name this server: its host and port equal the
///    request's `Host` (the scheme is not compared, so a TLS-terminating proxy in front works
///    when it passes `Host` through). `Origin: null` is refused.
/// 3. Otherwise `Referer`, when present, must name this server in the same way.
/// 4. A request with none of the three is refused: a browser can be made to send a cross-site form
///    POST without `Sec-Fetch-Site` (an old browser), with `Origin` suppressed (some privacy
///    settings and extensions) and with no `Referer` (`Referrer-Policy: no-referrer`). Current
///    browsers send `Sec-Fetch-Site` or `Origin` with every POST, so same-site forms pass. A
///    deployment whose non-browser clients (curl, scripts) post without them accepts them with
///    `acceptsRequestsWithoutSiteHeaders` (and then relies on rules 1–3 alone).
///
/// No token is needed, so the consent form stays a plain HTML form. Each web integration adds an
/// overload taking its framework's request.
///
/// **Threading.** A pure function of the request's headers: call it from any task.
public enum CrossSiteRequestCheck {
    /// True when a request with these header values may change the visitor's state (see the
    /// type's rules). Each argument is the header's value, nil when the request has none.
    /// - Parameters:
    ///   - secFetchSite: `Sec-Fetch-Site`.
    ///   - origin: `Origin`.
    ///   - referer: `Referer`.
    ///   - host: the request's `Host` (or HTTP/2 `:authority`), `host[:port]`.
    ///   - acceptsRequestsWithoutSiteHeaders: true accepts a request that carries none of the
    ///     three (rule 4); default false.
    public static func isSameSite(
        secFetchSite: String?, origin: String?, referer: String?, host: String?, acceptsRequestsWithoutSiteHeaders: Bool = false
    ) -> Bool {
        if let secFetchSite {
            return secFetchSite == "same-origin" || secFetchSite == "none"
        }
        guard let named = origin ?? referer else { return acceptsRequestsWithoutSiteHeaders }
        guard let authority = authority(of: named), let host else { return false }
        return authority == host.lowercased()
    }

    /// `host[:port]` of an `http`/`https` URL, lowercased; nil for anything else (`null`).
    static func authority(of url: String) -> String? {
        let lowered = url.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = lowered.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            rest = lowered.dropFirst(7)
        } else {
            return nil
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return String(authority)
    }
}
