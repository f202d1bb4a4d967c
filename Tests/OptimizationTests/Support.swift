import JavaScriptHost
import Testing
import Foundation
@testable import Optimization

/// The repository root, from this file's location.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let fixturesDirectory = repositoryRoot.appendingPathComponent("Fixtures")
/// The Trailhead Outfitters test space (`Fixtures/space`): CDA responses and a new visitor's selections.
let spaceFixturesDirectory = fixturesDirectory.appendingPathComponent("space")

func fixtureData(_ relativePath: String) throws -> Data {
    try Data(contentsOf: fixturesDirectory.appendingPathComponent(relativePath))
}

/// One element of Fixtures/golden-cases.json.
struct GoldenCase: CustomTestStringConvertible, Sendable {
    let name: String
    let entry: String
    let entryId: String?
    let selections: String?
    let expectedEntryId: String
    let expectedSelection: JSONValue?
    let expectedEmpty: Bool
    var testDescription: String { name }

    static let all: [GoldenCase] = {
        guard let data = try? fixtureData("golden-cases.json"), let cases = try? JSONValue(jsonData: data).arrayValue else { return [] }
        return cases.map { value in
            let selection = value["expect"]?["selection"]
            return GoldenCase(
                name: value["name"]?.stringValue ?? "?", entry: value["entry"]?.stringValue ?? "",
                entryId: value["entryId"]?.stringValue, selections: value["selections"]?.stringValue,
                expectedEntryId: value["expect"]?["entryId"]?.stringValue ?? "",
                expectedSelection: selection?.isNull == false ? selection : nil,
                expectedEmpty: value["expect"]?["isEmptyVariant"]?.boolValue ?? false)
        }
    }()
}



/// A client initialized with a test configuration and a manual clock.
func makeClient(_ config: OptimizationConfig = OptimizationConfig(clientId: "test-client")) throws -> OptimizationClient {
    let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
    try client.initialize(config: config)
    return client
}
