import Foundation
import Optimization
import OptimizationTesting
import OptimizationVapor
import Testing
import VaporTesting

/// The Contentful webhook and OFREP routes, and the service's lifecycle with the application.
@Suite struct ServiceRouteTests {
    static let secret = String(repeating: "k", count: 64)

    /// A publish webhook of `id` as Contentful sends it, unsigned.
    static func publish(_ id: String) -> ContentfulWebhookRequest {
        ContentfulWebhookRequest(
            method: "POST", path: "/webhooks/contentful",
            headers: [(name: "content-type", value: "application/vnd.contentful.management.v1+json")],
            body: Array(#"{"sys":{"id":"\#(id)","type":"Entry"}}"#.utf8))
    }

    static func deliver(_ webhook: ContentfulWebhookRequest, to harness: VaporHarness, body: [UInt8]? = nil) async throws -> HTTPStatus {
        try await harness.send(.POST, webhook.path, headers: webhook.headers.map { ($0.name, $0.value) }, raw: String(decoding: body ?? webhook.body, as: UTF8.self)).status
    }

    @Test func aSignedWebhookIsAcceptedAndAnUnsignedOneRefused() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server, HarnessOptions(webhook: try .signed(secret: Self.secret))) { harness in
                let signer = try ContentfulWebhookSigner(secret: Self.secret)
                let timestamp = { Int64(harness.clock.now()) }
                #expect(try await Self.deliver(signer.signed(Self.publish("vapor-entry"), timestamp: timestamp()), to: harness) == .noContent)
                #expect(harness.invalidated.all == ["vapor-entry"])
                #expect(try await Self.deliver(Self.publish("vapor-unsigned"), to: harness) == .unauthorized)
                let swapped = signer.signed(Self.publish("vapor-signed"), timestamp: timestamp())
                #expect(try await Self.deliver(swapped, to: harness, body: Self.publish("vapor-swapped").body) == .unauthorized)
                let late = signer.signed(Self.publish("vapor-late"), timestamp: timestamp())
                harness.clock.advance(by: .seconds(31))
                #expect(try await Self.deliver(late, to: harness) == .unauthorized)
                #expect(harness.invalidated.all == ["vapor-entry"], "nothing refused was invalidated")
            }
        }
    }

    @Test func withoutASecretTheWebhookRouteIsNotMounted() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                let status = try await Self.deliver(Self.publish("vapor-entry"), to: harness)
                #expect(status == .notFound, "no secret: nothing answers")
            }
            try await withVaporHarness(server, HarnessOptions(webhook: .insecureUnsigned)) { harness in
                let status = try await Self.deliver(Self.publish("vapor-entry"), to: harness)
                #expect(status == .noContent, "mounted without authentication when asked to")
                #expect(harness.invalidated.all == ["vapor-entry"])
            }
        }
    }

    @Test func aCleanShutdownFlushesWhatIsQueued() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server) { harness in
                #expect(harness.service.isRunning, "booting the application started the service")
                let page = try await harness.send(.GET, "/", cookie: harness.cookie(VisitorState(profileId: "vapor-flush", consent: true)))
                #expect(page.status == .ok)
                #expect(harness.service.queuedEventCount == 1, "the view waits for a flush timer on a clock that does not move")
                #expect(server.requests(matching: .insights).isEmpty)
            } afterShutdown: { harness in
                #expect(!harness.service.isRunning, "asyncShutdown() stopped the service")
                #expect(server.insightsEvents.filter { $0["type"] == "component" }.count == 1)
                #expect(server.insightsBatches.description.contains("vapor-flush"))
            }
        }
    }

    @Test func ofrepAnswersAuthenticatedClients() async throws {
        let context = #"{"context":{"targetingKey":"vapor-ofrep"}}"#
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withVaporHarness(server, HarnessOptions(ofrep: [.apiKey("vapor-key-0123456789abcdef0123456789")])) { harness in
                let key = [("X-API-Key", "vapor-key-0123456789abcdef0123456789")]
                let flag = try await harness.send(.POST, "/ofrep/v1/evaluate/flags/free-shipping-threshold", headers: key, json: context)
                #expect(flag.status == .ok)
                #expect(try JSONValue(jsonText: flag.text)["value"] == 50)
                #expect(flag.headers.first(name: .cacheControl) == "no-store")
                let all = try await harness.send(.POST, "/ofrep/v1/evaluate/flags", headers: key, json: context)
                #expect(all.status == .ok && all.headers.first(name: .eTag) != nil)
                #expect(try await harness.send(.POST, "/ofrep/v1/evaluate/flags", json: context).status == .unauthorized)
            }
        }
    }
}
