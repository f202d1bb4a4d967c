import Foundation
import Hummingbird
import Logging
import Optimization
import OptimizationHummingbird

/// The HTTP routes of the personalized-pages service.
///
/// The visitor's profile id, consent and selections come from the sealed `pp_state` cookie, read
/// by the integration's `OptimizationMiddleware` (a missing, forged or expired one is a new
/// visitor), which also gives each route its `OptimizationRequest` and writes the cookie back.
///
/// - `GET /`: personalized page. One `page()` Experience call for the visitor (consent, profile
///   and the handoff selections from the state cookie, locale from `Accept-Language`, URL and
///   user agent as event context), the variants of the resulting selections rendered, a view
///   per rendered entry, all in one `trackViews` (when the request has a profile id; consent
///   decides whether they leave). With persistence consent the new profile id and selections are written back into
///   the state cookie when they changed.
/// - `GET /handoff`: personalized from the state cookie's selections only: resolution, no
///   Experience call, no events (the load test's "resolve only" case).
/// - `GET /events`: as `/handoff`, plus a view per rendered entry in one `trackViews` (when the
///   request has a profile id): the event path without an Experience call (the load test's "events" case).
/// - `GET /first`: a first visit handed over to the browser: the page view is evaluated with a
///   preflight Experience call (nothing stored), the variants of its answer are rendered, and the
///   page carries the handoff (`<script type="application/json" id="optimization-handoff">`) and
///   a sealed replay ticket (`<script type="application/json" id="optimization-replay">`,
///   `{"ticket":"…"}`, the integration's `ReplayTicket`) bound to the visitor; `Cache-Control: private, no-store`.
/// - `POST /replay`: stands in for the browser: the body is the page's `{"ticket":"…"}`; the
///   ticket's replay (never one from the body) is committed once, for the visitor it was issued
///   to (the integration's `addReplayRoute`: 204, 403, 409, 422, 502, 503).
/// - `GET /plain`: the baselines, without the engine (the load test's reference).
/// - `GET /floor` (``FloorRoute``, mounted beside these): the plain page plus the personalized
///   page's HTTP exchanges written by hand, without the engine (the load test's floor).
/// - `POST /consent`: form field `consent=accept|decline` (the integration's `addConsentRoute`):
///   refused with 403 when a browser sent it for another site. Accepting keeps the state and
///   records the consent; declining replaces the state with the choice alone (no profile id, no
///   selections). Redirects to `/`.
/// - `GET /healthz`: `ok`.
///
/// With `?debug=1` the personalized pages (`/`, `/handoff`, `/events`, `/first`) end with the
/// debug panel (``DebugPanel``): each entry's experience, the variant shown and the reason, from
/// the library's resolution (``EntryExplanation``) and the request's Experience call. Merge tags
/// render the visitor's value on `/` and `/first` (whose Experience answer holds the profile) and
/// their fallback elsewhere (a profile id alone has no values; `/plain` runs no engine).
///
/// Handlers never fail on visitor input: a bad cookie is ignored, a failing Experience API
/// renders the handoff selections or baselines.
public struct PageRoutes: Sendable {
    public typealias Context = BasicOptimizationRequestContext

    public let service: OptimizationService
    public let content: PageContent
    /// Issues `/first` pages' replay tickets and commits them (`POST /replay`).
    public let tickets: OptimizationReplayTickets
    /// True when the service lets no `page` event through before consent (its allow-list).
    let strictConsent: Bool

    /// - Parameters:
    ///   - service: the started Optimization service.
    ///   - content: the page's entries.
    ///   - tickets: seals, opens and records replay tickets; the codec's lifetime bounds how long
    ///     a `/first` page's replay may be committed.
    public init(service: OptimizationService, content: PageContent, tickets: OptimizationReplayTickets) {
        self.service = service
        self.content = content
        self.tickets = tickets
        strictConsent = !(service.config.allowedEventTypes ?? OptimizationService.defaultAllowedEventTypes).contains("page")
    }

    /// Mounts the routes on `router`, which must run `OptimizationMiddleware` first.
    public func register(on router: Router<Context>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/plain") { _, context in
            html(PageRenderer.page(
                sections: content.entries.map(PageRenderer.Section.init(baseline:)),
                options: .init(consent: context.optimization.visitorState.consent, mode: "plain", strictConsent: strictConsent)))
        }
        router.get("/handoff") { request, context in
            try handoffPage(context, debug: Self.wantsDebug(request))
        }
        router.get("/events") { request, context in
            try await eventsPage(context, debug: Self.wantsDebug(request))
        }
        router.get("/") { request, context in
            try await personalizedPage(context, debug: Self.wantsDebug(request))
        }
        router.addConsentRoute("/consent", redirectTo: "/")
        router.get("/first") { request, context in
            try await firstVisitPage(request, context: context)
        }
        router.addReplayRoute("/replay", tickets: tickets)
    }

    // MARK: Handoff to the browser

    func firstVisitPage(_ request: Request, context: Context) async throws -> Response {
        let state = context.optimization.visitorState
        let optimization = try context.optimization.request
        let routeKey = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
        var handoff = OptimizationHandoff(cache: .init(scope: .privateRequest), profileId: optimization.profileId)
        let experienceCall: String
        // The library's consent rule: without event consent only the allow-list's types leave.
        let pageAllowed = optimization.options.consent.events == true || !strictConsent
        do {
            let prepared = try await optimization.prepareRequestHandoff(routeKey: routeKey)
            handoff = prepared.handoff
            experienceCall = prepared.data != nil ? "preflight delivered" : (pageAllowed ? "preflight failed" : "blocked (consent)")
        } catch {
            experienceCall = "failed"
            context.logger.warning("no handoff prepared; rendering without fresh selections", metadata: ["error": "\(error)"])
        }
        let withheld = !pageAllowed && optimization.selectedOptimizations == nil
        let resolved = content.entries.map {
            PageRenderer.Section(baseline: $0, resolved: optimization.resolveOptimizedEntry(baseline: $0), consentWithheldSelections: withheld)
        }
        var page = PageRenderer.page(sections: resolved, options: .init(
            consent: state.consent, mode: "first", richText: Self.mergeTags(of: optimization), strictConsent: strictConsent,
            debugExperienceCall: Self.wantsDebug(request) ? experienceCall : nil))
        // The state the visitor holds after this response (with the nonce the ticket is bound to).
        var next = state
        if optimization.canPersistProfile, let id = handoff.profileId { next.profileId = id }
        var scripts = ""
        if (try? handoff.assertCacheSafe()) != nil, let json = try? handoff.json.jsonText() {
            // `<` escaped so the JSON cannot close the script element.
            scripts += #"<script type="application/json" id="optimization-handoff">"# + json.replacingOccurrences(of: "<", with: "\\u003c") + "</script>\n"
        }
        if let replay = handoff.replay, let ticket = tickets.issue(replay, for: context.optimization, client: context.remoteAddress?.ipAddress) {
            // The sealed text is only `A–Z a–z 0–9 - _ .`: safe in JSON and HTML as it is.
            scripts += #"<script type="application/json" id="optimization-replay">{"ticket":""# + ticket + "\"}</script>\n"
        }
        page = page.replacingOccurrences(of: "</body>", with: scripts + "</body>")
        var response = html(page)
        response.headers[.cacheControl] = "private, no-store"
        // The profile id only (the preflight stored nothing), and the visitor's nonce: written when it changed.
        context.optimization.store(next)
        return response
    }

    // MARK: Pages

    /// Whether the request asks for the debug panel (`?debug=1`).
    static func wantsDebug(_ request: Request) -> Bool {
        request.uri.queryParameters.get("debug") == "1"
    }

    /// Rich text with `optimization`'s merge-tag values (its profile, else each tag's fallback).
    static func mergeTags(of optimization: OptimizationRequest) -> RichTextRenderer {
        RichTextRenderer { optimization.getMergeTagValue($0) }
    }

    /// Whether a request without an Experience call lacks selections because of consent: the
    /// state cookie keeps selections only with persistence consent.
    static func selectionsWithheldFromState(_ state: VisitorState, _ optimization: OptimizationRequest) -> Bool {
        state.selections == nil && !optimization.canPersistProfile
    }

    func handoffPage(_ context: Context, debug: Bool) throws -> Response {
        let state = context.optimization.visitorState
        let optimization = try context.optimization.request
        let selections = state.selections ?? .empty
        let withheld = Self.selectionsWithheldFromState(state, optimization)
        let sections = content.entries.map { baseline in
            PageRenderer.Section(
                baseline: baseline, resolved: service.resolveOptimizedEntry(baseline: baseline, selectedOptimizations: selections),
                consentWithheldSelections: withheld)
        }
        return html(PageRenderer.page(sections: sections, options: .init(
            consent: state.consent, mode: "handoff", strictConsent: strictConsent,
            debugExperienceCall: debug ? "none (selections from the state cookie)" : nil)))
    }

    func eventsPage(_ context: Context, debug: Bool) async throws -> Response {
        let state = context.optimization.visitorState
        let optimization = try context.optimization.request
        let withheld = Self.selectionsWithheldFromState(state, optimization)
        let resolved = content.entries.map { ($0, optimization.resolveOptimizedEntry(baseline: $0)) }
        let response = html(PageRenderer.page(
            sections: resolved.map { PageRenderer.Section(baseline: $0.0, resolved: $0.1, consentWithheldSelections: withheld) },
            options: .init(
                consent: state.consent, mode: "events", strictConsent: strictConsent,
                debugExperienceCall: debug ? "none (selections from the state cookie)" : nil)))
        if optimization.profileId != nil { await trackViews(resolved, on: optimization, context: context) }
        return response
    }

    /// One view per rendered entry: server-rendered, every entry counts as seen once, as the
    /// reference server SDK does (duration 0, a fresh view id); the consent gate decides what
    /// leaves. The page's views go to the engine together.
    func trackViews(_ resolved: [(ContentfulEntry, ResolvedOptimizedEntry)], on optimization: OptimizationRequest, context: Context) async {
        let views = resolved.map { baseline, entry in
            TrackViewPayload(
                componentId: baseline.id, viewId: Self.randomViewId(),
                experienceId: entry.selectedOptimization?["experienceId"]?.stringValue,
                optimizationContextId: entry.optimizationContextId,
                variantIndex: entry.selectedOptimization?["variantIndex"]?.intValue ?? 0,
                viewDuration: .milliseconds(0))
        }
        for case .failure(let error) in await optimization.trackViews(views) {
            context.logger.warning("view not tracked", metadata: ["error": "\(error)"])
        }
    }

    func personalizedPage(_ context: Context, debug: Bool) async throws -> Response {
        let state = context.optimization.visitorState
        let optimization = try context.optimization.request
        let experienceCall: String
        let blockedByConsent: Bool
        do {
            let result = try await optimization.page()
            experienceCall = result.outcome.description
            blockedByConsent = result.outcome == .blocked(.consent)
            if result.outcome != .delivered {
                context.logger.notice("rendering without fresh selections", metadata: ["outcome": "\(result.outcome)"])
            }
        } catch {
            experienceCall = "failed"
            blockedByConsent = false
            context.logger.warning("page event failed; rendering without fresh selections", metadata: ["error": "\(error)"])
        }
        let withheld = blockedByConsent && optimization.selectedOptimizations == nil
        let resolved = content.entries.map { ($0, optimization.resolveOptimizedEntry(baseline: $0)) }
        // With persistence consent the middleware stores the new profile id and selections.
        let response = html(PageRenderer.page(
            sections: resolved.map { PageRenderer.Section(baseline: $0.0, resolved: $0.1, consentWithheldSelections: withheld) },
            options: .init(
                consent: state.consent, mode: "personalized", richText: Self.mergeTags(of: optimization), strictConsent: strictConsent,
                debugExperienceCall: debug ? experienceCall : nil)))
        if optimization.profileId != nil { await trackViews(resolved, on: optimization, context: context) }
        return response
    }

    // MARK: Request details

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
}

/// A `text/html` response carrying the ``SecurityHeaders``.
func html(_ text: String) -> Response {
    var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
    headers.append(contentsOf: SecurityHeaders.fields)
    return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
}
