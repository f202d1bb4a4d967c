import Foundation

/// The repository's `Fixtures/` folder, from this file's location.
let fixturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

func fixtureData(_ relativePath: String) throws -> Data {
    try Data(contentsOf: fixturesDirectory.appendingPathComponent(relativePath))
}

/// Every JSON fixture's text, then, at every `step`-th byte offset, the text cut there and the
/// text with that byte replaced by each of `replacements`: valid and broken documents for
/// differential tests of the readers.
func fixtureTextVariants(step: (Int) -> Int, replacements: [UInt8]) throws -> [String] {
    var texts: [String] = []
    let files = try FileManager.default.subpathsOfDirectory(atPath: fixturesDirectory.path).filter { $0.hasSuffix(".json") }
    for file in files.sorted() {
        let text = String(decoding: try fixtureData(file), as: UTF8.self)
        texts.append(text)
        let bytes = Array(text.utf8)
        for cut in stride(from: 0, to: bytes.count, by: max(1, step(bytes.count))) {
            texts.append(String(decoding: bytes[..<cut], as: UTF8.self))
            for replacement in replacements {
                var changed = bytes
                changed[cut] = replacement
                texts.append(String(decoding: changed, as: UTF8.self))
            }
        }
    }
    return texts
}
