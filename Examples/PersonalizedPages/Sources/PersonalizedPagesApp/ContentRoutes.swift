import Foundation
import Hummingbird
import Optimization
import OptimizationHummingbird

/// The live-content routes (registered when the service has ``ContentfulSettings``):
///
/// - `GET /cms/{id}`: the entry fetched through the `ContentfulDeliverySource` (cache, entry
///   store, CDA), as JSON `{"id", "revision", "internalTitle"}` (`sys.revision` of the item;
///   `internalTitle` when the entry has one). 404 for an entry the space does not have, 503 when
///   Contentful fails transiently and nothing is cached, 502 for other Contentful errors.
/// - `POST /webhooks/contentful` (mounted only with ``ContentfulSettings/webhook``; the
///   integration's `addContentfulWebhookRoute`): a Contentful publish/unpublish webhook (the
///   body is the entry or asset, with `sys.id`): invalidates it on this replica and, through the
///   entry store and the invalidation bus, on every replica. With a
///   signing secret the request must carry Contentful's signature (`x-contentful-signature` over
///   the method, path, signed headers and body) and a timestamp at most 30 s old: 401 otherwise,
///   and nothing is invalidated. 204; 422 for a body without `sys.id` or with an id that is not a
///   Contentful id (1 to 64 characters of `A-Z a-z 0-9 . _ -`).
struct ContentRoutes: Sendable {
    let source: ContentfulDeliverySource
    /// How `POST /webhooks/contentful` is authenticated; nil: not mounted.
    let webhook: ContentfulWebhookAuthentication?

    func register(on router: Router<BasicOptimizationRequestContext>) {
        router.get("/cms/:id") { _, context in
            guard let id = context.parameters.get("id") else { return Response(status: .badRequest) }
            return await entry(id: id, context: context)
        }
        router.addContentfulWebhookRoute("/webhooks/contentful", authentication: webhook, source: source)
    }

    func entry(id: String, context: BasicOptimizationRequestContext) async -> Response {
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
