import OptimizationContent

/// How an integration's Contentful webhook route authenticates requests
/// (``ContentfulWebhookReceiver``). An immutable `Sendable` value.
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
