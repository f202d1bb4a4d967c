import AsyncHTTPClient
import Testing

/// `HEAD` answers like `GET` without a body; an unknown path stays 404.
@Suite(.hangBound) struct HeadRequestTests {
    @Test func headOfThePlainPageHasTheHeadersOfGetAndNoBody() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let get = try await HTTPExchange.send(client, .GET, baseURL + "/plain")
                    let head = try await HTTPExchange.send(client, .HEAD, baseURL + "/plain")
                    #expect(get.status == 200 && head.status == 200)
                    #expect(head.body.readableBytes == 0)
                    #expect(head.headers.first(name: "content-type") == "text/html; charset=utf-8")
                    #expect(head.headers.first(name: "content-length") == "\(get.body.readableBytes)")
                    #expect(head.headers.first(name: "content-security-policy") == get.headers.first(name: "content-security-policy"))
                }
            }
        }
    }

    @Test func headOfThePersonalizedPageIsAnsweredWithoutABody() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let head = try await HTTPExchange.send(client, .HEAD, baseURL + "/")
                    #expect(head.status == 200)
                    #expect(head.body.readableBytes == 0)
                    #expect(head.headers.first(name: "content-type") == "text/html; charset=utf-8")
                    #expect(Int(head.headers.first(name: "content-length") ?? "") ?? 0 > 0, "the length of the page GET renders")
                }
            }
        }
    }

    @Test func headOfAnUnknownPathIsNotFound() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let head = try await HTTPExchange.send(client, .HEAD, baseURL + "/no-such-page")
                    #expect(head.status == 404)
                    #expect(head.body.readableBytes == 0)
                }
            }
        }
    }
}
