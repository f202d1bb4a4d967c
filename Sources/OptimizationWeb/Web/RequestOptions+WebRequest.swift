import OptimizationServiceFace
import Foundation
import OptimizationJSON
import OrderedCollections

extension RequestOptions {
    /// The options of an HTTP request of a visitor in `visitorState`: consent (both event and
    /// persistence consent from the visitor's one choice, ``VisitorCookies/requestConsent(_:)``),
    /// profile id and handoff selections from the state, locale from the first language of
    /// `Accept-Language`, `page` (`url`, `path`, `search`) and `userAgent` as event context, and
    /// `requestId`. No IP address: add one only from a proxy you trust. Pure; never throws (an
    /// unusable `Accept-Language` gives no locale).
    ///
    /// Every header and URL part is visitor text that rides in Insights requests shared with
    /// other visitors, so each is bounded before it is used (control characters removed, cut on a
    /// Unicode scalar boundary, `RequestTextBounds`): `User-Agent` to 512 bytes, the path and
    /// the query to 2,048 bytes each, `Host` to 255, and the composed `page.url` (and
    /// `page.search`) to 2,048; a longer value is truncated, never refused.
    /// - Parameters:
    ///   - visitorState: the visitor's verified state.
    ///   - host: the request's `Host` (`host[:port]`); nil is `localhost`.
    ///   - path: the request's path, as received.
    ///   - query: the request's query without `?`; nil or empty for none.
    ///   - acceptLanguage: the `Accept-Language` header; nil for none.
    ///   - userAgent: the `User-Agent` header; nil for none.
    ///   - requestId: the request's id for log metadata; nil for none.
    public init(
        visitorState: VisitorState, host: String?, path: String, query: String?,
        acceptLanguage: String?, userAgent: String?, requestId: String? = nil
    ) {
        self.init(
            consent: VisitorCookies.requestConsent(visitorState),
            profileId: visitorState.profileId,
            locale: acceptLanguage.flatMap(Self.firstLanguage),
            eventContext: Self.webEventContext(host: host, path: path, query: query ?? "", userAgent: userAgent),
            selectedOptimizations: visitorState.selections,
            requestId: requestId)
    }

    /// The first language of an `Accept-Language` header (`de-DE,de;q=0.9` → `de-DE`), or nil.
    static func firstLanguage(_ header: String) -> String? {
        // The first language range without its parameters or the spaces and tabs around it (no
        // Foundation: this runs on every request that sends the header).
        guard var tag = header.utf8.split(separator: UInt8(ascii: ",")).first?.split(separator: UInt8(ascii: ";")).first else { return nil }
        while let first = tag.first, first == 0x20 || first == 0x09 { tag = tag.dropFirst() }
        while let last = tag.last, last == 0x20 || last == 0x09 { tag = tag.dropLast() }
        guard (2...35).contains(tag.count), !tag.elementsEqual("*".utf8),
              tag.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return String(Substring(tag))
    }

    /// The most bytes of `Host` in `page.url` (a DNS name is at most 253, a port 6 more).
    static let hostBytes = 255

    /// `page` (url, path, query) and `userAgent`, merged under every event of the request, each
    /// bounded (see ``init(visitorState:host:path:query:acceptLanguage:userAgent:requestId:)``).
    static func webEventContext(host: String?, path: String, query: String, userAgent: String?) -> OrderedDictionary<String, JSONValue> {
        let host = RequestTextBounds.bounded(host ?? "localhost", maxBytes: Self.hostBytes)
        let path = RequestTextBounds.bounded(path, maxBytes: RequestTextBounds.contextStringBytes)
        let query = RequestTextBounds.bounded(query, maxBytes: RequestTextBounds.contextStringBytes)
        let userAgent = RequestTextBounds.bounded(userAgent, maxBytes: RequestTextBounds.userAgentBytes)
        let url = "http://\(host)\(path)\(query.isEmpty ? "" : "?" + query)"
        var page: OrderedDictionary<String, JSONValue> = [
            "url": .string(RequestTextBounds.bounded(url, maxBytes: RequestTextBounds.contextStringBytes)),
            "path": .string(path),
        ]
        if !query.isEmpty { page["search"] = .string(RequestTextBounds.bounded("?" + query, maxBytes: RequestTextBounds.contextStringBytes)) }
        var context: OrderedDictionary<String, JSONValue> = ["page": .object(page)]
        if let userAgent { context["userAgent"] = .string(userAgent) }
        return context
    }
}
