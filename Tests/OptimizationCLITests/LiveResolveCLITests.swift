import Foundation
import Optimization
import OptimizationTesting
import Testing

/// `optimization resolve --space …` end to end: the real executable against a local CDA server
/// and a local Experience API server on loopback.

@Suite("optimization resolve, live mode", .serialized)
struct LiveResolveCLITests {
    /// The test space (`Fixtures/space`): CDA responses and a new visitor's selections.
    static let space = CLITests.root.appendingPathComponent("Fixtures/space")

    /// Runs `body` with a CDA server (the test space's entries) and an Experience API server (the test
    /// new-visitor selections), both stopped afterwards.
    private func withServers(_ body: (LocalContentfulDeliveryServer, LocalOptimizationAPIServer) async throws -> Void) async throws {
        let cda = LocalContentfulDeliveryServer()
        try cda.space.load(directory: Self.space.appendingPathComponent("entries"))
        let experience = LocalOptimizationAPIServer()
        let newVisitor = try JSONValue(jsonData: Data(contentsOf: Self.space.appendingPathComponent("experience/new-visitor.json")))
        experience.setExperienceData(newVisitor: newVisitor["data"])
        try await cda.start()
        try await experience.start()
        do {
            try await body(cda, experience)
        } catch {
            try? await cda.stop()
            try? await experience.stop()
            throw error
        }
        try await cda.stop()
        try await experience.stop()
    }

    private func live(_ cda: LocalContentfulDeliveryServer, _ entryId: String, _ extra: [String] = []) -> [String] {
        ["resolve", "--space", cda.space.spaceId, "--entry-id", entryId, "--cda-base-url", cda.baseURL] + extra
    }

    private func tokenFile(_ token: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cda-token-\(UUID().uuidString)")
        try Data("\(token)\n".utf8).write(to: file)
        return file
    }

    @Test func fetchesTheEntryAndTheVisitorsSelectionsLive() async throws {
        try await withServers { cda, experience in
            let token = try tokenFile(cda.space.accessToken)
            defer { try? FileManager.default.removeItem(at: token) }
            let run = try CLI.run(live(cda, "hero-home", [
                "--access-token-file", token.path, "--profile", LocalOptimizationAPIServer.fixtureProfileID,
                "--api-version", "v1", "--client-id", "org-1", "--experience-base-url", experience.experienceBaseURL,
            ]))
            #expect(run.status == 0, "\(run.stderr)")
            let output = try JSONValue(jsonText: run.stdout)
            #expect(output["entry"]?["sys"]?["id"] == "hero-home-europe")
            #expect(output["selectedOptimization"] != nil)
            let preflight = try #require(experience.requests.first)
            #expect(preflight.method == "POST" && preflight.queryValue("type") == "preflight")
            #expect(preflight.path.hasSuffix("/organizations/org-1/environments/main/profiles/\(LocalOptimizationAPIServer.fixtureProfileID)"))
            #expect(cda.entryRequests.first?.queryValue("sys.id") == "hero-home")
            #expect(cda.entryRequests.first?.queryValue("include") == "10")
        }
    }

    @Test func inAPIV2TheSpaceNamesTheTenantOfBothAPIs() async throws {
        try await withServers { cda, experience in
            let token = try tokenFile(cda.space.accessToken)
            defer { try? FileManager.default.removeItem(at: token) }
            let run = try CLI.run(live(cda, "hero-home", [
                "--access-token-file", token.path, "--profile", LocalOptimizationAPIServer.fixtureProfileID,
                "--experience-base-url", experience.experienceBaseURL,
            ]))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try JSONValue(jsonText: run.stdout)["entry"]?["sys"]?["id"] == "hero-home-europe")
            let preflight = try #require(experience.requests.first)
            #expect(preflight.queryValue("type") == "preflight")
            #expect(preflight.path.hasSuffix(
                "/v3/spaces/\(cda.space.spaceId)/environments/master/profiles/\(LocalOptimizationAPIServer.fixtureProfileID)"), "\(preflight.path)")
            let mixed = try CLI.run(live(cda, "hero-home", ["--profile", "p", "--client-id", "org-1"]))
            #expect(mixed.status == 64 && mixed.stderr.contains("--client-id is for --api-version v1"), "\(mixed.stderr)")
        }
    }

    /// One reading of an Experience answer: the same answer fetched with `--profile` and read from
    /// a `--selections` file prints the same bytes, in both protocol versions.
    @Test(arguments: ["v1", "v2"])
    func anAnswerFromAFileResolvesExactlyAsTheSameAnswerFetchedLive(_ version: String) async throws {
        try await withServers { cda, experience in
            let token = try tokenFile(cda.space.accessToken)
            defer { try? FileManager.default.removeItem(at: token) }
            let tenant = version == "v1" ? ["--client-id", "org-1"] : []
            let fetched = try CLI.run(live(cda, "hero-home", [
                "--access-token-file", token.path, "--profile", LocalOptimizationAPIServer.fixtureProfileID,
                "--api-version", version, "--experience-base-url", experience.experienceBaseURL,
            ] + tenant))
            let answer = Self.space.appendingPathComponent("experience/new-visitor.json").path
            let fromFile = try CLI.run(live(cda, "hero-home", [
                "--access-token-file", token.path, "--selections", answer, "--api-version", version,
            ]))
            #expect(fetched.status == 0 && fromFile.status == 0, "\(fetched.stderr)\(fromFile.stderr)")
            #expect(fromFile.stdout == fetched.stdout)
            let selection = try JSONValue(jsonText: fromFile.stdout)["selectedOptimization"]
            #expect(selection?["experienceId"] == "exp-hero-europe")
            #expect(selection?["sticky"] == false)
        }
    }

    @Test func tokenFromTheEnvironmentAndNoSelectionsRendersTheBaseline() async throws {
        try await withServers { cda, _ in
            let run = try CLI.run(live(cda, "hero-home", ["--environment", "master", "--locale", "en-US"]),
                                  environment: ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try JSONValue(jsonText: run.stdout)["entry"]?["sys"]?["id"] == "hero-home")
            #expect(cda.entryRequests.first?.queryValue("locale") == "en-US")
        }
    }

    @Test func aRejectedTokenExits77WithoutEchoingIt() async throws {
        try await withServers { cda, _ in
            let run = try CLI.run(live(cda, "hero-home"), environment: ["CONTENTFUL_ACCESS_TOKEN": "s3cret-wrong-token"])
            #expect(run.status == 77)
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains("401"), "\(run.stderr)")
            #expect(!run.stderr.contains("s3cret") && !run.stdout.contains("s3cret"))
        }
    }

    @Test func anUnknownEntryExits66() async throws {
        try await withServers { cda, _ in
            let run = try CLI.run(live(cda, "no-such-entry"), environment: ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken])
            #expect(run.status == 66)
            #expect(run.stderr == "error: no entry with id \"no-such-entry\" in the space\n")
            let space = try CLI.run(["resolve", "--space", "other", "--entry-id", "x", "--cda-base-url", cda.baseURL],
                                    environment: ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken])
            #expect(space.status == 66)
        }
    }

    @Test func aFailingOrUnreachableAPIExits69() async throws {
        try await withServers { cda, _ in
            for _ in 0..<3 { cda.enqueue(.contentfulServerError(503)) }
            let failing = try CLI.run(live(cda, "hero-home"), environment: ["CONTENTFUL_ACCESS_TOKEN": cda.space.accessToken])
            #expect(failing.status == 69)
            #expect(failing.stderr.hasPrefix("error: ") && failing.stderr.contains("503"), "\(failing.stderr)")
        }
        let stopped = LocalContentfulDeliveryServer()
        try await stopped.start()
        let deadURL = stopped.baseURL
        try await stopped.stop()
        let unreachable = try CLI.run(["resolve", "--space", "s", "--entry-id", "e", "--cda-base-url", deadURL],
                                      environment: ["CONTENTFUL_ACCESS_TOKEN": "t"])
        #expect(unreachable.status == 69)
        #expect(unreachable.stderr.hasPrefix("error: ") && unreachable.stderr.contains("unreachable"), "\(unreachable.stderr)")
    }

    @Test func liveModeUsageErrorsExit64() throws {
        let noEntryId = try CLI.run(["resolve", "--space", "s"])
        #expect(noEntryId.status == 64)
        let noToken = try CLI.run(["resolve", "--space", "s", "--entry-id", "e"], environment: ["CONTENTFUL_ACCESS_TOKEN": ""])
        #expect(noToken.status == 64 && noToken.stderr.contains("CONTENTFUL_ACCESS_TOKEN"))
        let profileWithoutClient = try CLI.run(["resolve", "--space", "s", "--entry-id", "e", "--profile", "p"])
        #expect(profileWithoutClient.status == 64)
        let liveOptionOffline = try CLI.run(["resolve", "x.json", "--preview"])
        #expect(liveOptionOffline.status == 64 && liveOptionOffline.stderr.contains("--space"))
    }
}
