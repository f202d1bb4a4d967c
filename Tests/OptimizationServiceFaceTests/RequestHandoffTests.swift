import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Testing

/// The request handoff with replay: the server evaluates the first request's events without
/// storing them and hands the browser exactly those events to commit once; a handoff meant for a
/// shared cache must not carry one visitor's data.
@Suite("Request handoff with replay")
struct RequestHandoffTests {
    static func service(_ server: LocalOptimizationAPIServer, allowedEventTypes: [String]? = nil) -> OptimizationService {
        OptimizationService(
            config: OptimizationConfig(
                spaceId: "space-1", environment: "master", allowedEventTypes: allowedEventTypes,
                api: OptimizationAPIConfig(experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
            options: .init(engines: 1), environment: .init(clock: ManualClock()))
    }

    @Test func theHandoffReplaysExactlyTheEventsThePreviewEvaluated() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = Self.service(server)
            try await service.start()
            let request = service.forRequest(RequestOptions(consent: true, locale: "de-DE"))
            let (handoff, data) = try await request.prepareRequestHandoff(
                routeKey: "/shop?ref=mail", initialEvents: [.track(event: "arrived")], page: ["name": "Shop"])
            await service.shutdown()
            #expect(handoff.cache.scope == .privateRequest)
            let replay = try #require(handoff.replay)
            #expect(replay.routeKey == "/shop?ref=mail")
            #expect(replay.locale == "de-DE")
            #expect(replay.events.compactMap { $0["type"]?.stringValue } == ["track", "page"])
            // One preflight call, carrying the replayed events.
            let calls = server.requests(matching: .experience)
            #expect(calls.count == 1)
            #expect(calls.first?.queryValue("type") == "preflight")
            #expect(calls.first?.path.hasPrefix("/experience/v3/spaces/space-1/environments/master/profiles") == true)
            let sent = calls.first?.json?["events"]?.arrayValue?.compactMap { $0["messageId"]?.stringValue }
            #expect(sent == replay.events.compactMap { $0["messageId"]?.stringValue })
            // The preview's profile is handed over and adopted by the request.
            let profileId = try #require(data?["profile"]?["id"]?.stringValue)
            #expect(handoff.profileId == profileId)
            #expect(request.profileId == profileId)
            #expect(handoff.cacheSafetyWarnings.isEmpty)
            #expect(OptimizationHandoff(json: handoff.json) == handoff)
        }
    }

    @Test func committingTheReplayStoresExactlyItsEventsOnce() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = Self.service(server)
            try await service.start()
            let first = service.forRequest(RequestOptions(consent: true))
            let (handoff, _) = try await first.prepareRequestHandoff(routeKey: "/", initialEvents: [.identify(userId: "u-1")])
            let replay = try #require(handoff.replay)
            // The browser's side: the visitor's next request commits what the first one previewed.
            let browser = service.forRequest(RequestOptions(consent: true, profileId: handoff.profileId))
            let committed = try await browser.commitReplay(replay)
            do {
                _ = try await service.forRequest(RequestOptions(consent: true)).commitReplay(.init(routeKey: "/", events: []))
                Issue.record("an empty replay was committed")
            } catch let error as OptimizationError {
                guard case .bridgeError(let message) = error else { throw error }
                #expect(message.contains("commitReplay needs 1 to 200 events"))
            }
            await service.shutdown()
            #expect(committed.outcome == .delivered)
            let calls = server.requests(matching: .experience)
            #expect(calls.count == 2)
            #expect(calls.last?.queryValue("type") == nil, "stored, not previewed")
            #expect(calls.last?.json?["events"]?.arrayValue == replay.events)
            #expect(server.isIdentified(profileID: try #require(handoff.profileId)) == true)
        }
    }

    @Test func theCommittingRequestsConsentGatesAndStampsEachReplayedEvent() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = Self.service(server)
            try await service.start()
            var blocked = StreamProbe(service.blockedEvents) { service.blockedEventBroadcaster.yieldedCount }
            let (handoff, _) = try await service.forRequest(RequestOptions(consent: true))
                .prepareRequestHandoff(routeKey: "/", initialEvents: [.track(event: "arrived"), .track(event: "clicked")])
            let replay = try #require(handoff.replay)
            // The visitor declined between the page and the browser's commit.
            let declined = service.forRequest(RequestOptions(consent: false, profileId: handoff.profileId))
            let committed = try await declined.commitReplay(replay)
            // A replay forged as consented, committed by a visitor who never answered.
            var forged = replay.events
            forged[0] = ["type": "track", "event": "forged", "messageId": "forged-1", "context": ["gdpr": ["isConsentGiven": true]]]
            let unset = try await service.forRequest(RequestOptions(profileId: handoff.profileId))
                .commitReplay(.init(routeKey: "/", events: forged))
            await service.shutdown()
            #expect(committed.outcome == .delivered)
            #expect(unset.outcome == .delivered)
            let commits = server.requests(matching: .experience).filter { $0.queryValue("type") == nil }
            #expect(commits.count == 2)
            for commit in commits {
                let events = try #require(commit.json?["events"]?.arrayValue)
                #expect(events.compactMap { $0["type"]?.stringValue } == ["page"], "only the allow-listed page leaves")
                #expect(events.map { $0["context"]?["gdpr"]?["isConsentGiven"] } == [.bool(false)])
                #expect(events.first?["messageId"] == replay.events.last?["messageId"])
            }
            #expect(await blocked.newElements().map(\.method) == ["track", "track", "track", "track"])
        }
    }

    @Test func aPageTheRequestMayNotSendGivesAHandoffWithoutReplayOrCall() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = Self.service(server, allowedEventTypes: [])
            try await service.start()
            var blocked = StreamProbe(service.blockedEvents) { service.blockedEventBroadcaster.yieldedCount }
            let request = service.forRequest(RequestOptions(consent: RequestConsent(events: false, persistence: true)))
            let (handoff, data) = try await request.prepareRequestHandoff(routeKey: "/")
            await service.shutdown()
            #expect(handoff == OptimizationHandoff(cache: .init(scope: .privateRequest)))
            #expect(data == nil)
            #expect(request.canPersistProfile)
            #expect(server.requests(matching: .experience).isEmpty)
            #expect(await blocked.newElements().map(\.method) == ["page"])
        }
    }

    @Test func aFailedPreviewKeepsTheReplay() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.enqueue(.status(500), for: .experience)
            let service = Self.service(server)
            try await service.start()
            let (handoff, data) = try await service.forRequest(RequestOptions(consent: true, profileId: "p-1")).prepareRequestHandoff(routeKey: "/")
            await service.shutdown()
            #expect(data == nil)
            #expect(handoff.profileId == "p-1")
            #expect(handoff.replay?.events.count == 1)
        }
    }

    @Test func sharedScopesMustNotCarryOneVisitorsData() {
        let staticWithProfile = OptimizationHandoff(cache: .init(scope: .static), profileId: "visitor")
        #expect(throws: OptimizationHandoffError.self) { try staticWithProfile.assertCacheSafe() }
        #expect(staticWithProfile.cacheSafetyWarnings.map(\.path) == [["profileId"]])
        let publicWithReplay = OptimizationHandoff(cache: .init(scope: .publicPermutation, key: "public"), replay: .init(routeKey: "/", events: []))
        #expect(publicWithReplay.cacheSafetyWarnings.map(\.code) == [.profileStateInPublicCache])
        #expect(throws: OptimizationHandoffError.self) { try publicWithReplay.assertCacheSafe() }
        let privateWithProfile = OptimizationHandoff(cache: .init(scope: .privateRequest), profileId: "visitor")
        #expect(throws: Never.self) { try privateWithProfile.assertCacheSafe() }
        // A public permutation without a key: one warning, at cache.key.
        let keyless = OptimizationHandoff(cache: .init(scope: .publicPermutation), state: ["selectedOptimizations": []])
        #expect(keyless.cacheSafetyWarnings.map(\.code) == [.missingPublicPermutationCacheKey])
        #expect(keyless.cacheSafetyWarnings.first?.path == ["cache", "key"])
        // The first private field in order state.profile, profileId, replay is the one reported.
        let all = OptimizationHandoff(
            cache: .init(scope: .static), profileId: "v", replay: .init(routeKey: "/", events: []), state: ["profile": ["id": "v"]])
        #expect(all.cacheSafetyWarnings.map(\.path) == [["state", "profile"]])
    }
}
