import HTTPTypes
import Hummingbird
import JavaScriptHost
import Optimization

extension RouterMethods {
    /// Mounts the Contentful webhook route, `POST path`: a publish/unpublish webhook (the body is
    /// the entry or asset, with `sys.id`, at most 1 MB) invalidates that id through `invalidate`
    /// (the library's `ContentfulWebhookReceiver`).
    ///
    /// - **Not mounted** when `authentication` is nil (no secret configured): nothing answers on
    ///   `path`. Give `ContentfulWebhookAuthentication.insecureUnsigned` to mount it without
    ///   authentication, for development only.
    /// - With `ContentfulWebhookAuthentication.verified(_:)` every request must carry
    ///   Contentful's signature (`x-contentful-signature` over the method, path with query,
    ///   signed headers and body) and a timestamp within the verifier's time to live of `clock`:
    ///   401 otherwise (unsigned, tampered, stale or from the future, a target with a second `?`,
    ///   or a signature already taken: a replay), and nothing is invalidated. A request whose
    ///   head fails is answered before its body is read.
    /// - 204 invalidated; 422 for a body that is not JSON with a string `sys.id`, or when
    ///   `invalidate` throws a `ContentfulDeliveryError` (an id that is not a Contentful id). Any
    ///   other error `invalidate` throws is passed on (Hummingbird answers 500).
    ///
    /// Needs no ``OptimizationMiddleware``. Refusals are logged at notice level with a fixed
    /// reason word, never text of the request.
    /// - Parameters:
    ///   - path: the route's path; default `/webhooks/contentful`.
    ///   - authentication: how requests are authenticated; nil mounts nothing.
    ///   - clock: the current time a webhook's timestamp is checked against; default wall-clock.
    ///   - invalidate: called with the entry or asset id of each accepted webhook, on the
    ///     request's task.
    /// - Returns: the router or group, for chaining.
    @discardableResult
    public func addContentfulWebhookRoute(
        _ path: RouterPath = "/webhooks/contentful",
        authentication: ContentfulWebhookAuthentication?,
        clock: any HostClock = SystemClock(),
        invalidate: @escaping @Sendable (_ id: String) async throws -> Void
    ) -> Self {
        guard let authentication else { return self }
        let receiver = ContentfulWebhookReceiver(authentication: authentication, clock: clock, invalidate: invalidate)
        post(path) { request, context -> Response in
            let headers = request.headers.map { (name: $0.name.rawName, value: $0.value) }
            // Unsigned, stale or incomplete heads are refused before the body is read.
            if let refusal = receiver.refusal(method: request.method.rawValue, path: request.uri.string, headers: headers, logger: context.logger) {
                return Response(status: HTTPResponse.Status(code: refusal.statusCode))
            }
            let body = try await request.body.collect(upTo: ContentfulWebhookReceiver.maximumBodyBytes)
            let webhook = ContentfulWebhookRequest(
                method: request.method.rawValue, path: request.uri.string, headers: headers, body: Array(body.readableBytesView))
            let outcome = try await receiver.receive(webhook, logger: context.logger)
            return Response(status: HTTPResponse.Status(code: outcome.statusCode))
        }
        return self
    }

    /// Mounts the Contentful webhook route invalidating entries of `source` on this replica and,
    /// through its entry store and invalidation bus, on every replica
    /// (`ContentfulDeliverySource.invalidate(entryId:)`); otherwise as
    /// ``addContentfulWebhookRoute(_:authentication:clock:invalidate:)``.
    @discardableResult
    public func addContentfulWebhookRoute(
        _ path: RouterPath = "/webhooks/contentful",
        authentication: ContentfulWebhookAuthentication?,
        clock: any HostClock = SystemClock(),
        source: ContentfulDeliverySource
    ) -> Self {
        addContentfulWebhookRoute(path, authentication: authentication, clock: clock) { id in
            try source.invalidate(entryId: id)
        }
    }
}
