import AsyncHTTPClient
import Testing

/// Every HTML page carries the security headers, with a policy that loads and runs nothing.
@Suite struct SecurityHeadersTests {
    @Test(arguments: ["/", "/plain", "/handoff", "/events", "/first"])
    func everyHTMLPageCarriesTheSecurityHeaders(path: String) async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let page = try await HTTPExchange.send(client, .GET, baseURL + path, headers: [("Cookie", "pp_consent=yes; pp_profile=headers-visitor")])
                    #expect(page.status == 200)
                    #expect(page.headers.first(name: "content-type") == "text/html; charset=utf-8")
                    #expect(page.headers.first(name: "content-security-policy")
                            == "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
                    #expect(page.headers.first(name: "x-content-type-options") == "nosniff")
                    #expect(page.headers.first(name: "referrer-policy") == "strict-origin-when-cross-origin")
                    #expect(page.headers.first(name: "x-frame-options") == "DENY")
                }
            }
        }
    }
}
