import Foundation
import Hummingbird
import Optimization

/// The live-content routes (registered when the service has ``ContentfulSettings``):
///
/// - `GET /cms/{id}`: the entry fetched through the `ContentfulDeliverySource` (cache, entry
///   store, CDA), as JSON `{"id", "revision", "internalTitle"}` (`sys.revision` of the item;
///   `internalTitle` when the entry has one). 404 for an entry the space does not have, 503 when
///   Contentful fails transiently and nothing is cached, 502 for other Contentful errors.
/// - `POST /webhooks/contentful`: a Contentful publish/unpublish webhook (the body is the entry or
///   asset, with `sys.id`): invalidates it on this replica and, through the entry store and the
///   invalidation bus, on every replica. 204; 422 for a body without `sys.id`. Unauthenticated in
///   this example: put it behind your webhook secret check.
struct ContentRoutes: Sendable {
    let source: ContentfulDeliverySource

    func register(on router: Router<BasicRequestContext>) {
        router.get("/cms/:id") { _, context in
            guard let id = context.parameters.get("id") else { return Response(status: .badRequest) }
            return await entry(id: id, context: context)
        }
        router.post("/webhooks/contentful") { request, _ in
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let json = try? JSONValue(jsonText: String(buffer: body)), let id = json["sys"]?["id"]?.stringValue, !id.isEmpty else {
                return Response(status: .unprocessableContent)
            }
            source.invalidate(entryId: id)
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
