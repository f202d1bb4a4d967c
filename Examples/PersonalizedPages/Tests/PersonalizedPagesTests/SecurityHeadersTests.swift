import AsyncHTTPClient
import Crypto
import Foundation
import Testing

/// Every HTML page carries the security headers, with a policy that runs nothing and applies no
/// style but the page's own stylesheet.
@Suite(.hangBound) struct SecurityHeadersTests {
    @Test(arguments: ["/", "/plain", "/handoff", "/events", "/first", "/?debug=1"])
    func everyHTMLPageCarriesTheSecurityHeaders(path: String) async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let page = try await HTTPExchange.send(client, .GET, baseURL + path, headers: [("Cookie", "pp_consent=yes; pp_profile=headers-visitor")])
                    #expect(page.status == 200)
                    #expect(page.headers.first(name: "content-type") == "text/html; charset=utf-8")
                    let policy = try #require(page.headers.first(name: "content-security-policy"))
                    let match = try #require(policy.wholeMatch(
                        of: /default-src 'none'; style-src 'sha256-([A-Za-z0-9+\/=]{44})'; img-src https:\/\/images\.ctfassets\.net; form-action 'self'; frame-ancestors 'none'; base-uri 'none'/))
                    // The hash is the page's one <style> element, exactly: nothing else may style the page.
                    let body = String(buffer: page.body)
                    #expect(body.matches(of: /<style>/).count == 1)
                    #expect(!body.contains(" style=\""), "no style attribute (the policy would not apply it)")
                    let css = try #require(body.firstMatch(of: /<style>(?<css>[^<]*)<\/style>/)?.output.css)
                    #expect(String(match.1) == Data(SHA256.hash(data: Data(css.utf8))).base64EncodedString())
                    #expect(!body.contains("<script>") && !body.contains("<script src") && !body.contains("<link"), "nothing runs, nothing loads")
                    #expect(page.headers.first(name: "x-content-type-options") == "nosniff")
                    #expect(page.headers.first(name: "referrer-policy") == "strict-origin-when-cross-origin")
                    #expect(page.headers.first(name: "x-frame-options") == "DENY")
                }
            }
        }
    }
}
