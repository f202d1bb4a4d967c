import Hummingbird
import Optimization

extension CrossSiteRequestCheck {
    /// True when the Hummingbird `request` may change the visitor's state: its `Sec-Fetch-Site`,
    /// `Origin` and `Referer` fields checked against its authority by
    /// `CrossSiteRequestCheck.isSameSite(secFetchSite:origin:referer:host:acceptsRequestsWithoutSiteHeaders:)`
    /// (a request with none of them is refused unless `acceptsRequestsWithoutSiteHeaders`). Pure.
    public static func isSameSite(_ request: Request, acceptsRequestsWithoutSiteHeaders: Bool = false) -> Bool {
        isSameSite(
            secFetchSite: request.headers.first(where: { $0.name.canonicalName == "sec-fetch-site" })?.value,
            origin: request.headers[.origin], referer: request.headers[.referer], host: request.head.authority,
            acceptsRequestsWithoutSiteHeaders: acceptsRequestsWithoutSiteHeaders)
    }
}
