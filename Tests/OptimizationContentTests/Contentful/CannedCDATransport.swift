import OptimizationTestSupport
import OptimizationContent
import Foundation
import JavaScriptHost
import Logging
import Synchronization

/// A CDA without a network: answers `sys.id=<id>` and `sys.id[in]=<ids>` with one generated entry
/// per id (revision 1, no links), records every request URL, and runs `onRequest` (when set)
/// with the asked ids before answering, as if it happened while the fetch was in flight.
final class CannedCDATransport: FetchTransport {
    let requestedURLs = Mutex<[String]>([])
    let onRequest = Mutex<(@Sendable ([String]) -> Void)?>(nil)

    var requestCount: Int { requestedURLs.withLock { $0.count } }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        requestedURLs.withLock { $0.append(request.url) }
        let items = URLComponents(string: request.url)?.queryItems ?? []
        let ids = items.first { $0.name == "sys.id" || $0.name == "sys.id[in]" }?.value?.split(separator: ",").map(String.init) ?? []
        onRequest.withLock { $0 }?(ids)
        let entries = ids.map { id in
            #"{"sys":{"type":"Entry","id":"\#(id)","revision":1,"#
                + #""contentType":{"sys":{"type":"Link","linkType":"ContentType","id":"content"}}},"#
                + #""fields":{"internalTitle":"\#(id)"}}"#
        }
        let body = #"{"sys":{"type":"Array"},"total":\#(ids.count),"skip":0,"limit":\#(max(ids.count, 1)),"items":[\#(entries.joined(separator: ","))]}"#
        return FetchResponse(status: 200, headers: ["content-type": "application/json"], body: body)
    }
}

/// A source of space `canned-space` over `transport` on `clock`, with `entryStore` when given.
func makeCannedSource(
    _ transport: CannedCDATransport, clock: ManualClock = ManualClock(), entryStore: (any ContentfulEntryStore)? = nil
) throws -> ContentfulDeliverySource {
    try ContentfulDeliverySource(
        configuration: .init(spaceId: "canned-space", accessToken: "t", baseURL: "http://127.0.0.1:9", maximumAttempts: 1),
        clock: clock, transport: transport, entryStore: entryStore,
        logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
}
