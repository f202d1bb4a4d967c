import OptimizationContent
import Logging
import OptimizationJSON
import HostPlatform

/// The framework-neutral Contentful webhook route: authenticates a publish/unpublish webhook (the
/// body is the entry or asset, with `sys.id`) and invalidates that id. Each web integration hands
/// it the request's method, path with query, header fields and body, and answers with
/// ``Outcome/statusCode``.
///
/// **Hardening.** The signature, timestamp and signed-headers fields, the timestamp's freshness
/// and the target are checked before the body is read (``refusal(method:path:headers:logger:)``);
/// a signature already taken within the time to live is refused (a captured webhook sent again);
/// a target with a second `?` (whose text Contentful does not sign) is refused; refusals are
/// logged with a fixed reason word, never text of the request.
///
/// **Threading.** A `Sendable` value: share one between requests (copies share the record of
/// taken signatures); `invalidate` runs on the calling task.
public struct ContentfulWebhookReceiver: Sendable {
    /// The largest webhook body read, in bytes: 1 MiB.
    public static let maximumBodyBytes = 1 << 20

    /// How requests are authenticated.
    public let authentication: ContentfulWebhookAuthentication
    /// The current time a webhook's timestamp is checked against.
    public let clock: any HostClock
    private let invalidate: @Sendable (_ id: String) async throws -> Void
    private let takenSignatures = WebhookSignatureLedger()

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

    /// The answer to a webhook whose head alone already fails authentication (missing signature,
    /// timestamp or signed-headers fields, a listed header absent, a stale or future timestamp, a
    /// second `?`), so the route answers without reading the body; nil to read the body and call
    /// ``receive(_:logger:)``. Always nil without authentication.
    /// - Parameters:
    ///   - method: the HTTP method, as received.
    ///   - path: the request target as received (path and query).
    ///   - headers: every header field of the request.
    ///   - logger: a refusal is logged at notice level with its fixed reason word.
    public func refusal(method: String, path: String, headers: [(name: String, value: String)], logger: Logger) -> Outcome? {
        guard case .verified(let verifier) = authentication else { return nil }
        do throws(ContentfulWebhookError) {
            _ = try verifier.verifyHead(method: method, path: path, headers: headers, now: clock.now())
            return nil
        } catch {
            logger.notice("webhook refused", metadata: ["reason": "\(error.reason)"])
            return .unauthenticated
        }
    }

    /// Authenticates `request` (with ``ContentfulWebhookAuthentication/verified(_:)``: Contentful's
    /// `x-contentful-signature` over the method, path with query, signed headers and body, and a
    /// timestamp within the verifier's time to live of ``clock``), then invalidates its `sys.id`.
    /// - Parameters:
    ///   - request: the HTTP request as received (path with query, every header field, the body).
    ///   - logger: refusals are logged at notice level with a fixed reason word, never text of
    ///     the request.
    /// - Returns: what was done.
    /// - Throws: any error of `invalidate` other than a `ContentfulDeliveryError` (the integration
    ///   answers 500).
    public func receive(_ request: ContentfulWebhookRequest, logger: Logger) async throws -> Outcome {
        if case .verified(let verifier) = authentication {
            let now = clock.now()
            do throws(ContentfulWebhookError) {
                let head = try verifier.verify(request, now: now)
                guard takenSignatures.record(head.signature, forgetAfter: Double(head.timestamp) + verifier.timeToLive.inMilliseconds, now: now) else {
                    throw .replayed
                }
            } catch {
                logger.notice("webhook refused", metadata: ["reason": "\(error.reason)"])
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
