import Foundation
import JavaScriptHost
import Logging
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import OptimizationTesting
import Synchronization
import Testing

/// `OptimizationService` and `forRequest`, against the local API server on the
/// injected clock.
@Suite("OptimizationService: request-scoped engine on a pool")
struct ServiceTests {
    @Test func startBuildsThePoolAndRefusesMisuse() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 3) { service in
                #expect(service.isRunning && service.poolRuntimes.count == 3)
                await #expect(throws: OptimizationError.alreadyStarted) { try await service.start() }
            }
            let stateful = OptimizationService(config: OptimizationConfig(clientId: "org-1", defaults: StorageDefaults(consent: true)))
            await #expect(throws: OptimizationError.self) { try await stateful.start() }
            let unstarted = OptimizationService(config: OptimizationConfig(clientId: "org-1"))
            #expect(unstarted.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: nil).entryId == VisitorData.heroBaselineID)
            await #expect(throws: OptimizationError.notInitialized) { try await unstarted.forRequest().page() }
        }
    }

    @Test func aJSRuntimeThatCannotLoadIsAClearStartError() async throws {
        var environment = OptimizationService.Environment(transport: RecordingFetchTransport())
        environment.scripts = EmbeddedJSRuntime.scripts.map { script in
            script.path == "core/resolver.js" ? EmbeddedScript(path: script.path, source: "throw new Error('broken build');") : script
        }
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 2), environment: environment)
        let error = await caughtError { try await service.start() }
        guard case .resourceLoadError(let message) = error as? OptimizationError else {
            Issue.record("expected resourceLoadError, got \(String(describing: error))")
            return
        }
        #expect(message.contains("core/resolver.js") && message.contains("broken build"), "\(message)")
        #expect(!service.isRunning)
    }

    @Test func startUpIsBoundedByItsDeadline() async throws {
        // An engine whose JSRuntime does not finish loading until the test lets it: the script
        // spins until the engine's clock (the service's manual clock) has moved 10 s. Start gives
        // up at its 200 ms deadline, which the test reaches once the deadline is armed, and the
        // test then moves the clock on to let the spinning engine finish. `.startTimedOut` proves
        // the deadline decided; nothing races a wall clock or the CPU-time watchdog, which only
        // stops the spin should the test fail before it lets it go.
        let clock = ManualClock()
        var environment = OptimizationService.Environment(clock: clock, transport: RecordingFetchTransport(), executionTimeLimit: .seconds(120))
        environment.scripts = [EmbeddedScript(path: "spin.js", source: "var begun = __nativeNow(); while (__nativeNow() - begun < 10000) {}")]
        let service = OptimizationService(config: OptimizationConfig(clientId: "org-1"), options: .init(engines: 1), environment: environment)
        defer { clock.advance(by: .seconds(20)) }
        let started = Task { await caughtError { try await service.start(timeout: .milliseconds(200)) } }
        try await yieldUntil { clock.pendingTimerCount > 0 }
        clock.advance(by: .milliseconds(199))
        #expect(clock.pendingTimerCount == 1, "not before its deadline")
        clock.advance(by: .milliseconds(1))
        let error = await started.value
        guard case .startTimedOut = error as? OptimizationError else {
            Issue.record("expected startTimedOut, got \(String(describing: error))")
            return
        }
        #expect(!service.isRunning)
    }

    @Test func resolutionFromManyThreadsTransfersAnEntryToEachEngineOnce() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 2) { service in
                let selections = try SelectedOptimizations(json: VisitorData.newVisitor["experiences"]!)
                let hero = VisitorData.hero
                DispatchQueue.concurrentPerform(iterations: 8) { _ in
                    for _ in 0..<500 {
                        let resolved = service.resolveOptimizedEntry(baseline: hero, selectedOptimizations: selections)
                        precondition(resolved.entryId == VisitorData.heroForNewVisitor)
                    }
                }
                for runtime in service.poolRuntimes {
                    #expect(runtime.transfers.entries <= 1 && runtime.transfers.selections <= 1, "\(runtime.transfers)")
                }
                #expect(service.poolRuntimes.map(\.transfers.entries).reduce(0, +) >= 1)
                #expect(service.resolveOptimizedEntry(baseline: hero, selectedOptimizations: .empty).entryId == VisitorData.heroBaselineID)
            }
        }
    }

    /// A thread that had to move to another engine stays there, so concurrent threads settle on
    /// different engines instead of swapping them (and their caches) on every call.
    @Test func aThreadKeepsTheEngineItMovedTo() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 2) { service in
                let runtimes = service.poolRuntimes
                let pool = EnginePool(engines: runtimes)
                let served: [Int] = await withCheckedContinuation { continuation in
                    Thread {
                        func engineIndex() -> Int {
                            let runtime = pool.withEngine { $0 }.result
                            return runtimes.firstIndex { $0 === runtime }!
                        }
                        let first = engineIndex()
                        // Another thread holds this thread's engine: the next call moves.
                        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
                        Thread {
                            runtimes[first].engine.withExclusiveAccess {
                                holding.signal()
                                release.wait()
                            }
                            released.signal()
                        }.start()
                        holding.wait()
                        let moved = engineIndex()
                        release.signal()
                        released.wait()
                        // Both engines are free again: the thread stays where it moved to.
                        continuation.resume(returning: [first, moved, engineIndex(), engineIndex()])
                    }.start()
                }
                #expect(served[1] != served[0], "a busy engine is passed over")
                #expect(served[2] == served[1] && served[3] == served[1], "then kept: \(served)")
            }
        }
    }

    @Test func allowListedPageLeavesBeforeConsentButTrackIsBlockedAndReportedOnce() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server) { service in
                var blocked = service.blockedProbe()
                let request = service.forRequest(RequestOptions(locale: "de_DE", eventContext: ["userAgent": "UA/1"], ip: "203.0.113.7"))
                let page = try await request.page(["properties": ["title": "Home"]])
                #expect(page.accepted && page.outcome == .delivered)
                let sent = try #require(server.requests(matching: .experience).first)
                #expect(sent.path == "/experience/v2/organizations/org-1/environments/main/profiles")
                #expect(sent.queryValue("locale") == "de-DE")
                #expect(sent.header("x-force-ip") == "203.0.113.7")
                let event = try #require(sent.json?["events"]?[0])
                #expect(event["type"] == "page" && event["channel"] == "server")
                #expect(event["context"]?["gdpr"]?["isConsentGiven"] == false)
                #expect(event["context"]?["userAgent"] == "UA/1")
                #expect(request.profileId != nil && request.selectedOptimizations != nil)

                let track = try await request.track(event: "Bought", properties: ["plan": "pro"])
                #expect(!track.accepted && track.outcome == .blocked(.consent))
                #expect(server.requests(matching: .experience).count == 1, "a blocked call sends nothing")
                let reports = await blocked.newElements()
                #expect(reports == [BlockedEvent(reason: "consent", method: "track", args: [["event": "Bought", "properties": ["plan": "pro"]]])])
            }
        }
    }

    @Test func strictOptInAndConsentedRequests() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, allowedEventTypes: []) { service in
                #expect(try await !service.forRequest().page().accepted)
                let consented = service.forRequest(RequestOptions(consent: true))
                let result = try await consented.identify(userId: "u-1", traits: ["tier": "gold"])
                #expect(result.accepted && result.outcome == .delivered)
                #expect(consented.canPersistProfile)
                #expect(!service.forRequest(RequestOptions(consent: RequestConsent(events: true))).canPersistProfile)
                let event = try #require(server.requests(matching: .experience).last?.json?["events"]?[0])
                #expect(event["context"]?["gdpr"]?["isConsentGiven"] == true)
                #expect(server.requests(matching: .experience).count == 1)
            }
        }
    }

    @Test func theRequestRendersWhatItsVisitorWasSelectedInto() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            server.setExperienceData(perProfile: { id in id == "known" ? VisitorData.identified : VisitorData.newVisitor })
            try await withService(server) { service in
                let handoff = try SelectedOptimizations(json: VisitorData.identified["experiences"]!)
                let fresh = service.forRequest(RequestOptions(consent: true, selectedOptimizations: handoff))
                #expect(fresh.resolveOptimizedEntry(baseline: VisitorData.hero).entryId == VisitorData.heroForIdentified, "handoff first")
                try await fresh.page()
                #expect(fresh.resolveOptimizedEntry(baseline: VisitorData.hero).entryId == VisitorData.heroForNewVisitor, "then the answer")
                #expect(fresh.getFlag("hero-cta-color") == "#d73a49")
                #expect(fresh.getFlag("absent") == .null)

                let known = service.forRequest(RequestOptions(consent: true, profileId: "known"))
                try await known.page()
                #expect(server.requests(matching: .experience).last?.path.hasSuffix("/profiles/known") == true)
                #expect(known.resolveOptimizedEntry(baseline: VisitorData.hero).entryId == VisitorData.heroForIdentified)
                #expect(service.forRequest().resolveOptimizedEntry(baseline: VisitorData.hero).entryId == VisitorData.heroBaselineID)
            }
        }
    }

    @Test func insightsCallsNeedAProfileIdAndGoThroughOneSharedQueue() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, deliveryShards: 1) { service in
                let anonymous = service.forRequest(RequestOptions(consent: true))
                for method in ["trackView", "trackClick", "trackHover", "trackFlagView"] {
                    let error = await caughtError {
                        switch method {
                        case "trackView": try await anonymous.trackView(TrackViewPayload(componentId: "c", viewId: "v", variantIndex: 0, viewDuration: .milliseconds(2000)))
                        case "trackClick": try await anonymous.trackClick(TrackClickPayload(componentId: "c"))
                        case "trackHover": try await anonymous.trackHover(componentId: "c", hoverId: "h", hoverDuration: .milliseconds(300))
                        default: try await anonymous.trackFlagView(componentId: "flag")
                        }
                    }
                    #expect(error as? OptimizationError == .profileIdRequired(method: method))
                    #expect((error as? OptimizationError)?.description.hasPrefix("\(method) requires a request-bound profile id") == true)
                }
                let alice = service.forRequest(RequestOptions(consent: true, profileId: "alice"))
                let bob = service.forRequest(RequestOptions(consent: true, profileId: "bob"))
                #expect(try await alice.trackView(TrackViewPayload(componentId: "hero", viewId: "v1", variantIndex: 1, viewDuration: .milliseconds(2000))).accepted)
                #expect(try await bob.trackClick(TrackClickPayload(componentId: "hero", variantIndex: 0)).accepted)
                #expect(try await alice.trackHover(componentId: "hero", hoverId: "h1", hoverDuration: .milliseconds(500)).accepted)
                #expect(service.queuedEventCount == 3, "accepted into the queue before returning")
                #expect(server.requests(matching: .insights).isEmpty, "batched, not sent per call")
                await service.flush()
                let posts = server.requests(matching: .insights)
                #expect(posts.count == 1)
                let batches = try #require(posts.first?.json?.arrayValue)
                #expect(batches.map { $0["profile"]?["id"]?.stringValue } == ["alice", "bob"])
                #expect(batches.map { $0["events"]?.arrayValue?.map { $0["type"]?.stringValue } } == [["component", "component_hover"], ["component_click"]])
                #expect(service.queuedEventCount == 0)
            }
        }
    }

    @Test func deliveryShardsSplitProfilesAndKeepEachProfilesEventsInOrderInOneBatch() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, engines: 2, deliveryShards: 3) { service in
                #expect(service.deliveryShardCount == 3)
                let profiles = (0..<12).map { "visitor-\($0)" }
                // Two threads at once, four events per profile each: every profile's events are
                // queued in the order its thread sent them.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for half in [Array(profiles.prefix(6)), Array(profiles.suffix(6))] {
                        group.addTask {
                            for round in 0..<4 {
                                for profile in half {
                                    let request = service.forRequest(RequestOptions(consent: true, profileId: profile))
                                    _ = try await request.trackClick(TrackClickPayload(componentId: "c\(round)"))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(service.queuedEventCount == 48)
                await service.flush()
                let posts = server.requests(matching: .insights)
                #expect(posts.count > 1 && posts.count <= 3, "one batch per shard that holds events: \(posts.count)")
                var seen: [String: [String]] = [:]
                for post in posts {
                    for batch in post.json?.arrayValue ?? [] {
                        let id = try #require(batch["profile"]?["id"]?.stringValue)
                        #expect(seen[id] == nil, "\(id) is batched in one shard only")
                        seen[id] = batch["events"]?.arrayValue?.compactMap { $0["componentId"]?.stringValue }
                    }
                }
                #expect(Set(seen.keys) == Set(profiles))
                for profile in profiles { #expect(seen[profile] == ["c0", "c1", "c2", "c3"], "\(profile) in order") }
                #expect(service.queuedEventCount == 0)
            }
        }
    }

    @Test func theInsightsCapacityIsSplitEvenlyOverTheDeliveryShards() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = OptimizationService(
                config: OptimizationConfig(clientId: "org-1", api: OptimizationAPIConfig(
                    experienceBaseURL: server.experienceBaseURL, insightsBaseURL: server.insightsBaseURL)),
                options: .init(engines: 2, insightsMaxEvents: 4, deliveryShards: 2), environment: .init(clock: ManualClock()))
            try await service.start()
            // One profile, one shard: its share is 2 of the 4, the oldest dropped beyond it.
            let visitor = service.forRequest(RequestOptions(consent: true, profileId: "alice"))
            for index in 0..<3 { _ = try await visitor.trackClick(TrackClickPayload(componentId: "c\(index)")) }
            #expect(service.queuedEventCount == 2)
            await service.shutdown()
        }
    }

    @Test func aStickyViewUpsertsFirstThenQueuesTheViewWithTheReturnedProfile() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server) { service in
                let request = service.forRequest(RequestOptions(consent: true))
                let result = try await request.trackView(TrackViewPayload(
                    componentId: "hero", viewId: "v1", variantIndex: 1, viewDuration: .milliseconds(2000), sticky: true))
                #expect(result.accepted && result.outcome == .delivered)
                let upsert = try #require(server.requests(matching: .experience).first?.json?["events"]?[0])
                #expect(upsert["type"] == "component")
                let profileId = try #require(request.profileId)
                await service.flush()
                let batch = try #require(server.requests(matching: .insights).first?.json?[0])
                #expect(batch["profile"]?["id"]?.stringValue == profileId)
                #expect(batch["events"]?[0]?["messageId"] != upsert["messageId"])
            }
        }
    }

    @Test func anInsightsEventAfterAnExperienceAnswerCarriesTheWholeAnsweredProfile() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server, deliveryShards: 1) { service in
                let request = service.forRequest(RequestOptions(consent: true, profileId: "alice"))
                let page = try await request.page()
                #expect(page.outcome == .delivered)
                let answered = try #require(request.profile)
                #expect((answered.objectValue?.count ?? 0) > 1, "the API's profile has more than an id")
                // Two views: the request's profile goes to the engine as its id alone, and the
                // queue still gets the whole profile the Experience API answered.
                for view in ["v1", "v2"] {
                    #expect(try await request.trackView(TrackViewPayload(componentId: "hero", viewId: view, variantIndex: 1, viewDuration: .milliseconds(0))).accepted)
                }
                await service.flush()
                let batches = try #require(server.requests(matching: .insights).first?.json?.arrayValue)
                #expect(batches.count == 1)
                #expect(batches.first?["profile"] == answered)
                #expect(batches.first?["events"]?.arrayValue?.count == 2)
            }
        }
    }

    @Test func theSharedQueueFlushesAt25AndRetriesWithBackoffOnTheClock() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let policy = QueuePolicy(flush: QueueFlushPolicy(flushInterval: .milliseconds(60_000), baseBackoff: .milliseconds(1000), maxBackoff: .milliseconds(1000), jitterRatio: 0))
            try await withService(server, clock: clock, deliveryShards: 1, queuePolicy: policy) { service in
                server.enqueue(.status(503), for: .insights)
                var reports = service.queueProbe()
                for index in 0..<25 {
                    let visitor = service.forRequest(RequestOptions(consent: true, profileId: "v\(index % 5)"))
                    try await visitor.trackClick(TrackClickPayload(componentId: "c\(index)"))
                }
                try await server.waitForRequests(count: 1, matching: .insights)
                try await eventually("503 handled") { service.queueEventBroadcaster.yieldedCount >= 1 }
                let failure = await reports.newElements()
                #expect(failure.first?.type == .flushFailure)
                #expect(service.queuedEventCount == 25, "kept for the retry")
                clock.advance(by: .milliseconds(1000))
                try await server.waitForRequests(count: 2, matching: .insights)
                try await eventually("queue drained") { service.queuedEventCount == 0 }
                let delivered = server.insightsEvents.count
                #expect(delivered == 25)
            }
        }
    }

    @Test func aSlowExperienceAPIDoesNotHoldThePageAndAnOpenCircuitFailsFast() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let clock = ManualClock()
            let policy = QueuePolicy(flush: QueueFlushPolicy(maxConsecutiveFailures: 2, circuitOpenDuration: .milliseconds(10_000)))
            try await withService(server, clock: clock, queuePolicy: policy, experienceTimeout: .milliseconds(300)) { service in
                let handoff = try SelectedOptimizations(json: VisitorData.identified["experiences"]!)
                server.enqueue(.delay(.milliseconds(20_000)), .delay(.milliseconds(20_000)), for: .experience)
                for attempt in 1...2 {
                    let request = service.forRequest(RequestOptions(consent: true, selectedOptimizations: handoff))
                    let call = Task { try await request.page() }
                    try await server.waitForRequests(count: attempt, matching: .experience)
                    clock.advance(by: .milliseconds(300))
                    let result = try await call.value
                    #expect(result.accepted && result.outcome == .timedOut(after: .milliseconds(300)))
                    #expect(request.resolveOptimizedEntry(baseline: VisitorData.hero).entryId == VisitorData.heroForIdentified, "falls back to the handoff")
                }
                #expect(service.isExperienceCircuitOpen)
                let fast = try await service.forRequest(RequestOptions(consent: true)).page()
                #expect(fast.outcome == .circuitOpen)
                #expect(server.requests(matching: .experience).count == 2, "no request while the circuit is open")
                clock.advance(by: .milliseconds(10_000))
                let probe = try await service.forRequest(RequestOptions(consent: true)).page()
                #expect(probe.outcome == .delivered)
                #expect(!service.isExperienceCircuitOpen)

                server.enqueue(.status(500), for: .experience)
                let failing = service.forRequest(RequestOptions(consent: true, profileId: "p"))
                let failed = try await failing.track(event: "x")
                guard case .failed(status: 500, code: nil, _) = failed.outcome else {
                    Issue.record("expected a 500 failure, got \(failed.outcome)")
                    return
                }
                #expect(failing.profile == ["id": "p"], "the request keeps what it had")
            }
        }
    }

    @Test func mergeTagsUseTheRequestProfile() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            try await withService(server) { service in
                let tag: JSONValue = [
                    "sys": ["id": "mt", "type": "Entry", "contentType": ["sys": ["id": "nt_mergetag", "type": "Link", "linkType": "ContentType"]]],
                    "metadata": ["tags": []],
                    "fields": ["nt_name": "City", "nt_mergetag_id": "location.city", "nt_fallback": "your city"],
                ]
                let request = service.forRequest(RequestOptions(consent: true))
                #expect(request.getMergeTagValue(tag) == "your city", "no profile yet")
                try await request.page()
                #expect(request.getMergeTagValue(tag) == VisitorData.newVisitor["profile"]?["location"]?["city"]?.stringValue)
            }
        }
    }

    @Test func afterShutdownEventCallsThrowAndResolutionFallsBack() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            let service = try await withService(server) { service in
                let request = service.forRequest(RequestOptions(consent: true, profileId: "p"))
                try await request.trackClick(TrackClickPayload(componentId: "c"))
                return service
            }
            #expect(server.insightsEvents.count == 1, "shutdown flushed what was accepted")
            await #expect(throws: OptimizationError.shutDown) { try await service.forRequest(RequestOptions(consent: true)).page() }
            #expect(service.resolveOptimizedEntry(baseline: VisitorData.hero, selectedOptimizations: nil).entryId == VisitorData.heroBaselineID)
        }
    }

    /// Fails by hanging (bounded by the time limit) if shutdown waits for a flush that ignores
    /// its deadline, and on the `advanced` check if the deadline runs on real time.
    @Test(.hangBound)
    func theShutdownFlushDeadlineIsATimerOnTheInjectedClock() async throws {
        try await LocalOptimizationAPIServer.withRunning { server in
            // The flush's request hangs (the transport's own deadline is an hour away): only the
            // shutdown's 10 s deadline, on the manual clock, lets shutdown go on.
            server.enqueue(.hang, for: .insights)
            let clock = ManualClock()
            let logs = LogRecorder()
            let service = makeService(server, clock: clock, logger: logs.logger, transportTimeoutMilliseconds: 3_600_000)
            try await service.start()
            try await service.forRequest(RequestOptions(consent: true, profileId: "p")).trackClick(TrackClickPayload(componentId: "c"))
            let advanced = Atomic<Bool>(false)
            let stopping = Task { () -> Bool in
                await service.shutdown()
                return advanced.load(ordering: .acquiring)
            }
            try await server.waitForRequests(count: 1, matching: .insights)
            advanced.store(true, ordering: .releasing)
            clock.advance(by: .seconds(10))
            #expect(await stopping.value, "shutdown returned only once the deadline passed on the injected clock")
            #expect(logs.all.contains { $0.level == .warning && $0.message.hasPrefix("shutdown flush did not finish in time") })
            // Closing the transport after the deadline cancelled the hung request.
            try await server.waitUntil(description: "the flush's connection closed") { $0.openConnectionCount == 0 }
        }
    }
}

