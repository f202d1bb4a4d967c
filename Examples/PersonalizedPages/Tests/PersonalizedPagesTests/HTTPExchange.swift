import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// One request and its whole answer (status, headers, body bytes), for tests that look at
/// headers and bodies as sent; 60 s hang bound.
struct HTTPExchange: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: ByteBuffer

    static func send(
        _ client: HTTPClient, _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> HTTPExchange {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(60))
        return HTTPExchange(status: Int(response.status.code), headers: response.headers, body: try await response.body.collect(upTo: 4 << 20))
    }
}
