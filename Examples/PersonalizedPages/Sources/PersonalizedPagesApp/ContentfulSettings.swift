/// Where the service fetches live entries for `GET /cms/{id}` (a `ContentfulDeliverySource`):
/// the Content Delivery API of one space, or the test kit's `LocalContentfulDeliveryServer`.
public struct ContentfulSettings: Sendable, Equatable {
    /// The space id.
    public var spaceId: String
    /// The environment. Default `master`.
    public var environment: String
    /// The Content Delivery API token (never logged).
    public var accessToken: String
    /// The API's base URL; nil: the real Content Delivery API.
    public var baseURL: String?
    /// How `POST /webhooks/contentful` authenticates Contentful; nil: the route is not mounted.
    public var webhook: WebhookAuthentication?

    /// How the webhook route tells Contentful's requests from anyone else's.
    public enum WebhookAuthentication: Sendable, Equatable {
        /// Every request must carry Contentful's signature made with this signing secret (the
        /// space's webhook signing secret: exactly 64 characters, never logged) and be at most
        /// 30 s old; any other request is answered 401 and acts on nothing.
        case signed(secret: String)
        /// Unsigned requests are accepted: anyone who reaches the route can invalidate entries.
        /// For local development only (`--insecure-webhook`).
        case unsigned
    }

    /// Settings; each parameter sets the property of the same name.
    public init(
        spaceId: String, environment: String = "master", accessToken: String, baseURL: String? = nil,
        webhook: WebhookAuthentication? = nil
    ) {
        self.spaceId = spaceId
        self.environment = environment
        self.accessToken = accessToken
        self.baseURL = baseURL
        self.webhook = webhook
    }
}
