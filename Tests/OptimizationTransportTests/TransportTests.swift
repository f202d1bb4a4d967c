import AsyncHTTPClient
import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationTestSupport
@testable import OptimizationTransport
import Testing

private let trackEvents = #"{"events":[{"type":"track","event":"Clicked","messageId":"m-1"}],"options":{"features":["location"]}}"#

@Suite("HTTPFetchTransport against the local API server")
struct TransportTests {
    @Test func roundTripCarriesMethodHeadersBodyQueryStatusAndResponseHeaders() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let url = experienceURL(server, "profiles?locale=de-DE&type=preflight")
                let response = try await transport.send(FetchRequest(
                    url: url, method: "post",
                    headers: ["Content-Type": "text/plain", "X-Force-IP": "203.0.113.10"], body: trackEvents))
                #expect(response.status == 200)
                #expect(response.headers["content-type"] == "application/json; charset=utf-8")
                #expect(response.headers.keys.allSatisfy { $0 == $0.lowercased() })
                let envelope = try JSONValue(jsonText: response.body)
                let id = try #require(envelope["data"]?["profile"]?["id"]?.stringValue)
                #expect(envelope["data"]?["profile"]?["stableId"]?.stringValue == id)

                let recorded = try #require(server.requests.first)
                #expect(server.requests.count == 1)
                #expect(recorded.method == "POST")
                #expect(recorded.path == "/experience/v2/organizations/org/environments/main/profiles")
                #expect(recorded.queryItems == [URLQueryItem(name: "locale", value: "de-DE"), URLQueryItem(name: "type", value: "preflight")])
                #expect(recorded.header("content-type") == "text/plain")
                #expect(recorded.header("X-FORCE-IP") == "203.0.113.10")
                #expect(recorded.header("user-agent") == "\(OptimizationLibrary.name)/\(OptimizationLibrary.version)")
                #expect(recorded.header("content-length") == "\(trackEvents.utf8.count)")
                #expect(recorded.body == trackEvents)

                server.enqueue(.retryAfter(seconds: 7, status: 503), .status(418, body: "teapot", headers: ["X-Custom": "A", "Content-Type": "text/plain"]))
                let unavailable = try await transport.send(FetchRequest(url: url, method: "POST", body: trackEvents))
                #expect(unavailable.status == 503)
                #expect(unavailable.headers["retry-after"] == "7")
                let teapot = try await transport.send(FetchRequest(url: experienceURL(server, "profiles/x"), method: "GET"))
                #expect(teapot.status == 418 && teapot.body == "teapot")
                #expect(teapot.headers["x-custom"] == "A" && teapot.headers["content-type"] == "text/plain")
                let notFound = try await transport.send(FetchRequest(url: experienceURL(server, "profiles/unknown"), method: "GET"))
                #expect(notFound.status == 404, "a 4xx is a response, not an error")
            }
        }
    }

    @Test func twentySequentialRequestsReuseOneConnection() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                for index in 0..<20 {
                    let url = index.isMultiple(of: 2) ? server.experienceBaseURL + "health" : server.insightsBaseURL + "health"
                    let response = try await transport.send(FetchRequest(url: url, method: "GET"))
                    #expect(response.status == 200 && response.body == "ok")
                }
                #expect(server.requests.count == 20)
                #expect(server.acceptedConnectionCount == 1, "accepted \(server.acceptedConnectionCount) connections")
                #expect(Set(server.requests.map(\.connectionID)).count == 1)
            }
        }
    }

    @Test func timeoutCancelsTheRequestAndClosesItsConnection() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server, timeoutMilliseconds: 50) { transport in
                // The server would answer 200 after 20 s: a `.timeout` error can only come from
                // the 50 ms deadline, so the outcome itself proves the call did not wait for the
                // answer. No wall-clock bound: on a busy machine a starved test task may resume
                // seconds late, which says nothing about the transport.
                server.enqueue(.delay(.milliseconds(20_000)))
                let error = await caughtError {
                    _ = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                }
                #expect(error as? HTTPTransportError == .timeout(milliseconds: 50))
                #expect("\(error.map { "\($0)" } ?? "")" == "request timed out after 50 ms")
                // The request is really cancelled: once it has reached the server (the usual case;
                // on a very loaded machine 50 ms may not even suffice to connect), its connection
                // is closed, whereas an answered request would stay open in the keep-alive pool.
                if server.requests.count == 1 {
                    try await server.waitUntil(description: "connection closed") { $0.openConnectionCount == 0 }
                }
            }
        }
    }

    @Test func aConnectTimeoutIsTheRequestTimingOut() {
        // The connect timeout is set to the request timeout, so it fires only once the whole
        // budget went on connecting (a loaded machine); it is the request's deadline.
        #expect(HTTPFetchTransport.deliveryError(for: HTTPClientError.connectTimeout, timeoutMilliseconds: 50) == .timeout(milliseconds: 50))
        #expect(HTTPFetchTransport.deliveryError(for: HTTPClientError.deadlineExceeded, timeoutMilliseconds: 50) == .timeout(milliseconds: 50))
        guard case .connectionFailed = HTTPFetchTransport.deliveryError(for: HTTPClientError.tlsHandshakeTimeout, timeoutMilliseconds: 50) else {
            Issue.record("a TLS handshake timeout is a failed connection")
            return
        }
    }

    @Test func timeoutAlsoBoundsAStalledBody() async throws {
        // The head arrives at once but the declared body never completes: the deadline still
        // applies (AsyncHTTPClient's own deadline stops at the head) and the connection is closed.
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server, timeoutMilliseconds: 150) { transport in
                server.enqueue(.stalledBody)
                let error = await caughtError {
                    _ = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                }
                #expect(error as? HTTPTransportError == .timeout(milliseconds: 150))
                if server.requests.count == 1 {
                    try await server.waitUntil(description: "connection closed") { $0.openConnectionCount == 0 }
                }
            }
        }
    }

    @Test func allowListRefusesOutsideURLsWithoutAnyNetworkAttempt() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // Bases configured without a trailing slash.
            let transport = try HTTPFetchTransport(
                configuration: .init(allowedBaseURLs: [server.baseURL + "/experience", server.baseURL + "/insights"]))
            let outside = [
                server.baseURL + "/experience-evil/v2/organizations/org/environments/main/profiles",
                server.baseURL + "/other/health",
                server.baseURL + "/",
                server.baseURL.replacingOccurrences(of: "http://", with: "https://") + "/experience/health",
                "http://127.0.0.1:\(server.port == 65535 ? 1 : server.port + 1)/experience/health",
                "http://localhost:\(server.port)/experience/health",
                server.baseURL + "/experience/../other/health",
                server.baseURL + "/experience/%2e%2e/other/health",
                "http://user:pw@127.0.0.1:\(server.port)/experience/health",
                "https://example.com/experience/health",
                "not a url",
            ]
            for url in outside {
                let error = await caughtError { _ = try await transport.send(FetchRequest(url: url, method: "GET")) }
                #expect(error as? HTTPTransportError == .urlNotAllowed(url), "\(url)")
            }
            #expect(server.requests.isEmpty)
            #expect(server.acceptedConnectionCount == 0)
            let refusal = HTTPTransportError.urlNotAllowed("http://x/").description
            #expect(refusal == "request refused: http://x/ is outside the configured Experience and Insights base URLs")

            let inside = try await transport.send(FetchRequest(url: server.baseURL + "/experience/health", method: "GET"))
            #expect(inside.status == 200)
            let bare = try await transport.send(FetchRequest(url: server.baseURL + "/insights", method: "GET"))
            #expect(bare.status == 404, "the base itself (without slash) is inside")
            try await transport.shutdown()
        }
    }

    @Test func baseURLsJoinAndMatchWithOrWithoutTrailingSlash() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let withSlash = server.experienceBaseURL
            let withoutSlash = String(withSlash.dropLast())
            #expect(withSlash.hasSuffix("/experience/"))
            let path = "v2/organizations/org/environments/main/profiles"
            let joined = HostAllowList.join(base: withSlash, path: path)
            #expect(joined == server.baseURL + "/experience/" + path)
            #expect(HostAllowList.join(base: withoutSlash, path: path) == joined)
            #expect(HostAllowList.join(base: withSlash, path: "/" + path) == joined)
            #expect(HostAllowList.join(base: withoutSlash + "//", path: "//" + path) == joined)

            for base in [withSlash, withoutSlash] {
                let transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [base]))
                let response = try await transport.send(FetchRequest(
                    url: HostAllowList.join(base: base, path: path), method: "POST", body: trackEvents))
                #expect(response.status == 200)
                let list = try HostAllowList(baseURLs: [base])
                #expect(list.bases.map(\.pathPrefix) == ["/experience/"])
                #expect(list.allows(joined) && !list.allows(server.baseURL + "/experiences/x"))
                try await transport.shutdown()
            }
            #expect(server.requests(matching: .experience).count == 2)
        }
    }

    @Test func droppedConnectionIsATransportError() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // A 30 s timeout: `.connectionClosed` (not `.timeout`) proves the error came from the
            // dropped connection, at once, not from waiting for the deadline.
            try await withHTTPTransport(for: server, timeoutMilliseconds: 30_000) { transport in
                server.enqueue(.dropConnection)
                let error = await caughtError {
                    _ = try await transport.send(FetchRequest(url: server.insightsBaseURL + "v1/organizations/org/environments/main/events", method: "POST", body: "[]"))
                }
                #expect(error as? HTTPTransportError == .connectionClosed, "\(String(describing: error))")
                #expect(server.requests.count >= 1)
            }
        }
    }

    @Test func truncatedBodyIsATransportError() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                server.enqueue(.truncatedBody)
                let error = await caughtError {
                    _ = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                }
                #expect(error as? HTTPTransportError == .connectionClosed, "\(String(describing: error))")
                #expect("\(error.map { "\($0)" } ?? "")" == "connection closed before the response was complete")
                // A fresh connection serves the next request.
                let next = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                #expect(next.status == 200)
                #expect(server.acceptedConnectionCount == 2)
            }
        }
    }

    @Test func oversizedBodyIsRefused() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server, maximumResponseBodyBytes: 64) { transport in
                let error = await caughtError {
                    _ = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                }
                #expect(error as? HTTPTransportError == .responseTooLarge(limitBytes: 64))
            }
        }
    }

    @Test func cancellingTheCallingTaskCancelsTheRequest() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // The server would answer 200 after 20 s and the transport would time out after 30 s:
            // `.cancelled` can only come from the cancellation, so the outcome proves it ended the
            // call (no wall-clock bound, see timeoutCancelsTheRequestAndClosesItsConnection).
            try await withHTTPTransport(for: server, timeoutMilliseconds: 30_000) { transport in
                server.enqueue(.delay(.milliseconds(20_000)))
                let task = Task {
                    try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "POST", body: trackEvents))
                }
                try await server.waitForRequests(count: 1)
                task.cancel()
                let result = await task.result
                #expect(throws: HTTPTransportError.cancelled) { try result.get() }
                try await server.waitUntil(description: "connection closed") { $0.openConnectionCount == 0 }
            }
        }
    }

    @Test func refusedConnectionAndShutdownAreClearErrors() async throws {
        // Port 1 (tcpmux) on loopback: nothing listens there, so the connection is refused. (A
        // stopped test server's port could be reused by a server of a parallel test.)
        let base = "http://127.0.0.1:1/experience/"
        let transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [base], requestTimeout: .milliseconds(30_000)))
        let error = await caughtError { _ = try await transport.send(FetchRequest(url: base + "health", method: "GET")) }
        #expect(error as? HTTPTransportError == .connectionFailed("connection refused"), "\(String(describing: error))")
        try await transport.shutdown()
        try await transport.shutdown()
        let afterShutdown = await caughtError { _ = try await transport.send(FetchRequest(url: base + "health", method: "GET")) }
        #expect(afterShutdown as? HTTPTransportError == .shutDown)
    }

    @Test func droppingATransportWithoutShutdownIsSafe() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            var transport: HTTPFetchTransport? = try HTTPFetchTransport(
                configuration: .init(allowedBaseURLs: [server.experienceBaseURL]))
            let response = try await transport?.send(FetchRequest(url: server.experienceBaseURL + "health", method: "GET"))
            #expect(response?.status == 200)
            transport = nil
            try await server.waitUntil(description: "pooled connection closed") { $0.openConnectionCount == 0 }
        }
    }

    @Test func aResponseCarriesItsStatusAndLowerCasedHeadersAndARefusedURLFailsWithItsReason() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                server.enqueue(.retryAfter(seconds: 3, status: 429))
                let response = try await transport.send(FetchRequest(
                    url: experienceURL(server, "profiles"), method: "POST", headers: ["Content-Type": "text/plain"], body: #"{"events":[]}"#))
                #expect(response.status == 429)
                #expect(response.headers["retry-after"] == "3")
                do {
                    _ = try await transport.send(FetchRequest(url: "https://elsewhere.example/", method: "GET"))
                    Issue.record("a URL outside the allow-list must be refused")
                } catch {
                    #expect("\(error)" == "request refused: https://elsewhere.example/ is outside the configured Experience and Insights base URLs")
                }
                #expect(server.requests.count == 1)
            }
        }
    }
}

@Suite("HostAllowList")
struct TransportAllowListTests {
    @Test func invalidBaseURLsAreRejected() {
        for base in ["", "experience.example.com", "ftp://h/", "http://", "/relative/path"] {
            #expect(throws: HTTPTransportError.invalidBaseURL(base)) { try HostAllowList(baseURLs: [base]) }
        }
        #expect(throws: HTTPTransportError.invalidBaseURL("mailto:x@y")) {
            try HTTPFetchTransport(configuration: .init(allowedBaseURLs: ["mailto:x@y"]))
        }
    }

    @Test func dotSegmentsAndEncodedSeparatorsAreRefusedAsPercentDecodingSeesThem() throws {
        let list = try HostAllowList(baseURLs: ["http://api.example.com/base"])
        let pieces = ["a", ".", "..", "%2e", "%2E", "%2f", "%5C", "%5c", "\\", "%", "%zz", "%FF", "%2", "e", "/", "%25"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let path = (0..<Int.random(in: 1...5, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let url = "http://api.example.com/base/" + path
            // The rule on the path as the URL parser gives it, with Foundation's
            // percent-decoding as the reference.
            guard let parsedPath = URLComponents(string: url)?.percentEncodedPath else { continue }
            let plain = parsedPath.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
                let lowered = segment.lowercased()
                if lowered.contains("%2f") || lowered.contains("%5c") || segment.contains("\\") { return false }
                let decoded = String(segment).removingPercentEncoding ?? String(segment)
                return decoded != "." && decoded != ".."
            }
            #expect(list.allows(url) == plain, "\(path) → \(parsedPath)")
        }
    }

    @Test func comparisonNormalisesSchemeHostPortAndSlash() throws {
        let list = try HostAllowList(baseURLs: ["HTTPS://Experience.Example.COM", "http://ingest.example.com:8080/insights"])
        #expect(list.bases.map(\.description) == ["https://experience.example.com:443/", "http://ingest.example.com:8080/insights/"])
        #expect(list.allows("https://experience.example.com/v2/organizations/o/environments/main/profiles?locale=de"))
        #expect(list.allows("https://EXPERIENCE.example.com:443/v2/x"))
        #expect(!list.allows("http://experience.example.com/v2/x"), "scheme differs")
        #expect(!list.allows("https://experience.example.com:8443/v2/x"), "port differs")
        #expect(!list.allows("https://experience.example.com.evil.test/v2/x"))
        #expect(list.allows("http://ingest.example.com:8080/insights/v1/organizations/o/environments/main/events"))
        #expect(list.allows("http://ingest.example.com:8080/insights"))
        #expect(!list.allows("http://ingest.example.com/insights/v1/x"), "default port 80 is not 8080")
        #expect(!list.allows("http://ingest.example.com:8080/insightsv1/x"))
        #expect(!list.allows("http://ingest.example.com:8080/insights/./v1"))
        #expect(!list.allows("http://ingest.example.com:8080/insights/a%2Fb"))
        #expect(!list.allows(""))
    }
}
