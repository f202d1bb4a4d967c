import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

/// Sends one request to the server through the production transport and parses the JSON body.
private func call(
    _ transport: HTTPFetchTransport, _ method: String, _ url: String, body: String? = nil,
    contentType: String = "text/plain"
) async throws -> (status: Int, json: JSONValue?, text: String) {
    let response = try await transport.send(FetchRequest(
        url: url, method: method, headers: body == nil ? [:] : ["Content-Type": contentType], body: body))
    return (response.status, response.body.isEmpty ? nil : try? JSONValue(jsonText: response.body), response.body)
}

private func events(_ list: String) -> String {
    #"{"events":\#(list),"options":{"features":["ip-enrichment","location"]}}"#
}

private let track = #"{"type":"track","event":"Added to cart","messageId":"m-1","properties":{"sku":"A1"}}"#

private func identify(channel: String, library: String) -> String {
    #"{"type":"identify","userId":"user-123","traits":{"plan":"pro"},"channel":"\#(channel)","messageId":"m-\#(channel)","context":{"library":{"name":"\#(library)","version":"1.0.0"},"app":{"name":"\#(channel)-app"}}}"#
}

extension Array {
    /// `transform` of each element, one after the other.
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

@Suite("LocalOptimizationAPIServer contract")
struct LocalAPIServerTests {
    @Test func theKnownFixtureProfileIsReturned() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let id = LocalOptimizationAPIServer.fixtureProfileID
                let (status, json, _) = try await call(transport, "GET", experienceURL(server, "profiles/\(id)"))
                #expect(status == 200)
                #expect(json?["data"]?["profile"]?["id"]?.stringValue == id)
                #expect(json?["data"]?["profile"]?["stableId"]?.stringValue == id)
                #expect(json?["message"] == "" && json?["error"] == .null)
            }
        }
    }

    @Test func aCreatedProfileCanBeFetchedAndIdsAreFresh() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let created = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"))
                #expect(created.status == 200)
                let profile = try #require(created.json?["data"]?["profile"])
                let id = try #require(profile["id"]?.stringValue)
                #expect(profile["stableId"]?.stringValue == id)
                #expect(UUID(uuidString: id) != nil, "fresh UUID, got \(id)")
                let data = try #require(created.json?["data"])
                #expect(data["experiences"]?.arrayValue?.isEmpty == false)
                let fetched = try await call(transport, "GET", experienceURL(server, "profiles/\(id)"))
                #expect(fetched.status == 200)
                #expect(fetched.json?["data"]?["profile"]?["id"]?.stringValue == id)
                #expect(fetched.json?["data"] == data, "GET answers the same data")
                let other = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"))
                #expect(other.json?["data"]?["profile"]?["id"]?.stringValue != id)
                #expect(server.knownProfileIDs.contains(id))
                #expect(server.isIdentified(profileID: id) == false)
            }
        }
    }

    @Test func anUpdateKeepsTheRequestedId() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let id = "f0837d7dc6344c36a3a0a06c4cde754b"
                let updated = try await call(transport, "POST", experienceURL(server, "profiles/\(id)"), body: events("[\(track)]"))
                #expect(updated.status == 200)
                #expect(updated.json?["data"]?["profile"]?["id"]?.stringValue == id)
                let fetched = try await call(transport, "GET", experienceURL(server, "profiles/\(id)"))
                #expect(fetched.status == 200)
                #expect(fetched.json?["data"]?["profile"]?["stableId"]?.stringValue == id)
            }
        }
    }

    @Test func anUnknownProfileIs404WithItsErrorCode() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let missing = try await call(transport, "GET", experienceURL(server, "profiles/a19c3f54d2b84e37a93f6d1c0e5b7284"))
                #expect(missing.status == 404)
                #expect(missing.json == ["message": "Profile not found", "data": .object([:]), "error": ["code": "ERR_PROFILE_NOT_FOUND"]])
            }
        }
    }

    @Test func identifyGivesTheIdentifiedProfileWhateverThePlatformContext() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let anonymous = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"))
                var answers: [JSONValue] = []
                for (channel, library) in [("web", "js"), ("mobile", "ios"), ("server", "node"), ("server", "swift")] {
                    let answer = try await call(
                        transport, "POST", experienceURL(server, "profiles"), body: events("[\(identify(channel: channel, library: library))]"))
                    #expect(answer.status == 200)
                    answers.append(try #require(answer.json?["data"]))
                }
                let audiences = answers.map { $0["profile"]?["audiences"] }
                let experiences = answers.map { $0["experiences"] }
                #expect(Set(audiences.compactMap { $0 }).count == 1)
                #expect(Set(experiences.compactMap { $0 }).count == 1)
                #expect(audiences[0] != anonymous.json?["data"]?["profile"]?["audiences"], "identified audiences differ")
                #expect(experiences[0] != anonymous.json?["data"]?["experiences"])
                #expect(answers[0]["profile"]?["traits"]?["plan"] == "pro", "identify traits are merged")

                // Once identified, an update without identify stays identified.
                let id = try #require(answers[0]["profile"]?["id"]?.stringValue)
                #expect(server.isIdentified(profileID: id) == true)
                let later = try await call(transport, "POST", experienceURL(server, "profiles/\(id)"), body: events("[\(track)]"))
                #expect(later.json?["data"]?["profile"]?["audiences"] == audiences[0])
                // An update carrying an identify turns a known anonymous profile into an identified one.
                let anonymousID = try #require(anonymous.json?["data"]?["profile"]?["id"]?.stringValue)
                let promoted = try await call(
                    transport, "POST", experienceURL(server, "profiles/\(anonymousID)"), body: events("[\(identify(channel: "server", library: "swift"))]"))
                #expect(promoted.json?["data"]?["profile"]?["id"]?.stringValue == anonymousID)
                #expect(promoted.json?["data"]?["profile"]?["audiences"] == audiences[0])
            }
        }
    }

    @Test(arguments: [
        #"{"events":[],"options":{}}"#,
        #"{"events":[{"event":"no type"}]}"#,
        #"{"events":[{"type":7}]}"#,
        #"{"events":["track"]}"#,
        #"{"events":{"type":"track"}}"#,
        #"{"options":{}}"#,
        #"[{"type":"track"}]"#,
        "not json",
    ])
    func invalidEventArraysAre400(body: String) async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let create = try await call(transport, "POST", experienceURL(server, "profiles"), body: body)
                #expect(create.status == 400)
                #expect(create.json == ["error": "Invalid Event Array"])
                let update = try await call(transport, "POST", experienceURL(server, "profiles/p-1"), body: body, contentType: "application/json")
                #expect(update.status == 400)
                #expect(server.knownProfileIDs == [LocalOptimizationAPIServer.fixtureProfileID], "nothing remembered")
            }
        }
    }

    @Test func jsonAndTextPlainBodiesAreAccepted() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                for contentType in ["text/plain", "application/json", "text/plain;charset=UTF-8"] {
                    let answer = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"), contentType: contentType)
                    #expect(answer.status == 200, "\(contentType)")
                }
            }
        }
    }

    @Test func defaultDataIsRealisticWithOneInlineVariableChange() throws {
        for data in [LocalOptimizationAPIServer.defaultNewVisitorData, LocalOptimizationAPIServer.defaultIdentifiedVisitorData] {
            let experiences = try #require(data["experiences"]?.arrayValue)
            #expect(experiences.count >= 3)
            let changes = try #require(data["changes"]?.arrayValue)
            #expect(changes.count == 1)
            let change = changes[0]
            #expect(change["type"] == "Variable" && change["key"]?.stringValue != nil && change["value"] != nil)
            let meta = try #require(change["meta"])
            #expect(experiences.contains { $0["experienceId"] == meta["experienceId"] && $0["variantIndex"] == meta["variantIndex"] })
            for key in ["id", "stableId", "random", "audiences", "traits", "location", "session"] {
                #expect(data["profile"]?[key] != nil, "profile.\(key)")
            }
        }
        #expect(LocalOptimizationAPIServer.defaultNewVisitorData["experiences"] != LocalOptimizationAPIServer.defaultIdentifiedVisitorData["experiences"])
    }

    @Test func testsCanReplaceTheResponseData() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let custom: JSONValue = [
                    "profile": LocalOptimizationAPIServer.defaultNewVisitorData["profile"] ?? .null,
                    "experiences": [["experienceId": "e1", "variantIndex": 2, "variants": ["b": "v2"]]],
                    "changes": [],
                ]
                server.setExperienceData(newVisitor: custom)
                let answer = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"))
                #expect(answer.json?["data"]?["experiences"] == custom["experiences"])
                #expect(answer.json?["data"]?["changes"] == [])
                #expect(answer.json?["data"]?["profile"]?["id"] != "")
            }
        }
    }

    @Test func batchUpsertAnswersOneProfilePerAnonymousId() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let body = events(#"[{"type":"track","event":"a","anonymousId":"anon-1"},{"type":"identify","userId":"u","anonymousId":"anon-2"},{"type":"page","anonymousId":"anon-1"}]"#)
                let answer = try await call(transport, "POST", experienceURL(server, "events"), body: body, contentType: "application/json")
                #expect(answer.status == 200)
                let profiles = try #require(answer.json?["data"]?["profiles"]?.arrayValue)
                #expect(profiles.map { $0["id"]?.stringValue } == ["anon-1", "anon-2"])
                #expect(server.isIdentified(profileID: "anon-2") == true)
                let invalid = try await call(transport, "POST", experienceURL(server, "events"), body: events(#"[{"type":"track"}]"#))
                #expect(invalid.status == 400 && invalid.json == ["error": "Invalid Batch Event Array"])
            }
        }
    }

    @Test func insightsBatchesAreStoredAnd204() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let url = server.insightsBaseURL + "v1/organizations/org/environments/main/events"
                let batch = #"[{"profile":{"id":"p-1"},"events":[{"type":"component","componentId":"c1","messageId":"m1"},{"type":"track","event":"x","messageId":"m2"}]}]"#
                let stored = try await call(transport, "POST", url, body: batch, contentType: "application/json")
                #expect(stored.status == 204 && stored.text.isEmpty)
                #expect(server.insightsBatches.count == 1)
                #expect(server.insightsEvents.compactMap { $0["messageId"]?.stringValue } == ["m1", "m2"])
                let debug = try await call(transport, "GET", server.insightsBaseURL + "v1/organizations/org/environments/main/profiles/p-1")
                #expect(debug.json?["data"]?.arrayValue?.count == 1)
                let invalid = try await call(transport, "POST", url, body: #"{"events":[]}"#)
                #expect(invalid.status == 400)
                server.resetState()
                #expect(server.insightsBatches.isEmpty)
            }
        }
    }

    @Test func healthOptionsAndUnknownRoutes() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                for url in [server.experienceBaseURL + "health", server.insightsBaseURL + "health"] {
                    let health = try await call(transport, "GET", url)
                    #expect(health.status == 200 && health.text == "ok")
                }
                let options = try await transport.send(FetchRequest(url: experienceURL(server, "profiles"), method: "OPTIONS"))
                #expect(options.status == 204 && options.headers["access-control-allow-origin"] == "*")
                let unknown = try await call(transport, "GET", server.experienceBaseURL + "v9/nothing")
                #expect(unknown.status == 404)
            }
        }
    }

    @Test func everyRequestIsRecordedWithOrderConnectionQueryHeadersAndBody() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                _ = try await call(transport, "POST", experienceURL(server, "profiles?locale=de-DE&q=a%20b+c"), body: events("[\(track)]"))
                _ = try await call(transport, "POST", server.insightsBaseURL + "v1/organizations/org/environments/main/events", body: "[]")
                _ = try await call(transport, "GET", server.experienceBaseURL + "health")
                let all = server.requests
                #expect(all.map(\.sequence) == [1, 2, 3])
                #expect(all.map(\.method) == ["POST", "POST", "GET"])
                #expect(Set(all.map(\.connectionID)) == [1])
                #expect(all[0].queryValue("locale") == "de-DE" && all[0].queryValue("q") == "a b c")
                #expect(all[0].header("Content-Type") == "text/plain")
                #expect(all[0].json?["events"]?[0]?["messageId"] == "m-1")
                #expect(server.requests(matching: .insights).map(\.sequence) == [2])
                #expect(server.requests(matching: .experience).map(\.sequence) == [1, 3])
                #expect(server.requests(matching: .method("GET", pathPrefix: "/experience/")).map(\.sequence) == [3])
                #expect(server.requests(matching: .pathPrefix("/experience/v2/")).count == 1)
                server.clearRecordedRequests()
                #expect(server.requests.isEmpty)
            }
        }
    }

    @Test func scriptsAreConsumedFirstInFirstOutByMatchingRequests() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let insights = server.insightsBaseURL + "v1/organizations/org/environments/main/events"
                server.enqueue(.status(500), .retryAfter(seconds: 2, status: 503), for: .insights)
                server.enqueue(contentsOf: [.status(401, body: #"{"message":"Unauthorized"}"#)], for: .pathPrefix("/experience/v2/"))
                #expect(server.pendingScriptedResponseCount == 3)
                #expect(try await call(transport, "GET", server.experienceBaseURL + "health").status == 200, "not selected by either entry")
                #expect(try await call(transport, "POST", insights, body: "[]").status == 500)
                let profile = try await call(transport, "POST", experienceURL(server, "profiles"), body: events("[\(track)]"))
                #expect(profile.status == 401 && profile.json?["message"] == "Unauthorized")
                let limited = try await transport.send(FetchRequest(url: insights, method: "POST", body: "[]"))
                #expect(limited.status == 503 && limited.headers["retry-after"] == "2")
                #expect(try await call(transport, "POST", insights, body: "[]").status == 204, "script exhausted: standard")
                #expect(server.pendingScriptedResponseCount == 0)
                server.enqueue(.status(500))
                server.clearScript()
                #expect(try await call(transport, "GET", server.insightsBaseURL + "health").status == 200)
            }
        }
    }

    @Test func aScriptCanSelectRequestsByAMarkerInTheirBody() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                let insights = server.insightsBaseURL + "v1/organizations/org/environments/main/events"
                server.enqueue(.status(413), .status(413), for: .bodyContains("marker-7"))
                let statuses = try await [#"[{"profile":{"id":"a"}}]"#, #"[{"profile":{"id":"marker-7"}}]"#, #"[{"profile":{"id":"b"}}]"#, #"["marker-7"]"#]
                    .asyncMap { try await call(transport, "POST", insights, body: $0).status }
                #expect(statuses == [204, 413, 204, 413], "only the bodies with the marker, each consuming one entry")
                #expect(server.pendingScriptedResponseCount == 0)
            }
        }
    }

    @Test func waitForRequestsIsWokenByArrivingRequestsAndTimesOutClearly() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withHTTPTransport(for: server) { transport in
                async let waited = server.waitForRequests(count: 3, matching: .insights)
                for _ in 0..<3 {
                    _ = try await call(transport, "POST", server.insightsBaseURL + "v1/organizations/org/environments/main/events", body: "[]")
                }
                let seen = try await waited
                #expect(seen.count == 3 && seen.allSatisfy { $0.path.hasPrefix("/insights/") })
                let already = try await server.waitForRequests(count: 2, matching: .insights, timeout: .milliseconds(1))
                #expect(already.count == 3, "returns at once with all matching requests")

                let error = await caughtError { try await server.waitForRequests(count: 1, matching: .experience, timeout: .milliseconds(20)) }
                guard case .waitTimedOut(let detail) = error as? LocalAPIServerError else {
                    Issue.record("expected waitTimedOut, got \(String(describing: error))")
                    return
                }
                #expect(detail.contains("3 request(s)"))

                let waiter = Task { try await server.waitForRequests(count: 99, timeout: .seconds(30)) }
                waiter.cancel()
                await #expect(throws: CancellationError.self) { try await waiter.value }
            }
        }
    }

    @Test func startStopAndRestart() async throws {
        let server = LocalOptimizationAPIServer()
        #expect(!server.isRunning && server.port == 0)
        try await server.start()
        await #expect(throws: LocalAPIServerError.alreadyStarted) { try await server.start() }
        let firstPort = server.port
        #expect(firstPort > 0 && server.baseURL == "http://127.0.0.1:\(firstPort)")
        #expect(server.experienceBaseURL == server.baseURL + "/experience/")
        #expect(server.insightsBaseURL == server.baseURL + "/insights/")
        try await server.stop()
        try await server.stop()
        #expect(!server.isRunning)
        try await server.start()
        try await withHTTPTransport(for: server) { transport in
            let health = try await call(transport, "GET", server.experienceBaseURL + "health")
            #expect(health.status == 200)
        }
        try await server.stop()
    }
}
