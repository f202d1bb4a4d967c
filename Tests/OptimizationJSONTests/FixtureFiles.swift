import Foundation

/// The repository's `Fixtures/` folder, from this file's location.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

func fixtureData(_ relativePath: String) throws -> Data {
    try Data(contentsOf: fixturesDirectory.appendingPathComponent(relativePath))
}
