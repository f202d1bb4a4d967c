import AsyncHTTPClient
import Foundation
import NIOCore
import Optimization
import OptimizationTesting
import PostgresTestServer
import Testing

/// The real `personalized-pages` executable as child processes: `/metrics` from its Prometheus
/// backend on the metrics listener (`--metrics-port`, 404 on the public port), and two replicas sharing one PostgreSQL database (a private server started by the
/// test) and one Content Delivery API (the test kit's local server). One test at a time: each
/// starts a PostgreSQL server and app processes, and the invalidation test measures a latency.
@Suite(.serialized, .hangBound) struct ReplicaTests {
    /// The test space's entries (`Fixtures/space/entries`).
    static let spaceEntries = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/space/entries")

    @Test func metricsAreServedOnTheMetricsListenerFromThePrometheusBackend() async throws {
        try await withLocalAPIServer { server in
            let app = try await AppProcess.start([
                "--experience-base-url", server.experienceBaseURL, "--insights-base-url", server.insightsBaseURL,
            ])
            defer { app.kill() }
            try await withHTTPClient { client in
                var visitor = Visitor(baseURL: app.baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                #expect(try await visitor.get("/").status == 200)
                #expect(try await visitor.get("/metrics").status == 404, "never on the public listener")
                var scraper = Visitor(baseURL: app.metricsURL, client: client)
                let metrics = try await scraper.get("/metrics")
                #expect(metrics.status == 200)
                // The library's metrics, recorded by the service of this process.
                #expect(metrics.body.contains("# TYPE optimization_experience_requests_total counter"))
                #expect(metrics.body.contains("optimization_resolves_total"))
            }
            try await app.terminate()
        }
    }

    @Test func theWebhookRouteIsMountedOnlyWithASigningSecretOrInsecureWebhook() async throws {
        let cda = LocalContentfulDeliveryServer()
        try cda.space.load(directory: Self.spaceEntries)
        try await cda.start()
        defer { Task { [cda] in try? await cda.stop() } }
        let arguments = ["--contentful-space", cda.space.spaceId, "--contentful-base-url", cda.baseURL]
        let token = ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken]
        try await withHTTPClient { client in
            // No secret: the route does not exist.
            let closed = try await AppProcess.start(arguments, environment: token)
            defer { closed.kill() }
            #expect(try await webhook(client, closed, entryId: "hero-home") == 404)
            try await closed.terminate()
            // --insecure-webhook: unsigned requests are taken; an id that is not a Contentful id is not.
            let open = try await AppProcess.start(arguments + ["--insecure-webhook"], environment: token)
            defer { open.kill() }
            #expect(try await webhook(client, open, entryId: "hero-home", signing: nil) == 204)
            #expect(try await webhook(client, open, entryId: String(repeating: "x", count: 65), signing: nil) == 422)
            try await open.terminate()
            // With a secret (flag or CONTENTFUL_WEBHOOK_SECRET): only signed requests.
            let signed = try await AppProcess.start(arguments + ["--contentful-webhook-secret", Self.webhookSecret], environment: token)
            defer { signed.kill() }
            #expect(try await webhook(client, signed, entryId: "hero-home", signing: nil) == 401)
            #expect(try await webhook(client, signed, entryId: "hero-home") == 204)
            try await signed.terminate()
        }
    }

    @Test func twoReplicasShareInvalidationsAndTheStore() async throws {
        try await withPostgresTestServer { database in
            let cda = LocalContentfulDeliveryServer()
            try cda.space.load(directory: Self.spaceEntries)
            try await cda.start()
            defer { Task { [cda] in try? await cda.stop() } }
            try await withLocalAPIServer { api in
                let arguments = [
                    "--experience-base-url", api.experienceBaseURL, "--insights-base-url", api.insightsBaseURL,
                    "--contentful-space", cda.space.spaceId, "--contentful-base-url", cda.baseURL,
                    "--postgres", database.connectionString(),
                ]
                let environment = ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken, "CONTENTFUL_WEBHOOK_SECRET": Self.webhookSecret]
                let a = try await AppProcess.start(arguments, environment: environment)
                defer { a.kill() }
                var b = try await AppProcess.start(arguments, environment: environment)
                defer { b.kill() }
                try await withHTTPClient { client in
                    let before = try await cmsEntry(client, b, "hero-home")
                    #expect(try await cmsEntry(client, a, "hero-home") == before)
                    #expect(cda.entryRequests.count == 1, "A read B's copy from the store")
                    // A webhook reaches A; B serves the new revision within 1 s.
                    #expect(cda.space.publish(entryId: "hero-home", field: "internalTitle", value: "Home hero v2"))
                    let started = ContinuousClock.now
                    // Unsigned, tampered or signed with another secret: refused, nothing invalidated.
                    #expect(try await webhook(client, a, entryId: "hero-home", signing: nil) == 401)
                    #expect(try await webhook(client, a, entryId: "hero-home", tampered: true) == 401)
                    #expect(try await webhook(client, a, entryId: "hero-home", signing: String(repeating: "c", count: 64)) == 401)
                    #expect(try await cmsEntry(client, a, "hero-home") == before, "a refused webhook invalidates nothing")
                    #expect(try await webhook(client, a, entryId: "hero-home") == 204)
                    var after = before
                    let deadline = ContinuousClock.now + .seconds(10)   // a failure bound, 10x the promise
                    while after.revision == before.revision, ContinuousClock.now < deadline {
                        after = try await cmsEntry(client, b, "hero-home")
                    }
                    let elapsed = ContinuousClock.now - started
                    #expect(after.revision > before.revision && after.title == "Home hero v2")
                    #expect(elapsed < .seconds(1), "B served the new revision after \(elapsed)")
                    // B restarts during a CDA outage: it serves from the store.
                    try await b.terminate()
                    try await cda.stop()
                    b = try await AppProcess.start(arguments, environment: environment)
                    #expect(try await cmsEntry(client, b, "hero-home") == after)
                    let metrics = try await get(client, b.metricsURL + "/metrics").body
                    #expect(metrics.contains("optimization_postgres_entry_store_hits_total 1"))
                }
                try await a.terminate()
                try await b.terminate()
            }
        }
    }

    /// A `/first` page's replay ticket, issued by replica A, commits once across the fleet: on B
    /// (the ledger is the shared database's), then never again on A, on B, or on A restarted.
    @Test func aReplayTicketCommitsOnceAcrossReplicasAndRestarts() async throws {
        try await withPostgresTestServer { database in
            try await withLocalAPIServer { api in
                let arguments = ["--experience-base-url", api.experienceBaseURL, "--insights-base-url", api.insightsBaseURL, "--postgres", database.connectionString()]
                var a = try await AppProcess.start(arguments)
                defer { a.kill() }
                let b = try await AppProcess.start(arguments)
                defer { b.kill() }
                try await withHTTPClient { client in
                    var onA = Visitor(baseURL: a.baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                    let body = try TrustedVisitorStateTests.ticketBody(try await onA.get("/first"))
                    var onB = Visitor(baseURL: b.baseURL, client: client, cookies: onA.cookies)
                    #expect(try await onB.post("/replay", json: body).status == 204, "committed on another replica")
                    #expect(try await onA.post("/replay", json: body).status == 409, "and refused by the issuing one")
                    #expect(try await onB.post("/replay", json: body).status == 409)
                    try await a.terminate()
                    a = try await AppProcess.start(arguments)
                    var afterRestart = Visitor(baseURL: a.baseURL, client: client, cookies: onA.cookies)
                    #expect(try await afterRestart.post("/replay", json: body).status == 409, "and after a restart")
                }
                try await a.terminate()
                try await b.terminate()
            }
        }
    }

    /// Replica A stores the events of its pages in the shared outbox and cannot reach the
    /// Insights API; it is killed with SIGKILL. Replica B, started once A's leases expired,
    /// delivers every one of them (at least once, a profile's in the order A stored them).
    @Test(arguments: [1, 2, 3])
    func eventsOfAKilledReplicaAreDeliveredByAnother(round: Int) async throws {
        try await withPostgresTestServer { database in
            try await withLocalAPIServer { api in
                let shared = ["--postgres", database.connectionString(), "--outbox-lease-ms", "1500"]
                let a = try await AppProcess.start(
                    ["--experience-base-url", api.experienceBaseURL, "--insights-base-url", "http://127.0.0.1:1/insights/"] + shared)
                defer { a.kill() }
                var generator = SystemRandomNumberGenerator()
                let profiles = (0..<(2 + round)).map { "replica-\(round)-visitor-\($0)" }
                try await withHTTPClient { client in
                    for index in 0..<(6 + 3 * round) {
                        let profile = profiles[Int.random(in: 0..<profiles.count, using: &generator)]
                        var visitor = Visitor(baseURL: a.baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: profile, consent: true)])
                        let status = try await visitor.get("/events").status
                        #expect(status == 200, "request \(index)")
                    }
                }
                // Every page's events were stored before its response: read them from the table.
                let stored = try psqlRows(database, "SELECT message_id || ' ' || profile_id FROM optimization.outbox_events ORDER BY sequence")
                try #require(stored.count >= 6 + 3 * round, "every page's views are stored")
                a.kill()
                _ = await a.exited.first { _ in true }
                // A renewed its leases while it lived; they expire 1.5 s after the kill at the latest.
                let expired = try await eventually(within: .seconds(60)) {
                    try psqlRows(database, "SELECT count(*) FROM optimization.outbox_events WHERE lease_expires_at > now()").first == "0"
                }
                try #require(expired)

                // B starts, claims A's events, and delivers them in its shutdown flush.
                let b = try await AppProcess.start(
                    ["--experience-base-url", api.experienceBaseURL, "--insights-base-url", api.insightsBaseURL] + shared)
                defer { b.kill() }
                try await b.terminate()
                let expected = Set(stored.map { String($0.split(separator: " ")[0]) })
                let delivered = api.insightsBatches.flatMap { batch in
                    (batch["events"]?.arrayValue ?? []).map { ($0["messageId"]?.stringValue ?? "?", batch["profile"]?["id"]?.stringValue ?? "?") }
                }
                #expect(expected.isSubset(of: Set(delivered.map(\.0))), "B delivered every event A stored")
                for profile in profiles {
                    let storedOrder = stored.filter { $0.hasSuffix(" " + profile) }.map { String($0.split(separator: " ")[0]) }
                    var firstDelivery: [String] = []
                    for event in delivered where event.1 == profile && !firstDelivery.contains(event.0) {
                        firstDelivery.append(event.0)
                    }
                    #expect(firstDelivery == storedOrder, "\(profile): in the order A stored them")
                }
                #expect(try psqlRows(database, "SELECT count(*) FROM optimization.outbox_events") == ["0"],
                        "delivered events are deleted from the table")
            }
        }
    }

    /// The database goes away while a replica serves: pages keep rendering (and their events
    /// are queued in the replica's memory and delivered by it) without waiting on the database
    /// each time; once it is back, events are stored in it again.
    @Test func pagesKeepRenderingAndEventsAreKeptWhileTheDatabaseIsAway() async throws {
        try await withPostgresTestServer { database in
            try await withLocalAPIServer { api in
                let app = try await AppProcess.start([
                    "--experience-base-url", api.experienceBaseURL, "--insights-base-url", api.insightsBaseURL,
                    "--postgres", database.connectionString(),
                ])
                defer { app.kill() }
                try await withHTTPClient { client in
                    var visitor = Visitor(baseURL: app.baseURL, client: client, cookies: ["pp_state": TestVisitorState.cookie(profileId: "away-visitor", consent: true)])
                    #expect(try await visitor.get("/events").status == 200)
                    #expect(try psqlRows(database, "SELECT count(*) FROM optimization.outbox_events") != ["0"] || !api.insightsBatches.isEmpty,
                            "stored (or already delivered)")
                    database.stop()
                    let started = ContinuousClock.now
                    for _ in 0..<5 {
                        let status = try await visitor.get("/events").status
                        #expect(status == 200)
                    }
                    let elapsed = ContinuousClock.now - started
                    // One append waits for the database's operation timeout (2 s); the pages after it
                    // do not wait again. A failure bound with a wide margin, not a timing goal.
                    #expect(elapsed < .seconds(30), "five pages took \(elapsed) with the database away")
                    let inMemory = try await eventually(within: .seconds(60)) {
                        let metrics = try await get(client, app.metricsURL + "/metrics").body
                        return metrics.contains("optimization_shared_outbox_events_total{result=\"memory\"}")
                    }
                    #expect(inMemory, "events queued in memory are counted")
                    try database.start()
                    let stored = try await eventually(within: .seconds(60)) {
                        _ = try await visitor.get("/events")
                        let metrics = try await get(client, app.metricsURL + "/metrics").body
                        return metrics.split(separator: "\n").contains { $0.hasPrefix("optimization_shared_outbox_events_total{result=\"stored\"}") && !$0.hasSuffix(" 3") }
                    }
                    #expect(stored, "the database is used again once it is back")
                }
                try await app.terminate()
                // Nothing accepted was lost: every page's views reached the Insights API.
                let views = api.insightsBatches.flatMap { $0["events"]?.arrayValue ?? [] }
                #expect(views.count >= 3 * 7)
            }
        }
    }

    /// Rows of one query, one line each, through the server's own `psql`.
    func psqlRows(_ database: PostgresTestServer, _ query: String) throws -> [String] {
        let process = Process()
        process.executableURL = database.binaries.directory.appendingPathComponent("psql")
        process.arguments = [database.connectionString(), "-At", "-c", query]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "psql failed: \(query)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Polls `condition` (real I/O elsewhere) until it holds or `within` passed.
    func eventually(within: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    struct CMSEntry: Equatable {
        var revision: Int
        var title: String
    }

    func cmsEntry(_ client: HTTPClient, _ app: AppProcess, _ id: String) async throws -> CMSEntry {
        let response = try await get(client, app.baseURL + "/cms/" + id)
        try #require(response.status == 200, "GET /cms/\(id): \(response.status)")
        let json = try JSONValue(jsonText: response.body)
        return CMSEntry(revision: json["revision"]?.intValue ?? -1, title: json["internalTitle"]?.stringValue ?? "")
    }

    /// The webhook signing secret the replicas are started with.
    static let webhookSecret = String(repeating: "a", count: 32) + String(repeating: "b", count: 32)

    /// Posts a publish webhook for `entryId`, signed with `signing` (nil: unsigned); `tampered`
    /// changes the body after signing.
    func webhook(
        _ client: HTTPClient, _ app: AppProcess, entryId: String, signing secret: String? = ReplicaTests.webhookSecret, tampered: Bool = false
    ) async throws -> Int {
        let body = #"{"sys":{"id":"\#(entryId)","type":"Entry"}}"#
        var signed = ContentfulWebhookRequest(
            method: "POST", path: "/webhooks/contentful",
            headers: [(name: "content-type", value: "application/vnd.contentful.management.v1+json"),
                      (name: "x-contentful-topic", value: "ContentManagement.Entry.publish")],
            body: Array(body.utf8))
        if let secret {
            signed = try ContentfulWebhookSigner(secret: secret).signed(signed, timestamp: Int64(Date().timeIntervalSince1970 * 1_000))
        }
        var request = HTTPClientRequest(url: app.baseURL + "/webhooks/contentful")
        request.method = .POST
        for header in signed.headers { request.headers.add(name: header.name, value: header.value) }
        request.body = .bytes(ByteBuffer(string: tampered ? body.replacingOccurrences(of: "Entry", with: "Asset") : body))
        return Int(try await client.execute(request, timeout: .seconds(60)).status.code)
    }

    func get(_ client: HTTPClient, _ url: String) async throws -> (status: Int, body: String) {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 4 << 20)))
    }
}

/// A `personalized-pages` child process on an ephemeral port, with its metrics listener on another.
struct AppProcess {
    let process: Process
    let baseURL: String
    /// The metrics listener (`--metrics-port 0`).
    let metricsURL: String
    let exited: AsyncStream<Int32>

    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> AppProcess {
        let executable = GracefulShutdownTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        let process = Process()
        process.executableURL = executable
        // Every replica signs visitor state with the same key.
        process.arguments = ["--port", "0", "--metrics-port", "0", "--engines", "1", "--client-id", "replica-test", "--log-level", "warning",
                             "--visitor-state-key", TestVisitorState.key] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdout = Pipe()
        process.standardOutput = stdout
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        try process.run()
        do {
            let ports = try await GracefulShutdownTests.listeningPorts(stdout.fileHandleForReading, metrics: true)
            return AppProcess(
                process: process, baseURL: "http://127.0.0.1:\(ports.port)",
                metricsURL: "http://127.0.0.1:\(ports.metricsPort ?? 0)", exited: stream)
        } catch {
            process.terminate()
            throw error
        }
    }

    /// SIGTERM, then waits for the exit (60 s hang bound); the exit status must be 0.
    func terminate() async throws {
        guard process.isRunning else { return }
        process.terminate()
        let exited = self.exited
        let status = try await GracefulShutdownTests.withHangBound { await exited.first { _ in true } }
        #expect(status == 0)
    }

    /// SIGKILL when still running (a failing test's clean-up).
    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }
}
