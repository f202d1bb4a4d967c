import Hummingbird
import JavaScriptHost
import Optimization

/// How the Contentful webhook route authenticates requests
/// (``Hummingbird/RouterMethods/addContentfulWebhookRoute(_:authentication:clock:invalidate:)``).
/// An immutable `Sendable` value.
public enum ContentfulWebhookAuthentication: Sendable {
    /// Every request must carry Contentful's signature, checked by this verifier (secret and
    /// time to live).
    case verified(ContentfulWebhookVerifier)
    /// No authentication: anyone who reaches the route can invalidate entries. For local
    /// development only; never the default.
    case insecureUnsigned

    /// Requests must be signed with the space's webhook signing secret and at most `timeToLive`
    /// old (default 30 s, Contentful's).
    /// - Throws: `ContentfulWebhookError.invalidSecret` unless `secret` is exactly 64 characters;
    ///   `ContentfulWebhookError.invalidTimeToLive` when `timeToLive` is not positive.
    public static func signed(secret: String, timeToLive: Duration = .seconds(30)) throws(ContentfulWebhookError) -> Self {
        .verified(try ContentfulWebhookVerifier(secret: secret, timeToLive: timeToLive))
    }
}

extension RouterMethods {
    /// Mounts the Contentful webhook route, `POST path`: a publish/unpublish webhook (the body is
    /// the entry or asset, with `sys.id`) invalidates that id through `invalidate`.
    ///
    /// - **Not mounted** when `authentication` is nil (no secret configured): nothing answers on
    ///   `path`. Give ``ContentfulWebhookAuthentication/insecureUnsigned`` to mount it without
    ///   authentication, for development only.
    /// - With ``ContentfulWebhookAuthentication/verified(_:)`` every request must carry
    ///   Contentful's signature (`x-contentful-signature` over the method, path with query,
    ///   signed headers and body) and a timestamp within the verifier's time to live of `clock`:
    ///   401 otherwise (unsigned, tampered, stale or from the future), and nothing is invalidated.
    /// - 204 invalidated; 422 for a body that is not JSON with a string `sys.id`, or when
    ///   `invalidate` throws a `ContentfulDeliveryError` (an id that is not a Contentful id). Any
    ///   other error `invalidate` throws is passed on (Hummingbird answers 500).
    ///
    /// Needs no ``OptimizationMiddleware``. Refusals are logged at notice level with the reason,
    /// never the body.
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
        let verifier: ContentfulWebhookVerifier?
        switch authentication {
        case .verified(let configured): verifier = configured
        case .insecureUnsigned: verifier = nil
        }
        post(path) { request, context -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            if let verifier {
                let signed = ContentfulWebhookRequest(
                    method: request.method.rawValue, path: request.uri.string,
                    headers: request.headers.map { (name: $0.name.rawName, value: $0.value) },
                    body: Array(body.readableBytesView))
                do throws(ContentfulWebhookError) {
                    try verifier.verify(signed, now: clock.now())
                } catch {
                    context.logger.notice("webhook refused", metadata: ["reason": "\(error)"])
                    return Response(status: .unauthorized)
                }
            }
            guard let json = try? JSONValue(jsonText: String(buffer: body)), let id = json["sys"]?["id"]?.stringValue else {
                return Response(status: .unprocessableContent)
            }
            do {
                try await invalidate(id)
            } catch is ContentfulDeliveryError {
                return Response(status: .unprocessableContent)
            }
            return Response(status: .noContent)
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
