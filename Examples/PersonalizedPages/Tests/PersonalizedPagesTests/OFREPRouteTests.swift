import AsyncHTTPClient
import Foundation
import NIOCore
import Optimization
import PersonalizedPagesApp
import OptimizationTesting
import Testing

/// The OFREP routes of the app: mounted only with credentials, authenticated, answering a
/// visitor's flags from the Experience API (the test kit's, on loopback).
@Suite(.hangBound) struct OFREPRouteTests {
    static let token = "example-ofrep-token-0123456789abcdef"
    static let bareBody = #"{"context":{"targetingKey":"visitor-ofrep-1"}}"#

    static func body(_ app: PersonalizedPagesApp) throws -> String {
        let token = try #require(OFREPTargetingToken.seal(profileId: "visitor-ofrep-1", with: app.ofrepTargetingTokens))
        return #"{"context":{"targetingKey":"\#(token)"}}"#
    }

    @Test func aVisitorsFlagsAreServedToAnAuthenticatedOpenFeatureClient() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, configure: { $0.ofrepCredentials = [.bearerToken(Self.token)] }) { baseURL, app in
                let body = try Self.body(app)
                try await withHTTPClient { client in
                    let url = baseURL + "/ofrep/v1/evaluate/flags"
                    let auth = [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "application/json")]
                    let single = try await HTTPExchange.send(client, .POST, url + "/free-shipping-threshold", headers: auth, body: body)
                    #expect(single.status == 200)
                    let flag = try JSONValue(jsonText: String(buffer: single.body))
                    #expect(flag["key"] == "free-shipping-threshold" && flag["value"] == 50 && flag["reason"] == "TARGETING_MATCH")
                    #expect(single.headers.first(name: "cache-control") == "no-store")

                    let bulk = try await HTTPExchange.send(client, .POST, url, headers: auth, body: body)
                    #expect(bulk.status == 200)
                    let tag = try #require(bulk.headers.first(name: "etag"))
                    let flags = try JSONValue(jsonText: String(buffer: bulk.body))["flags"]?.arrayValue
                    #expect(flags?.isEmpty == false)
                    let unchanged = try await HTTPExchange.send(client, .POST, url, headers: auth + [("If-None-Match", tag)], body: body)
                    #expect(unchanged.status == 304)

                    let missing = try await HTTPExchange.send(client, .POST, url + "/no-such-flag", headers: auth, body: body)
                    #expect(missing.status == 404)
                    let anonymous = try await HTTPExchange.send(client, .POST, url + "/hero-cta-color", body: body)
                    #expect(anonymous.status == 401)
                    let huge = #"{"context":{"targetingKey":"v","pad":""# + String(repeating: "x", count: 70_000) + #""}}"#
                    let tooLarge = try await HTTPExchange.send(client, .POST, url + "/hero-cta-color", headers: auth, body: huge)
                    #expect(tooLarge.status == 400)
                    #expect(try JSONValue(jsonText: String(buffer: tooLarge.body))["errorCode"] == "PARSE_ERROR")
                    // A bare profile id is no authority: only the app's sealed token names a visitor.
                    let bare = try await HTTPExchange.send(client, .POST, url + "/free-shipping-threshold", headers: auth, body: Self.bareBody)
                    #expect(bare.status == 400)
                    // Evaluations are preflights: nothing was stored.
                    #expect(server.requests(matching: .experience).allSatisfy { $0.queryValue("type") == "preflight" })
                }
            }
        }
    }

    @Test func withoutCredentialsTheRoutesAreNotMounted() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server) { baseURL, _ in
                try await withHTTPClient { client in
                    let answer = try await HTTPExchange.send(
                        client, .POST, baseURL + "/ofrep/v1/evaluate/flags", headers: [("Authorization", "Bearer \(Self.token)")], body: Self.bareBody)
                    #expect(answer.status == 404)
                    #expect(server.requests(matching: .experience).isEmpty)
                }
            }
        }
    }

    @Test func withProfileIdsTrustedABareIdIsEvaluated() async throws {
        try await withLocalAPIServer { server in
            try await withApp(server, configure: { $0.ofrepCredentials = [.bearerToken(Self.token)]; $0.ofrepTrustsProfileIds = true }) { baseURL, _ in
                try await withHTTPClient { client in
                    let answer = try await HTTPExchange.send(
                        client, .POST, baseURL + "/ofrep/v1/evaluate/flags/free-shipping-threshold",
                        headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "application/json")], body: Self.bareBody)
                    #expect(answer.status == 200)
                }
            }
        }
    }
}
