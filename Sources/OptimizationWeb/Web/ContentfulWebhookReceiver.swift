import ContentfulDelivery
import Logging
import OptimizationJSON
import HostPlatform

/// The framework-neutral Contentful webhook route: authenticates a publish/unpublish webhook (the
/// body is the entry or asset, with `sys.id`) and invalidates that id. Each web integration hands
/// it the request's method, path with query, header fields and body, and answers with
/// ``Outcome/statusCode``.
///
/// **Threading.** An immutable `Sendable` value: share one between requests; `invalidate` runs on
/// the calling task.
public struct ContentfulWebhookReceiver: Sendable {
    /// The largest webhook body read, in bytes: 1 MiB.
    public static let maximumBodyBytes = 1 << 20

    /// How requests are authenticated.
    public let authentication: ContentfulWebhookAuthentication
    /// The current time a webhook's timestamp is checked against.
    public let clock: any HostClock
    private let invalidate: @Sendable (_ id: String) async throws -> Void

    /// - Parameters:
    ///   - authentication: how requests are authenticated.
    ///   - clock: the current time a webhook's timestamp is checked against; default wall-clock.
    ///   - invalidate: called with the entry or asset id of each accepted webhook, on the
    ///     receiving task.
    public init(
        authentication: ContentfulWebhookAuthentication, clock: any HostClock = SystemClock(),
        invalidate: @escaping @Sendable (_ id: String) async throws -> Void
    ) {
        self.authentication = authentication
        self.clock = clock
        self.invalidate = invalidate
    }

    /// What ``receive(_:logger:)`` did.
    public enum Outcome: Sendable, Equatable {
        /// Authenticated, and the id was invalidated: 204.
        case invalidated(id: String)
        /// Unsigned, tampered, stale or from the future: 401, nothing invalidated.
        case unauthenticated
        /// Not JSON with a string `sys.id`, or an id `invalidate` refused with a
        /// `ContentfulDeliveryError`: 422.
        case unprocessable

        /// The HTTP status code to answer with: 204, 401 or 422.
        public var statusCode: Int {
            switch self {
            case .invalidated: 204
            case .unauthenticated: 401
            case .unprocessable: 422
            }
        }
    }

    /// Authenticates `request` (with ``ContentfulWebhookAuthentication/verified(_:)``: Contentful's
    /// `x-contentful-signature` over the method, path with query, signed headers and body, and a
    /// timestamp within the verifier's time to live of ``clock``), then invalidates its `sys.id`.
    /// - Parameters:
    ///   - request: the HTTP request as received (path with query, every header field, the body).
    ///   - logger: refusals are logged at notice level with the reason, never the body.
    /// - Returns: what was done.
    /// - Throws: any error of `invalidate` other than a `ContentfulDeliveryError` (the integration
    ///   answers 500).
    public func receive(_ request: ContentfulWebhookRequest, logger: Logger) async throws -> Outcome {
        if case .verified(let verifier) = authentication {
            do throws(ContentfulWebhookError) {
                try verifier.verify(request, now: clock.now())
            } catch {
                logger.notice("webhook refused", metadata: ["reason": "\(error)"])
                return .unauthenticated
            }
        }
        guard let json = try? JSONValue(jsonText: String(decoding: request.body, as: UTF8.self)), let id = json["sys"]?["id"]?.stringValue else {
            return .unprocessable
        }
        do {
            try await invalidate(id)
        } catch is ContentfulDeliveryError {
            return .unprocessable
        }
        return .invalidated(id: id)
    }
}
