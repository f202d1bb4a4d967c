import Foundation
import HummingbirdTesting
import Optimization
import OptimizationHummingbird
import OptimizationTesting
import Testing

/// The Contentful webhook route, the OFREP routes and the service's lifecycle in the application.
@Suite struct ServiceRouteTests {
    static let secret = String(repeating: "s", count: 64)

    /// A webhook request for `id`, with its headers as sent.
    static func webhook(_ id: String) -> ContentfulWebhookRequest {
        ContentfulWebhookRequest(
            method: "POST", path: "/webhooks/contentful",
            headers: [(name: "content-type", value: "application/vnd.contentful.management.v1+json"), (name: "x-contentful-topic", value: "ContentManagement.Entry.publish")],
            body: Array(#"{"sys":{"id":"\#(id)","type":"Entry"}}"#.utf8))
    }

    static func send(_ request: ContentfulWebhookRequest, body: [UInt8]? = nil, _ client: any TestClientProtocol) async throws -> TestResponse {
        try await client.send(.post, request.path, headers: request.headers.map { ($0.name, $0.value) }, body: String(decoding: body ?? request.body, as: UTF8.self))
    }

    @Test func aSignedWebhookInvalidatesAndAnUnsignedTamperedOrStaleOneIsRefused() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server, webhook: try .signed(secret: Self.secret)) { client, app in
                let signer = try ContentfulWebhookSigner(secret: Self.secret)
                let now = { Int64(app.clock.now()) }
                #expect(try await Self.send(signer.signed(Self.webhook("entry-1"), timestamp: now()), client).status == .noContent)
                #expect(app.invalidated.all == ["entry-1"])

                #expect(try await Self.send(Self.webhook("entry-2"), client).status == .unauthorized, "unsigned")
                let signed = signer.signed(Self.webhook("entry-2"), timestamp: now())
                #expect(try await Self.send(signed, body: Self.webhook("entry-3").body, client).status == .unauthorized, "tampered body")
                let other = try ContentfulWebhookSigner(secret: String(repeating: "o", count: 64))
                #expect(try await Self.send(other.signed(Self.webhook("entry-2"), timestamp: now()), client).status == .unauthorized, "another secret")
                let stale = signer.signed(Self.webhook("entry-2"), timestamp: now())
                app.clock.advance(by: .seconds(31))
                #expect(try await Self.send(stale, client).status == .unauthorized, "older than 30 s")
                #expect(app.invalidated.all == ["entry-1"], "nothing refused was invalidated")

                // A captured webhook sent again within its time to live is a replay.
                let captured = signer.signed(Self.webhook("entry-4"), timestamp: now())
                #expect(try await Self.send(captured, client).status == .noContent)
                #expect(try await Self.send(captured, client).status == .unauthorized, "replayed")
                #expect(app.invalidated.all == ["entry-1", "entry-4"])
                // An unsigned request is refused before its body is read: 401, not 413, for a body
                // over the route's 1 MiB limit.
                let huge = [UInt8](repeating: UInt8(ascii: "x"), count: ContentfulWebhookReceiver.maximumBodyBytes + 1)
                #expect(try await Self.send(Self.webhook("entry-5"), body: huge, client).status == .unauthorized)

                let noId = signer.signed(ContentfulWebhookRequest(method: "POST", path: "/webhooks/contentful", headers: [], body: Array(#"{"sys":{}}"#.utf8)), timestamp: now())
                #expect(try await Self.send(noId, client).status == .unprocessableContent)
            }
        }
    }

    @Test func theWebhookRouteIsMountedOnlyWithASecretOrWhenExplicitlyInsecure() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server, webhook: nil) { client, app in
                let response = try await Self.send(Self.webhook("entry-1"), client)
                #expect(response.status == .notFound, "no secret: not mounted")
                #expect(app.invalidated.all.isEmpty)
            }
            try await withTestApp(server, webhook: .insecureUnsigned) { client, app in
                let response = try await Self.send(Self.webhook("entry-1"), client)
                #expect(response.status == .noContent)
                #expect(app.invalidated.all == ["entry-1"])
            }
        }
        #expect(throws: ContentfulWebhookError.invalidSecret) { _ = try ContentfulWebhookAuthentication.signed(secret: "short") }
    }

    @Test func aCleanShutdownFlushesTheQueuedEvents() async throws {
        try await withLocalAPIServer { server in
            try await withTestApp(server) { client, app in
                #expect(app.service.isRunning, "started with the application")
                let page = try await client.send(.get, "/", cookie: app.cookie(VisitorState(profileId: "flush-visitor", consent: true)))
                #expect(page.status == .ok)
                #expect(server.requests(matching: .insights).isEmpty, "the view is queued: the flush timer's clock does not move")
                #expect(app.service.queuedEventCount == 1)
            } afterShutdown: { app in
                // The application's graceful shutdown (the server first, then the service) flushed it.
                #expect(!app.service.isRunning)
                let views = server.insightsEvents.filter { $0["type"] == "component" }
                #expect(views.count == 1, "the queued view reached the Insights API before the service stopped")
                #expect(server.insightsBatches.description.contains("flush-visitor"))
            }
        }
    }

    @Test func ofrepRoutesAnswerAuthenticatedClientsAndAreNotMountedWithoutCredentials() async throws {
        let body = #"{"context":{"targetingKey":"visitor-ofrep-1"}}"#
        let auth = [("Authorization", "Bearer test-token-0123456789abcdef0123456789")]
        try await withLocalAPIServer { server in
            try await withTestApp(server, ofrep: [.bearerToken("test-token-0123456789abcdef0123456789")]) { client, _ in
                let flag = try await client.send(.post, "/ofrep/v1/evaluate/flags/free-shipping-threshold", headers: auth, json: body)
                #expect(flag.status == .ok)
                let value = try JSONValue(jsonText: flag.text)
                #expect(value["key"] == "free-shipping-threshold" && value["value"] == 50)
                #expect(flag.headers[.cacheControl] == "no-store")
                let bulk = try await client.send(.post, "/ofrep/v1/evaluate/flags", headers: auth, json: body)
                #expect(bulk.status == .ok)
                #expect(try JSONValue(jsonText: bulk.text)["flags"]?.arrayValue?.isEmpty == false)
                #expect(try await client.send(.post, "/ofrep/v1/evaluate/flags/free-shipping-threshold", json: body).status == .unauthorized)
                #expect(server.requests(matching: .experience).allSatisfy { $0.queryValue("type") == "preflight" }, "evaluations store nothing")
            }
            try await withTestApp(server) { client, _ in
                let response = try await client.send(.post, "/ofrep/v1/evaluate/flags", headers: auth, json: body)
                #expect(response.status == .notFound)
            }
        }
    }
}
