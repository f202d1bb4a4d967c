import Foundation
import Hummingbird
import Logging
import Optimization
import OrderedCollections

/// The HTTP routes of the personalized-pages service.
///
/// - `GET /`: personalized page. One `page()` Experience call for the visitor (consent and
///   profile from cookies, locale from `Accept-Language`, URL and user agent as event context,
///   the handoff cookie's selections as a fallback), the variants of the resulting selections
///   rendered, one `trackView` per rendered entry (when the request has a profile id; consent
///   decides whether it leaves). With persistence consent the profile id and the selections
///   (``SelectionHandoff``) are written back as cookies.
/// - `GET /handoff`: personalized from the handoff cookie only: resolution, no Experience call,
///   no events (the load test's "resolve only" case).
/// - `GET /events`: as `/handoff`, plus one `trackView` per rendered entry (when the request has
///   a profile id): the event path without an Experience call (the load test's "events" case).
/// - `GET /first`: a first visit handed over to the browser: the page view is evaluated with a
///   preflight Experience call (nothing stored), the variants of its answer are rendered, and the
///   page carries the handoff (`<script type="application/json" id="optimization-handoff">`) whose
///   replay the browser commits once; `Cache-Control: private, no-store`.
/// - `POST /replay`: stands in for the browser: the body is the page's handoff JSON, whose replay
///   is committed for the visitor (204; 403 when consent blocks it, 422 for a body that is not a
///   handoff with a replay, 502 when the Experience API did not take it).
/// - `GET /plain`: the baselines, without the engine (the load test's reference).
/// - `POST /consent`: form field `consent=accept|decline`; sets the consent cookie (declining
///   also deletes the profile and handoff cookies) and redirects to `/`.
/// - `GET /healthz`: `ok`.
///
/// Handlers never fail on visitor input: a bad cookie is ignored, a failing Experience API
/// renders the handoff selections or baselines.
public struct PageRoutes: Sendable {
    public let service: OptimizationService
    public let content: PageContent

    public init(service: OptimizationService, content: PageContent) {
        self.service = service
        self.content = content
    }

    public func register(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/plain") { request, _ in
            let cookies = VisitorCookies(request: request)
            return html(PageRenderer.page(sections: content.entries.map(PageRenderer.Section.init(baseline:)), consent: cookies.consent, mode: "plain"))
        }
        router.get("/handoff") { request, _ in
            handoffPage(request)
        }
        router.get("/events") { request, context in
            await eventsPage(request, context: context)
        }
        router.get("/") { request, context in
            await personalizedPage(request, context: context)
        }
        router.post("/consent") { request, context in
            try await consent(request, context: context)
        }
        router.get("/first") { request, context in
            await firstVisitPage(request, context: context)
        }
        router.post("/replay") { request, context in
            try await replay(request, context: context)
        }
    }

    // MARK: Handoff to the browser

    func firstVisitPage(_ request: Request, context: BasicRequestContext) async -> Response {
        let cookies = VisitorCookies(request: request)
        let optimization = service.forRequest(Self.options(request, cookies: cookies, context: context))
        let routeKey = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
        var handoff = OptimizationHandoff(cache: .init(scope: .privateRequest), profileId: optimization.profileId)
        do {
            handoff = try await optimization.prepareRequestHandoff(routeKey: routeKey).handoff
        } catch {
            context.logger.warning("no handoff prepared; rendering without fresh selections", metadata: ["error": "\(error)"])
        }
        let resolved = content.entries.map { PageRenderer.Section(baseline: $0, resolved: optimization.resolveOptimizedEntry(baseline: $0)) }
        var page = PageRenderer.page(sections: resolved, consent: cookies.consent, mode: "first")
        if (try? handoff.assertCacheSafe()) != nil, let json = try? handoff.json.jsonText() {
            // `<` escaped so the JSON cannot close the script element.
            let script = #"<script type="application/json" id="optimization-handoff">"# + json.replacingOccurrences(of: "<", with: "\\u003c") + "</script>\n"
            page = page.replacingOccurrences(of: "</body>", with: script + "</body>")
        }
        var response = html(page)
        response.headers[.cacheControl] = "private, no-store"
        if optimization.canPersistProfile, let id = handoff.profileId, VisitorCookies.isValidProfileId(id) {
            response.setCookie(VisitorCookies.cookie(name: VisitorCookies.profileCookieName, value: id))
        }
        return response
    }

    func replay(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        guard let json = try? JSONValue(jsonText: String(buffer: body)), let replay = OptimizationHandoff(json: json)?.replay else {
            return Response(status: .unprocessableContent)
        }
        let cookies = VisitorCookies(request: request)
        let optimization = service.forRequest(Self.options(request, cookies: cookies, context: context))
        do {
            switch try await optimization.commitReplay(replay).outcome {
            case .delivered, .accepted: return Response(status: .noContent)
            case .blocked: return Response(status: .forbidden)
            default: return Response(status: .badGateway)
            }
        } catch {
            context.logger.warning("replay not committed", metadata: ["error": "\(error)"])
            return Response(status: .unprocessableContent)
        }
    }

    // MARK: Pages

    func handoffPage(_ request: Request) -> Response {
        let cookies = VisitorCookies(request: request)
        let selections = cookies.handoff ?? .empty
        let sections = content.entries.map { baseline in
            PageRenderer.Section(baseline: baseline, resolved: service.resolveOptimizedEntry(baseline: baseline, selectedOptimizations: selections))
        }
        return html(PageRenderer.page(sections: sections, consent: cookies.consent, mode: "handoff"))
    }

    func eventsPage(_ request: Request, context: BasicRequestContext) async -> Response {
        let cookies = VisitorCookies(request: request)
        let optimization = service.forRequest(Self.options(request, cookies: cookies, context: context))
        let resolved = content.entries.map { ($0, optimization.resolveOptimizedEntry(baseline: $0)) }
        let response = html(PageRenderer.page(
            sections: resolved.map { PageRenderer.Section(baseline: $0.0, resolved: $0.1) },
            consent: cookies.consent, mode: "events"))
        if optimization.profileId != nil { await trackViews(resolved, on: optimization, context: context) }
        return response
    }

    /// One view per rendered entry: server-rendered, every entry counts as seen once, as the
    /// reference server SDK does (duration 0, a fresh view id); the consent gate decides what
    /// leaves.
    func trackViews(_ resolved: [(ContentfulEntry, ResolvedOptimizedEntry)], on optimization: OptimizationRequest, context: BasicRequestContext) async {
        for (baseline, entry) in resolved {
            do {
                try await optimization.trackView(TrackViewPayload(
                    componentId: baseline.id, viewId: Self.randomViewId(),
                    experienceId: entry.selectedOptimization?["experienceId"]?.stringValue,
                    optimizationContextId: entry.optimizationContextId,
                    variantIndex: entry.selectedOptimization?["variantIndex"]?.intValue ?? 0,
                    viewDuration: .milliseconds(0)))
            } catch {
                context.logger.warning("view not tracked", metadata: ["error": "\(error)"])
            }
        }
    }

    func personalizedPage(_ request: Request, context: BasicRequestContext) async -> Response {
        let cookies = VisitorCookies(request: request)
        let optimization = service.forRequest(Self.options(request, cookies: cookies, context: context))
        do {
            let result = try await optimization.page()
            if result.outcome != .delivered {
                context.logger.notice("rendering without fresh selections", metadata: ["outcome": "\(result.outcome)"])
            }
        } catch {
            context.logger.warning("page event failed; rendering without fresh selections", metadata: ["error": "\(error)"])
        }
        let resolved = content.entries.map { ($0, optimization.resolveOptimizedEntry(baseline: $0)) }
        var response = html(PageRenderer.page(
            sections: resolved.map { PageRenderer.Section(baseline: $0.0, resolved: $0.1) },
            consent: cookies.consent, mode: "personalized"))
        if optimization.canPersistProfile {
            // Written when they changed: the browser keeps what it sent.
            if let id = optimization.profileId, id != cookies.profileId, VisitorCookies.isValidProfileId(id) {
                response.setCookie(VisitorCookies.cookie(name: VisitorCookies.profileCookieName, value: id))
            }
            if let selections = optimization.selectedOptimizations, selections != cookies.handoff,
               let value = SelectionHandoff.encode(selections) {
                response.setCookie(VisitorCookies.cookie(name: SelectionHandoff.cookieName, value: value))
            }
        }
        if optimization.profileId != nil { await trackViews(resolved, on: optimization, context: context) }
        return response
    }

    // MARK: Consent

    func consent(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 4096)
        let form = Self.formFields(String(buffer: body))
        let accepted: Bool
        switch form["consent"] {
        case "accept": accepted = true
        case "decline": accepted = false
        default: throw HTTPError(.badRequest, message: "consent must be accept or decline")
        }
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(VisitorCookies.cookie(name: VisitorCookies.consentCookieName, value: accepted ? "yes" : "no"))
        if !accepted {
            response.setCookie(VisitorCookies.cookie(name: VisitorCookies.profileCookieName, value: "", maxAge: 0))
            response.setCookie(VisitorCookies.cookie(name: SelectionHandoff.cookieName, value: "", maxAge: 0))
        }
        return response
    }

    // MARK: Request details

    /// Hummingbird's request id (from the request logger's metadata; `context.id` traps when the
    /// log handler keeps no metadata, as the no-op handler does), or a fresh one.
    /// The request's options: consent and profile from the cookies, locale from
    /// `Accept-Language`, URL and user agent as event context, the handoff selections.
    static func options(_ request: Request, cookies: VisitorCookies, context: BasicRequestContext) -> RequestOptions {
        RequestOptions(
            consent: cookies.requestConsent,
            profileId: cookies.profileId,
            locale: locale(request),
            eventContext: eventContext(request),
            selectedOptimizations: cookies.handoff,
            requestId: requestId(context))
    }

    static func requestId(_ context: BasicRequestContext) -> String {
        context.logger[metadataKey: "hb.request.id"]?.description ?? randomViewId()
    }

    /// A random version-4 UUID from the system generator (`getrandom`; Foundation's `UUID()`
    /// opens, reads and closes `/dev/urandom` on every call on Linux).
    static func randomViewId() -> String {
        var generator = SystemRandomNumberGenerator()
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { bytes in
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        }
        return UUID(uuid: raw).uuidString.lowercased()
    }

    /// The first language of `Accept-Language` (`de-DE,de;q=0.9` → `de-DE`), or nil.
    static func locale(_ request: Request) -> String? {
        guard let header = request.headers[.acceptLanguage] else { return nil }
        let first = header.split(separator: ",").first?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? ""
        guard (2...35).contains(first.utf8.count), first != "*",
              first.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return first
    }

    /// `page` (url, path, query) and `userAgent`, merged under every event of the request.
    static func eventContext(_ request: Request) -> OrderedDictionary<String, JSONValue> {
        let path = request.uri.path
        let query = request.uri.query ?? ""
        let host = request.head.authority ?? "localhost"
        var page: OrderedDictionary<String, JSONValue> = [
            "url": .string("http://\(host)\(path)\(query.isEmpty ? "" : "?" + query)"),
            "path": .string(path),
        ]
        if !query.isEmpty { page["search"] = .string("?" + query) }
        var context: OrderedDictionary<String, JSONValue> = ["page": .object(page)]
        if let userAgent = request.headers[.userAgent] { context["userAgent"] = .string(userAgent) }
        return context
    }

    /// `application/x-www-form-urlencoded` fields (the last of a repeated name wins).
    static func formFields(_ body: String) -> [String: String] {
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

/// A `text/html` response carrying the ``SecurityHeaders``.
func html(_ text: String) -> Response {
    var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
    headers.append(contentsOf: SecurityHeaders.fields)
    return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
