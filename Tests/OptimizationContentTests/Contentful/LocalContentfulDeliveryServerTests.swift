import Foundation
import JavaScriptHost
import Optimization
import OptimizationTesting
import OptimizationTestSupport
import Testing

// MARK: Helpers shared with the Contentful source tests

/// The test space's CDA responses, one file per entry (`Fixtures/space/entries`).
let spaceEntriesDirectory = spaceFixturesDirectory.appendingPathComponent("entries")

/// Starts a local CDA server serving the test space's entries for the duration of `body`, always stopped.
func withLocalCDAServer<T>(_ body: (LocalContentfulDeliveryServer) async throws -> T) async throws -> T {
    let server = LocalContentfulDeliveryServer()
    try server.space.load(directory: spaceEntriesDirectory)
    try await server.start()
    do {
        let result = try await body(server)
        try await server.stop()
        return result
    } catch {
        try? await server.stop()
        throw error
    }
}

/// One GET against `server` through the production transport.
private func get(
    _ server: LocalContentfulDeliveryServer, _ pathAndQuery: String, token: String? = "local-cda-token"
) async throws -> (status: Int, json: JSONValue?, headers: [String: String]) {
    let transport = try HTTPFetchTransport(configuration: .init(allowedBaseURLs: [server.baseURL]))
    defer { Task { try? await transport.shutdown() } }
    let response = try await transport.send(FetchRequest(
        url: server.baseURL + pathAndQuery, method: "GET",
        headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:], body: nil))
    return (response.status, try? JSONValue(jsonText: response.body), response.headers)
}

private func ids(_ values: [JSONValue]?) -> Set<String> {
    Set((values ?? []).compactMap { $0["sys"]?["id"]?.stringValue })
}

@Suite("LocalContentfulDeliveryServer (CDA contract)")
struct LocalContentfulDeliveryServerTests {
    static let entries = "/spaces/local-space/environments/master/entries"

    @Test func sysIdWithIncludeTenMatchesTheRealResponse() async throws {
        try await withLocalCDAServer { server in
            for id in ["hero-home", "gear-grid", "aud-europe"] {
                let real = try JSONValue(jsonData: Data(contentsOf: spaceEntriesDirectory.appendingPathComponent("\(id).json")))
                let (status, json, _) = try await get(server, "\(Self.entries)?sys.id=\(id)&include=10")
                #expect(status == 200)
                #expect(json?["sys"]?["type"] == "Array" && json?["total"] == 1)
                #expect(json?["items"] == real["items"])
                #expect(ids(json?["includes"]?["Entry"]?.arrayValue) == ids(real["includes"]?["Entry"]?.arrayValue), "\(id)")
                #expect(json?["errors"] == nil)
            }
        }
    }

    @Test func includeDepthLimitsTheIncludes() async throws {
        try await withLocalCDAServer { server in
            let zero = try await get(server, "\(Self.entries)?sys.id=hero-home&include=0")
            #expect(zero.json?["includes"] == nil)
            let one = try await get(server, "\(Self.entries)?sys.id=hero-home&include=1")
            let ten = try await get(server, "\(Self.entries)?sys.id=hero-home&include=10")
            let oneCount = one.json?["includes"]?["Entry"]?.arrayValue?.count ?? 0
            #expect(oneCount > 0 && oneCount < (ten.json?["includes"]?["Entry"]?.arrayValue?.count ?? 0))
        }
    }

    @Test func sysIdInContentTypeFieldsLimitAndSkip() async throws {
        try await withLocalCDAServer { server in
            let many = try await get(server, "\(Self.entries)?sys.id%5Bin%5D=holiday-banner,hero-home,nope&include=0")
            #expect(ids(many.json?["items"]?.arrayValue) == ["holiday-banner", "hero-home"])
            let slug = try await get(server, "\(Self.entries)?content_type=nt_experience&fields.nt_experience_id=exp-promo-ab")
            #expect(ids(slug.json?["items"]?.arrayValue) == ["exp-promo-ab"])
            let audiences = try await get(server, "\(Self.entries)?content_type=nt_audience&limit=3&skip=2&include=0")
            #expect(audiences.json?["items"]?.arrayValue?.count == 3)
            #expect(audiences.json?["skip"] == 2 && audiences.json?["limit"] == 3 && (audiences.json?["total"]?.intValue ?? 0) > 5)
        }
    }

    @Test func missingLinkTargetsAreReportedNotResolvable() async throws {
        try await withLocalCDAServer { server in
            server.space.removeEntry(id: "hero-home-europe")
            let (_, json, _) = try await get(server, "\(Self.entries)?sys.id=hero-home&include=10")
            #expect(json?["errors"]?[0]?["sys"]?["id"] == "notResolvable")
            #expect(json?["errors"]?[0]?["details"]?["id"] == "hero-home-europe")
            let included = ids(json?["includes"]?["Entry"]?.arrayValue)
            #expect(!included.contains("hero-home-europe"))
        }
    }

    @Test func tokenSpaceAndQueryErrorsUseTheCDAShape() async throws {
        try await withLocalCDAServer { server in
            let bad = try await get(server, "\(Self.entries)?sys.id=x", token: "wrong")
            #expect(bad.status == 401 && bad.json?["sys"]?["id"] == "AccessTokenInvalid")
            #expect(try await get(server, "\(Self.entries)", token: nil).status == 401)
            let space = try await get(server, "/spaces/other/environments/master/entries")
            #expect(space.status == 404 && space.json?["message"] != nil)
            #expect(try await get(server, "/spaces/local-space/environments/staging/entries").status == 404)
            let include = try await get(server, "\(Self.entries)?include=11")
            #expect(include.status == 400 && include.json?["sys"]?["id"] == "InvalidQuery")
            #expect(try await get(server, "\(Self.entries)?fields.x=1").status == 400)
            #expect(try await get(server, "\(Self.entries)?locale=xx-XX").status == 400)
            #expect(try await get(server, "\(Self.entries)?locale=en-US&limit=1").status == 200)
        }
    }

    @Test func scriptedRateLimitCarriesTheResetHeader() async throws {
        try await withLocalCDAServer { server in
            server.enqueue(.contentfulRateLimit(resetSeconds: 7), .contentfulServerError(503))
            let limited = try await get(server, "\(Self.entries)?sys.id=hero-home")
            #expect(limited.status == 429 && limited.headers["x-contentful-ratelimit-reset"] == "7")
            #expect(try await get(server, "\(Self.entries)").status == 503)
            #expect(try await get(server, "\(Self.entries)?limit=1").status == 200)
            #expect(server.entryRequests.count == 3)
            #expect(server.requests.first?.header("authorization") == "Bearer local-cda-token")
        }
    }

    @Test func republishRaisesTheRevision() async throws {
        try await withLocalCDAServer { server in
            #expect(server.space.publish(entryId: "hero-home-europe", field: "text", value: "changed"))
            let (_, json, _) = try await get(server, "\(Self.entries)?sys.id=hero-home-europe")
            #expect(json?["items"]?[0]?["sys"]?["revision"] == 2)
            #expect(json?["items"]?[0]?["fields"]?["text"] == "changed")
        }
    }
}
