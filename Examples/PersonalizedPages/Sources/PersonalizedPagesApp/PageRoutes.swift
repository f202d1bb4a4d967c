import Foundation
import Hummingbird
import Logging
import Optimization
import OrderedCollections

/// The HTTP routes of the personalized-pages service.
///
/// The visitor's profile id, consent and selections come from the sealed `pp_state` cookie
/// (``VisitorCookies``); a missing, forged or expired one is a new visitor.
///
/// - `GET /`: personalized page. One `page()` Experience call for the visitor (consent, profile
///   and the handoff selections from the state cookie, locale from `Accept-Language`, URL and
///   user agent as event context), the variants of the resulting selections rendered, one
///   `trackView` per rendered entry (when the request has a profile id; consent decides whether
///   it leaves). With persistence consent the new profile id and selections are written back into
///   the state cookie when they changed.
/// - `GET /handoff`: personalized from the state cookie's selections only: resolution, no
///   Experience call, no events (the load test's "resolve only" case).
/// - `GET /events`: as `/handoff`, plus one `trackView` per rendered entry (when the request has
///   a profile id): the event path without an Experience call (the load test's "events" case).
/// - `GET /first`: a first visit handed over to the browser: the page view is evaluated with a
///   preflight Experience call (nothing stored), the variants of its answer are rendered, and the
///   page carries the handoff (`<script type="application/json" id="optimization-handoff">`) and
///   a sealed replay ticket (`<script type="application/json" id="optimization-replay">`,
///   `{"ticket":"…"}`, ``ReplayTicket``) bound to the visitor; `Cache-Control: private, no-store`.
/// - `POST /replay`: stands in for the browser: the body is the page's `{"ticket":"…"}`; the
///   ticket's replay (never one from the body) is committed once, for the visitor it was issued
///   to. 204 committed; 422 a body that is not `{"ticket": string}`; 403 a forged, tampered or
///   expired ticket, a ticket issued to another visitor (the state cookie's profile id differs),
///   or consent blocking it now; 409 a ticket already committed by this process
///   (``ReplayLedger``); 503 the ledger is full; 502 the Experience API did not take it. Only the
///   204 and 502 cases make an upstream call.
/// - `GET /plain`: the baselines, without the engine (the load test's reference).
/// - `POST /consent`: form field `consent=accept|decline`; refused with 403 when a browser sent
///   it for another site (``CrossSiteRequestCheck``). Accepting keeps the state and records the
///   consent; declining replaces the state with the choice alone (no profile id, no
///   selections). Redirects to `/`.
/// - `GET /healthz`: `ok`.
///
/// Handlers never fail on visitor input: a bad cookie is ignored, a failing Experience API
/// renders the handoff selections or baselines.
public struct PageRoutes: Sendable {
    public let service: OptimizationService
    public let content: PageContent
    /// Reads and writes the sealed state cookie.
    public let cookies: VisitorCookies
    /// Seals and opens replay tickets (purpose ``ReplayTicket/purpose``).
    public let tickets: SignedValueCodec
    /// The replays committed by this process.
    public let ledger: ReplayLedger

    /// - Parameters:
    ///   - service: the started Optimization service.
    ///   - content: the page's entries.
    ///   - cookies: reads and writes the sealed state cookie.
    ///   - tickets: seals and opens replay tickets; its lifetime bounds how long a `/first`
    ///     page's replay may be committed.
    ///   - ledger: records committed tickets; keep ids at least as long as a ticket lives.
    public init(service: OptimizationService, content: PageContent, cookies: VisitorCookies, tickets: SignedValueCodec, ledger: ReplayLedger) {
        self.service = service
        self.content = content
        self.cookies = cookies
        self.tickets = tickets
        self.ledger = ledger
    }

    public func register(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/plain") { request, _ in
            let state = cookies.state(of: request)
            return html(PageRenderer.page(sections: content.entries.map(PageRenderer.Section.init(baseline:)), consent: state.consent, mode: "plain"))
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
        let state = cookies.state(of: request)
        let optimization = service.forRequest(Self.options(request, state: state, context: context))
        let routeKey = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
        var handoff = OptimizationHandoff(cache: .init(scope: .privateRequest), profileId: optimization.profileId)
        do {
            handoff = try await optimization.prepareRequestHandoff(routeKey: routeKey).handoff
        } catch {
            context.logger.warning("no handoff prepared; rendering without fresh selections", metadata: ["error": "\(error)"])
        }
        let resolved = content.entries.map { PageRenderer.Section(baseline: $0, resolved: optimization.resolveOptimizedEntry(baseline: $0)) }
        var page = PageRenderer.page(sections: resolved, consent: state.consent, mode: "first")
        // The state the visitor holds after this response: the replay is bound to its profile id.
        var next = state
        if optimization.canPersistProfile, let id = handoff.profileId { next.profileId = id }
        var scripts = ""
        if (try? handoff.assertCacheSafe()) != nil, let json = try? handoff.json.jsonText() {
            // `<` escaped so the JSON cannot close the script element.
            scripts += #"<script type="application/json" id="optimization-handoff">"# + json.replacingOccurrences(of: "<", with: "\\u003c") + "</script>\n"
        }
        if let replay = handoff.replay, let ticket = ReplayTicket(profileId: next.profileId, replay: replay).sealed(with: tickets) {
            // The sealed text is only `A–Z a–z 0–9 - _ .`: safe in JSON and HTML as it is.
            scripts += #"<script type="application/json" id="optimization-replay">{"ticket":""# + ticket + "\"}</script>\n"
        }
        page = page.replacingOccurrences(of: "</body>", with: scripts + "</body>")
        var response = html(page)
        response.headers[.cacheControl] = "private, no-store"
        if next != state { response.setCookie(cookies.cookie(for: next)) }
        return response
    }

    func replay(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 1 << 20)
        guard let json = try? JSONValue(jsonText: String(buffer: body)), let text = json["ticket"]?.stringValue else {
            return Response(status: .unprocessableContent)
        }
        let state = cookies.state(of: request)
        guard let ticket = ReplayTicket(sealed: text, codec: tickets) else {
            context.logger.notice("replay refused: the ticket is forged, tampered or expired")
            return Response(status: .forbidden)
        }
        guard ticket.profileId == state.profileId else {
            context.logger.notice("replay refused: the ticket was issued to another visitor")
            return Response(status: .forbidden)
        }
        switch ledger.claim(ticket.id) {
        case .claimed: break
        case .alreadyCommitted: return Response(status: .conflict)
        case .full:
            context.logger.warning("replay refused: the ledger of committed replays is full")
            return Response(status: .serviceUnavailable)
        }
        let optimization = service.forRequest(Self.options(request, state: state, context: context))
        do {
            switch try await optimization.commitReplay(ticket.replay).outcome {
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
        let state = cookies.state(of: request)
        let selections = state.selections ?? .empty
        let sections = content.entries.map { baseline in
            PageRenderer.Section(baseline: baseline, resolved: service.resolveOptimizedEntry(baseline: baseline, selectedOptimizations: selections))
        }
        return html(PageRenderer.page(sections: sections, consent: state.consent, mode: "handoff"))
    }

    func eventsPage(_ request: Request, context: BasicRequestContext) async -> Response {
        let state = cookies.state(of: request)
        let optimization = service.forRequest(Self.options(request, state: state, context: context))
        let resolved = content.entries.map { ($0, optimization.resolveOptimizedEntry(baseline: $0)) }
        let response = html(PageRenderer.page(
            sections: resolved.map { PageRenderer.Section(baseline: $0.0, resolved: $0.1) },
            consent: state.consent, mode: "events"))
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
        let state = cookies.state(of: request)
        let optimization = service.forRequest(Self.options(request, state: state, context: context))
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
            consent: state.consent, mode: "personalized"))
        if optimization.canPersistProfile {
            // Written when it changed: the browser keeps what it sent.
            var next = state
            if let id = optimization.profileId { next.profileId = id }
            if let selections = optimization.selectedOptimizations { next.selections = selections }
            if next != state { response.setCookie(cookies.cookie(for: next)) }
        }
        if optimization.profileId != nil { await trackViews(resolved, on: optimization, context: context) }
        return response
    }

    // MARK: Consent

    func consent(_ request: Request, context: BasicRequestContext) async throws -> Response {
        guard CrossSiteRequestCheck.isSameSite(request) else {
            context.logger.notice("consent refused: the request came from another site")
            return Response(status: .forbidden)
        }
        let body = try await request.body.collect(upTo: 4096)
        let form = Self.formFields(String(buffer: body))
        let accepted: Bool
        switch form["consent"] {
        case "accept": accepted = true
        case "decline": accepted = false
        default: throw HTTPError(.badRequest, message: "consent must be accept or decline")
        }
        var next = VisitorState(consent: accepted)
        if accepted {
            next = cookies.state(of: request)
            next.consent = true
        }
        var response = Response(status: .seeOther, headers: [.location: "/"])
        response.setCookie(cookies.cookie(for: next))
        return response
    }

    // MARK: Request details

    /// The request's options: consent, profile and the handoff selections from the visitor's
    /// state, locale from `Accept-Language`, URL and user agent as event context.
    static func options(_ request: Request, state: VisitorState, context: BasicRequestContext) -> RequestOptions {
        RequestOptions(
            consent: VisitorCookies.requestConsent(state),
            profileId: state.profileId,
            locale: locale(request),
            eventContext: eventContext(request),
            selectedOptimizations: state.selections,
            requestId: requestId(context))
    }

    /// Hummingbird's request id (from the request logger's metadata; `context.id` traps when the
    /// log handler keeps no metadata, as the no-op handler does), or a fresh one.
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
