import Foundation
import Hummingbird
import Optimization

/// The live-content routes (registered when the service has ``ContentfulSettings``):
///
/// - `GET /cms/{id}`: the entry fetched through the `ContentfulDeliverySource` (cache, entry
///   store, CDA), as JSON `{"id", "revision", "internalTitle"}` (`sys.revision` of the item;
///   `internalTitle` when the entry has one). 404 for an entry the space does not have, 503 when
///   Contentful fails transiently and nothing is cached, 502 for other Contentful errors.
/// - `POST /webhooks/contentful` (mounted only with ``ContentfulSettings/webhook``): a Contentful
///   publish/unpublish webhook (the body is the entry or asset, with `sys.id`): invalidates it on
///   this replica and, through the entry store and the invalidation bus, on every replica. With a
///   signing secret the request must carry Contentful's signature (`x-contentful-signature` over
///   the method, path, signed headers and body) and a timestamp at most 30 s old: 401 otherwise,
///   and nothing is invalidated. 204; 422 for a body without `sys.id` or with an id that is not a
///   Contentful id (1 to 64 characters of `A-Z a-z 0-9 . _ -`).
struct ContentRoutes: Sendable {
    /// How the webhook route is mounted.
    enum Webhook: Sendable {
        /// Not mounted.
        case none
        /// Mounted; every request must pass this verifier.
        case verified(ContentfulWebhookVerifier)
        /// Mounted without authentication (development only).
        case unsigned

        /// The route for `settings`.
        /// - Throws: `ContentfulWebhookError.invalidSecret` when the signing secret is not 64
        ///   characters.
        init(_ settings: ContentfulSettings.WebhookAuthentication?) throws(ContentfulWebhookError) {
            switch settings {
            case nil: self = .none
            case .signed(let secret): self = .verified(try ContentfulWebhookVerifier(secret: secret))
            case .unsigned: self = .unsigned
            }
        }
    }

    let source: ContentfulDeliverySource
    let webhook: Webhook
    /// The current Unix time in milliseconds, which a webhook's timestamp is checked against.
    var now: @Sendable () -> Double = { Date().timeIntervalSince1970 * 1_000 }

    func register(on router: Router<BasicRequestContext>) {
        router.get("/cms/:id") { _, context in
            guard let id = context.parameters.get("id") else { return Response(status: .badRequest) }
            return await entry(id: id, context: context)
        }
        let verifier: ContentfulWebhookVerifier?
        switch webhook {
        case .none: return
        case .verified(let configured): verifier = configured
        case .unsigned: verifier = nil
        }
        router.post("/webhooks/contentful") { request, context in
            let body = try await request.body.collect(upTo: 1 << 20)
            if let verifier {
                let signed = ContentfulWebhookRequest(
                    method: request.method.rawValue, path: request.uri.string,
                    headers: request.headers.map { (name: $0.name.rawName, value: $0.value) },
                    body: Array(body.readableBytesView))
                do throws(ContentfulWebhookError) {
                    try verifier.verify(signed, now: now())
                } catch {
                    context.logger.notice("webhook refused", metadata: ["reason": "\(error)"])
                    return Response(status: .unauthorized)
                }
            }
            guard let json = try? JSONValue(jsonText: String(buffer: body)), let id = json["sys"]?["id"]?.stringValue else {
                return Response(status: .unprocessableContent)
            }
            do throws(ContentfulDeliveryError) {
                try source.invalidate(entryId: id)
            } catch {
                return Response(status: .unprocessableContent)
            }
            return Response(status: .noContent)
        }
    }

    func entry(id: String, context: BasicRequestContext) async -> Response {
        do throws(ContentfulDeliveryError) {
            let entry = try await source.entry(id: id)
            let item = entry.document["items"]?.arrayValue?.first ?? entry.document
            var answer: OrderedDictionary<String, JSONValue> = ["id": .string(entry.id)]
            if let revision = item["sys"]?["revision"] { answer["revision"] = revision }
            if let title = item["fields"]?["internalTitle"] { answer["internalTitle"] = title }
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: JSONValue.object(answer).description)))
        } catch {
            switch error {
            case .entryNotFound: return Response(status: .notFound)
            default:
                context.logger.warning("Contentful fetch failed", metadata: ["error": "\(error)"])
                return Response(status: error.isTransient ? .serviceUnavailable : .badGateway)
            }
        }
    }
}
