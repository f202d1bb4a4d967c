import JavaScriptHost
import Testing
import Foundation
import Optimization
import OptimizationClientFace
import OptimizationServiceFace

/// The repository root, from this file's location.
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
package let fixturesDirectory = repositoryRoot.appendingPathComponent("Fixtures")
/// The Trailhead Outfitters test space (`Fixtures/space`): CDA responses and a new visitor's selections.
package let spaceFixturesDirectory = fixturesDirectory.appendingPathComponent("space")

package func fixtureData(_ relativePath: String) throws -> Data {
    try Data(contentsOf: fixturesDirectory.appendingPathComponent(relativePath))
}

/// One element of Fixtures/golden-cases.json.
package struct GoldenCase: CustomTestStringConvertible, Sendable {
    package let name: String
    package let entry: String
    package let entryId: String?
    package let selections: String?
    package let expectedEntryId: String
    package let expectedSelection: JSONValue?
    package let expectedEmpty: Bool
    package var testDescription: String { name }

    package static let all: [GoldenCase] = {
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
package func makeClient(_ config: OptimizationConfig = OptimizationConfig(clientId: "test-client")) throws -> OptimizationClient {
    let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
    try client.initialize(config: config)
    return client
}
