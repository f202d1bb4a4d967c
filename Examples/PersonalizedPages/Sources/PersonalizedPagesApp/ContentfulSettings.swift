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

    /// Settings; each parameter sets the property of the same name.
    public init(spaceId: String, environment: String = "master", accessToken: String, baseURL: String? = nil) {
        self.spaceId = spaceId
        self.environment = environment
        self.accessToken = accessToken
        self.baseURL = baseURL
    }
}
