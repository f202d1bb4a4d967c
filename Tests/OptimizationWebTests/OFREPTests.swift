import Foundation
import Synchronization
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
@testable import OptimizationWeb
import OptimizationTesting
import MetricsTestKit
import Testing

/// ``OFREPEvaluator``: Contentful custom flags over the OpenFeature Remote Evaluation Protocol,
/// against the test kit's Experience API on loopback.
@Suite("OFREP evaluation", .hangBound)
struct OFREPTests {
    static let token = "ofrep-test-token-0123456789abcdef"
    static let apiKey = "ofrep-test-key-0123456789abcdefgh"

    /// A profile whose answer holds a selected-variant flag, a baseline flag and an object flag.
    static let flagged: JSONValue = [
        "profile": ["id": "x"],
        "experiences": [["experienceId": "exp-hero", "variantIndex": 1, "variants": ["a": "b"]]],
        "changes": [
            ["type": "Variable", "key": "hero-cta-color", "value": "#d73a49", "meta": ["experienceId": "exp-hero", "variantIndex": 1]],
            ["type": "Variable", "key": "free-shipping", "value": 50, "meta": ["experienceId": "exp-ship", "variantIndex": 0]],
            ["type": "Variable", "key": "layout", "value": ["value": ["columns": 3]], "meta": ["experienceId": "exp-layout", "variantIndex": 2]],
        ],
    ]
    static let unflagged: JSONValue = ["profile": ["id": "x"], "experiences": [], "changes": []]

    /// Runs `body` with a started service against a server answering `flagged` for every profile
    /// but `plain-visitor` (no flags), and an evaluator with a bearer token and an API key.
    private func withEvaluator(
        allowedEventTypes: [String]? = nil, queuePolicy: QueuePolicy? = nil, experienceTimeout: Duration = .milliseconds(1500),
        storesConsented: Bool = false, targetingKeys: OFREPConfiguration.TargetingKeys = .profileIds, clock: ManualClock = ManualClock(),
        _ body: (OFREPEvaluator, LocalOptimizationAPIServer, ManualClock) async throws -> Void
    ) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.setExperienceData(perProfile: { id in id == "plain-visitor" ? Self.unflagged : Self.flagged })
            try await withService(
                server, clock: clock, allowedEventTypes: allowedEventTypes, queuePolicy: queuePolicy, experienceTimeout: experienceTimeout
            ) { service in
                let evaluator = try OFREPEvaluator(
                    service: service,
                    configuration: OFREPConfiguration(
                        credentials: [.bearerToken(Self.token), .apiKey(Self.apiKey)], targetingKeys: targetingKeys, cacheTimeToLive: .seconds(5),
                        storesConsentedEvaluations: storesConsented, overloadRetryAfter: .milliseconds(2_500)))
                try await body(evaluator, server, clock)
            }
        }
    }

    private func post(
        _ path: String, _ body: String, headers: [(name: String, value: String)] = [(name: "Authorization", value: "Bearer \(OFREPTests.token)")]
    ) -> OFREPRequest {
        OFREPRequest(method: "POST", path: path, headers: headers + [(name: "Content-Type", value: "application/json")], body: Array(body.utf8))
    }

    private func context(_ profileId: String, consent: Bool? = nil) -> String {
        consent.map { #"{"context":{"targetingKey":"\#(profileId)","consent":\#($0)}}"# } ?? #"{"context":{"targetingKey":"\#(profileId)"}}"#
    }

    private func json(_ response: OFREPResponse?) throws -> JSONValue {
        try JSONValue(jsonData: try #require(response).body)
    }

    // MARK: Single flag

    @Test func aFlagOfASelectedVariantIsATargetingMatchReadWithoutStoring() async throws {
        try await withEvaluator { evaluator, server, _ in
            let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/hero-cta-color", context("visitor-1")))
            #expect(response?.status == 200)
            #expect(response?.headers["Content-Type"] == "application/json")
            let body = try json(response)
            #expect(body == [
                "key": "hero-cta-color", "value": "#d73a49", "reason": "TARGETING_MATCH", "variant": "variant-1",
                "metadata": ["variantIndex": 1, "experienceId": "exp-hero"],
            ])
            let call = try #require(server.requests(matching: .experience).first)
            #expect(call.queryValue("type") == "preflight")
            #expect(call.path.hasSuffix("/profiles/visitor-1"))
        }
    }

    @Test func aBaselineValueIsTheDefaultAndObjectValuesAreUnwrappedAsTheCoreReadsThem() async throws {
        try await withEvaluator { evaluator, _, _ in
            let shipping = try json(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/free-shipping", context("visitor-1"))))
            #expect(shipping["reason"] == "DEFAULT" && shipping["variant"] == "baseline" && shipping["value"] == 50)
            let layout = try json(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("visitor-1"))))
            #expect(layout["value"] == ["columns": 3])
            #expect(layout["variant"] == "variant-2")
        }
    }

    @Test func anUnknownFlagOrAProfileWithoutFlagsIsFlagNotFound() async throws {
        try await withEvaluator { evaluator, _, _ in
            for (key, profile) in [("no-such-flag", "visitor-1"), ("hero-cta-color", "plain-visitor")] {
                let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/\(key)", context(profile)))
                #expect(response?.status == 404)
                let body = try json(response)
                #expect(body["key"] == .string(key) && body["errorCode"] == "FLAG_NOT_FOUND")
            }
        }
    }

    @Test(arguments: [
        ("not json", "PARSE_ERROR"), ("[1]", "PARSE_ERROR"), ("{}", "TARGETING_KEY_MISSING"),
        (#"{"context":{}}"#, "TARGETING_KEY_MISSING"), (#"{"context":{"targetingKey":""}}"#, "TARGETING_KEY_MISSING"),
        (#"{"context":[]}"#, "INVALID_CONTEXT"), (#"{"context":{"targetingKey":42}}"#, "INVALID_CONTEXT"),
        (#"{"context":{"targetingKey":"a b"}}"#, "INVALID_CONTEXT"), (#"{"context":{"targetingKey":"p","consent":"yes"}}"#, "INVALID_CONTEXT"),
        (#"{"context":{"targetingKey":".."}}"#, "INVALID_CONTEXT"), (#"{"context":{"targetingKey":"."}}"#, "INVALID_CONTEXT"),
    ])
    func aBadRequestIsA400WithItsCodeAndCallsNothing(_ body: String, _ code: String) async throws {
        try await withEvaluator { evaluator, server, _ in
            let single = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/hero-cta-color", body))
            #expect(single?.status == 400)
            let singleBody = try json(single)
            #expect(singleBody["key"] == "hero-cta-color" && singleBody["errorCode"] == .string(code), "\(body)")
            #expect(singleBody["errorDetails"]?.stringValue?.isEmpty == false)
            let bulk = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", body))
            #expect(bulk?.status == 400)
            let bulkBody = try json(bulk)
            #expect(bulkBody["errorCode"] == .string(code) && bulkBody["key"] == nil)
            #expect(server.requests(matching: .experience).isEmpty)
        }
    }

    @Test func aBodyLargerThanTheBoundIsAParseError() async throws {
        try await withEvaluator { evaluator, server, _ in
            let huge = #"{"context":{"targetingKey":"p","pad":""# + String(repeating: "x", count: 70_000) + #""}}"#
            let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/k", huge))
            #expect(response?.status == 400)
            let code = try json(response)["errorCode"]
            #expect(code == "PARSE_ERROR")
            // A body the server stopped reading: authentication first, then the same error.
            var unread = post("/ofrep/v1/evaluate/flags/k", "")
            unread.bodyExceedsLimit = true
            let stopped = await evaluator.respond(to: unread)
            #expect(stopped?.status == 400)
            unread.headers = []
            #expect(await evaluator.respond(to: unread)?.status == 401)
            #expect(server.requests(matching: .experience).isEmpty)
        }
    }

    // MARK: Authentication and routing

    @Test func withoutAnAcceptedCredentialNothingIsEvaluated() async throws {
        try await withEvaluator { evaluator, server, _ in
            let path = "/ofrep/v1/evaluate/flags/hero-cta-color"
            for headers in [[], [(name: "Authorization", value: "Bearer wrong")], [(name: "X-API-Key", value: "wrong")],
                            [(name: "Authorization", value: "Basic \(Self.token)")]] as [[(name: String, value: String)]] {
                let response = await evaluator.respond(to: post(path, context("visitor-1"), headers: headers))
                #expect(response?.status == 401)
                #expect(response?.body.isEmpty == true)
            }
            #expect(server.requests(matching: .experience).isEmpty)
            let byKey = await evaluator.respond(to: post(path, context("visitor-1"), headers: [(name: "x-api-key", value: Self.apiKey)]))
            #expect(byKey?.status == 200)
            let byToken = await evaluator.respond(to: post(path, context("visitor-1"), headers: [(name: "authorization", value: "bearer \(Self.token)")]))
            #expect(byToken?.status == 200)
            #expect(evaluator.unauthorizedCount == 4)
        }
    }

    @Test func aRequestWithSeveralCredentialFieldsIsRefusedEvenWhenOneIsRight() async throws {
        try await withEvaluator { evaluator, server, _ in
            let path = "/ofrep/v1/evaluate/flags/hero-cta-color"
            let guesses = (0..<50).map { (name: "X-API-Key", value: "guess-\($0)-0123456789abcdef0123456789") }
            let manyKeys = await evaluator.respond(to: post(path, context("visitor-1"), headers: guesses + [(name: "X-API-Key", value: Self.apiKey)]))
            #expect(manyKeys?.status == 401)
            let both = await evaluator.respond(to: post(path, context("visitor-1"), headers: [
                (name: "X-API-Key", value: Self.apiKey), (name: "Authorization", value: "Bearer \(Self.token)"),
            ]))
            #expect(both?.status == 401)
            let twoTokens = await evaluator.respond(to: post(path, context("visitor-1"), headers: [
                (name: "Authorization", value: "Bearer wrong"), (name: "Authorization", value: "Bearer \(Self.token)"),
            ]))
            #expect(twoTokens?.status == 401)
            #expect(server.requests(matching: .experience).isEmpty)
            #expect(evaluator.unauthorizedCount == 3)
        }
    }

    @Test func unauthorizedRequestsAreCountedInTheMetric() async throws {
        let metrics = TestMetrics()
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
        let evaluator = try OFREPEvaluator(
            service: service, configuration: OFREPConfiguration(credentials: [.apiKey(Self.apiKey)], targetingKeys: .profileIds), metricsFactory: metrics)
        for _ in 0..<3 {
            #expect(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", context("p"), headers: []))?.status == 401)
        }
        let counter = try metrics.expectCounter("optimization_ofrep_unauthorized_total")
        #expect(counter.totalValue == 3)
    }

    // MARK: Targeting keys

    private static func tokenCodec(clock: ManualClock) -> SignedValueCodec {
        SignedValueCodec(
            keys: try! VisitorStateKeys([Array("ofrep-targeting-test-key-0123456789abcdef".utf8)]), purpose: OFREPTargetingToken.purpose,
            lifetime: .seconds(3_600), clock: clock)
    }

    @Test func withSealedTokensABareProfileIdIsRefusedAndATokenEvaluatesItsProfile() async throws {
        let clock = ManualClock()
        let codec = Self.tokenCodec(clock: clock)
        try await withEvaluator(targetingKeys: .sealedTokens(codec), clock: clock) { evaluator, server, _ in
            let path = "/ofrep/v1/evaluate/flags/hero-cta-color"
            let bare = await evaluator.respond(to: post(path, context("victim-profile")))
            #expect(bare?.status == 400)
            let code = try json(bare)["errorCode"]
            #expect(code == "INVALID_CONTEXT")
            #expect(server.requests(matching: .experience).isEmpty)

            let token = try #require(OFREPTargetingToken.seal(profileId: "victim-profile", with: codec))
            let answered = await evaluator.respond(to: post(path, context(token)))
            #expect(answered?.status == 200)
            let call = try #require(server.requests(matching: .experience).first)
            #expect(call.path.hasSuffix("/profiles/victim-profile"))

            // A token of another purpose (a visitor-state cookie, say) or a tampered one does not open.
            let foreign = SignedValueCodec(keys: try VisitorStateKeys([Array("ofrep-targeting-test-key-0123456789abcdef".utf8)]), purpose: "visitor-state", lifetime: .seconds(3_600), clock: clock)
            let foreignToken = try foreign.seal(["profile": "victim-profile"])
            var tampered = Array(token.utf8)
            tampered[4] = tampered[4] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            for key in [foreignToken, String(decoding: tampered, as: UTF8.self)] {
                #expect(await evaluator.respond(to: post(path, context(key)))?.status == 400)
            }
            // An expired token does not open either.
            clock.advance(by: .milliseconds(3_600_001))
            #expect(await evaluator.respond(to: post(path, context(token)))?.status == 400)
            #expect(server.requests(matching: .experience).count == 1)
        }
    }

    @Test func aTokenIsSealedOnlyForAProfileIdTheEvaluatorAccepts() {
        let codec = Self.tokenCodec(clock: ManualClock())
        for bad in ["", ".", "..", "a/b", String(repeating: "p", count: 257)] {
            #expect(OFREPTargetingToken.seal(profileId: bad, with: codec) == nil, "\(bad)")
        }
        let token = OFREPTargetingToken.seal(profileId: "a.b", with: codec)
        #expect(token.flatMap { OFREPTargetingToken.profileId(openedFrom: $0, with: codec) } == "a.b")
    }

    @Test func otherPathsAreNotServedAndOtherMethodsAre405() async throws {
        try await withEvaluator { evaluator, _, _ in
            #expect(await evaluator.respond(to: post("/flags/x", context("p"))) == nil)
            #expect(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/a/b", context("p"))) == nil)
            let get = OFREPRequest(method: "GET", path: "/ofrep/v1/evaluate/flags", headers: [], body: [])
            let response = await evaluator.respond(to: get)
            #expect(response?.status == 405 && response?.headers["Allow"] == "POST")
        }
    }

    @Test func anEvaluatorNeedsACredential() throws {
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
        #expect(throws: OFREPConfigurationError.missingCredentials) {
            try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [], targetingKeys: .profileIds))
        }
        #expect(throws: OFREPConfigurationError.missingCredentials) {
            try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [.bearerToken("")], targetingKeys: .profileIds))
        }
        #expect(throws: OFREPConfigurationError.invalidBound("cacheCapacity")) {
            try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [.apiKey(Self.apiKey)], targetingKeys: .profileIds, cacheCapacity: 0))
        }
    }

    @Test func aCredentialShorterThan32BytesIsRefusedAtCreation() throws {
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
        let short = String(repeating: "k", count: OFREPConfiguration.minimumCredentialLength - 1)
        #expect(throws: OFREPConfigurationError.weakCredential("API key")) {
            try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [.apiKey(short)], targetingKeys: .profileIds))
        }
        #expect(throws: OFREPConfigurationError.weakCredential("bearer token")) {
            try OFREPEvaluator(service: service, configuration: OFREPConfiguration(
                credentials: [.apiKey(Self.apiKey), .bearerToken("x")], targetingKeys: .profileIds))
        }
        _ = try OFREPEvaluator(service: service, configuration: OFREPConfiguration(credentials: [.apiKey(short + "k")], targetingKeys: .profileIds))
    }

    // MARK: Bulk, ETag and the cache

    @Test func bulkEvaluationListsEveryFlagWithAnETagAndAnswers304WhenItMatches() async throws {
        try await withEvaluator { evaluator, server, clock in
            let first = try #require(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", context("visitor-1"))))
            #expect(first.status == 200)
            let flags = try #require(try json(first)["flags"]?.arrayValue)
            #expect(flags.map { $0["key"] } == ["hero-cta-color", "free-shipping", "layout"])
            #expect(flags[0]["reason"] == "TARGETING_MATCH" && flags[1]["reason"] == "DEFAULT")
            let tag = try #require(first.headers["ETag"])
            #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && tag.count == 34)

            let unchanged = await evaluator.respond(to: post(
                "/ofrep/v1/evaluate/flags", context("visitor-1"),
                headers: [(name: "Authorization", value: "Bearer \(Self.token)"), (name: "If-None-Match", value: "\"other\", W/\(tag)")]))
            #expect(unchanged?.status == 304 && unchanged?.body.isEmpty == true && unchanged?.headers["ETag"] == tag)
            // Both answers came from one Experience call (the flags are cached for 5 s).
            #expect(server.requests(matching: .experience).count == 1)

            let none = try #require(await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", context("plain-visitor"))))
            let noFlags = try json(none)
            #expect(noFlags == ["flags": []])
            #expect(none.headers["ETag"] != tag)

            clock.advance(by: .seconds(5))
            _ = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", context("visitor-1")))
            #expect(server.requests(matching: .experience).count == 3)
        }
    }

    @Test func concurrentEvaluationsOfOneProfileShareOneExperienceCall() async throws {
        try await withEvaluator { evaluator, server, _ in
            server.enqueue(.delay(.milliseconds(200)), for: .experience)
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { await evaluator.respond(to: self.post("/ofrep/v1/evaluate/flags/layout", self.context("visitor-9")))?.status ?? 0 }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(server.requests(matching: .experience).count == 1)
        }
    }

    @Test func theCacheKeepsAtMostItsCapacityForItsTimeToLiveAndNeverAFailure() async throws {
        let clock = ManualClock()
        let cache = OFREPAnswerCache(clock: clock, timeToLive: .seconds(5), capacity: 2)
        let calls = Mutex<[String]>([])
        func ask(_ key: String, failing: Bool = false) async -> Bool {
            let result = await cache.answer(for: key) {
                calls.withLock { $0.append(key) }
                return failing ? .failure(.general("down")) : .success(.init(selectedOptimizations: nil, changes: []))
            }
            if case .success = result { return true }
            return false
        }
        let first = await ask("a"), second = await ask("b"), again = await ask("a")
        #expect(first && second && again)
        #expect(calls.withLock { $0 } == ["a", "b"])
        _ = await ask("c")  // over capacity: the oldest, "a", goes
        #expect(cache.count == 2)
        _ = await ask("a")
        #expect(calls.withLock { $0 } == ["a", "b", "c", "a"])
        clock.advance(by: .seconds(5))  // every answer expired
        _ = await ask("a")
        #expect(calls.withLock { $0.last } == "a" && calls.withLock { $0.count } == 5)
        let failed = await ask("d", failing: true)
        #expect(!failed)
        _ = await ask("d")
        #expect(calls.withLock { $0.suffix(2) } == ["d", "d"])
    }

    // MARK: Failures and consent

    @Test func anOverloadedProfileIs429WithRetryAfterAndIsNotCached() async throws {
        // A backoff longer than the budget: the first overload answer is the call's outcome.
        let policy = QueuePolicy(flush: QueueFlushPolicy(baseBackoff: .seconds(10), maxBackoff: .seconds(10), jitterRatio: 0))
        try await withEvaluator(queuePolicy: policy, experienceTimeout: .seconds(1)) { evaluator, server, _ in
            let overload = String(decoding: try fixtureData("experience-v2/error-profile-overload.json"), as: UTF8.self)
            server.enqueue(.status(429, body: overload), for: .experience)
            let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("visitor-2")))
            #expect(response?.status == 429)
            #expect(response?.headers["Retry-After"] == "3")
            let retried = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("visitor-2")))
            #expect(retried?.status == 200)
            #expect(server.requests(matching: .experience).count == 2)
        }
    }

    @Test func anUpstreamFailureIsA500WithoutVisitorData() async throws {
        let policy = QueuePolicy(flush: QueueFlushPolicy(baseBackoff: .seconds(10), maxBackoff: .seconds(10), jitterRatio: 0))
        try await withEvaluator(queuePolicy: policy, experienceTimeout: .seconds(1)) { evaluator, server, _ in
            server.enqueue(.status(500, body: "{}"), for: .experience)
            let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags", context("visitor-secret-id")))
            #expect(response?.status == 500)
            let details = try #require(try json(response)["errorDetails"]?.stringValue)
            #expect(!details.contains("visitor-secret-id"))
        }
    }

    @Test func anUnconsentedVisitorIsNeverStoredAndAStrictAllowListSendsNothing() async throws {
        try await withEvaluator(storesConsented: true) { evaluator, server, _ in
            for (profile, consent) in [("v-unset", nil), ("v-declined", false)] as [(String, Bool?)] {
                let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context(profile, consent: consent)))
                #expect(response?.status == 200)
                #expect(server.requests(matching: .experience).last?.queryValue("type") == "preflight")
            }
            // Consented, with storing configured: a stored page.
            let consented = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("v-yes", consent: true)))
            #expect(consented?.status == 200)
            #expect(server.requests(matching: .experience).last?.queryValue("type") == nil)
        }
        try await withEvaluator(allowedEventTypes: []) { evaluator, server, _ in
            let response = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("v-unset")))
            #expect(response?.status == 400)
            let code = try json(response)["errorCode"]
            #expect(code == "INVALID_CONTEXT")
            #expect(server.requests(matching: .experience).isEmpty)
            let consented = await evaluator.respond(to: post("/ofrep/v1/evaluate/flags/layout", context("v-yes", consent: true)))
            #expect(consented?.status == 200)
            #expect(server.requests(matching: .experience).last?.queryValue("type") == "preflight")
        }
    }

    @Test func anAnswerGivenUnderConsentIsNotServedToTheSameProfileWithoutConsent() async throws {
        // Strict consent: the allow-list admits nothing before consent.
        try await withEvaluator(allowedEventTypes: []) { evaluator, server, _ in
            let path = "/ofrep/v1/evaluate/flags/layout"
            let consented = await evaluator.respond(to: post(path, context("visitor-1", consent: true)))
            #expect(consented?.status == 200)
            for consent in [nil, false] as [Bool?] {
                let response = await evaluator.respond(to: post(path, context("visitor-1", consent: consent)))
                #expect(response?.status == 400, "consent \(String(describing: consent))")
                let code = try json(response)["errorCode"]
                #expect(code == "INVALID_CONTEXT")
            }
            #expect(server.requests(matching: .experience).count == 1)
        }
    }
}
