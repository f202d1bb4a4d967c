import Foundation
import Testing

/// The checks the README's test command runs before and after the tests: a clone with nothing
/// beside it must pass them, and they must fail on what they exist to catch.
@Suite("Repository checks (scripts/)")
struct RepositoryScriptTests {
    static let scripts = CLITests.root.appendingPathComponent("scripts")

    private func script(_ name: String, _ arguments: [String] = [], stdin: String? = nil) throws -> CLI.Run {
        try CLI.run(arguments, stdin: stdin.map { Data($0.utf8) }, executable: Self.scripts.appendingPathComponent(name))
    }

    @Test func skippedTestsAreCountedFromSwiftTestingXCTestAndNode() throws {
        let clean = """
            ✔ Test fetchesTheEntry() passed after 0.2 seconds.
            ✔ Test run with 12 tests in 3 suites passed after 1.5 seconds.
            # skipped 0
            """
        #expect(try script("lib/count-skipped", stdin: clean).stdout == "0\n")
        let skipping = """
            ◇ Test oneByIdResolvesLikeTheFile() skipped: "Fixtures/space is absent"
            Test Case 'LegacyTests.testOld' skipped (0.001 seconds).
            ✔ Test run with 12 tests in 3 suites passed after 1.5 seconds.
            # skipped 2
            """
        #expect(try script("lib/count-skipped", stdin: skipping).stdout == "4\n")
    }

    @Test func theRepositoryNamesNoPathOutsideItself() throws {
        let run = try script("check-self-contained")
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test func aFileNamingASiblingCheckoutFailsTheCheck() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("self-contained-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("# Notes\nNothing outside.\n".utf8).write(to: directory.appendingPathComponent("README.md"))
        #expect(try script("check-self-contained", [directory.path]).status == 0)

        // Spelled so that this file does not trip the check itself.
        let outside = ["..", "shared", "spec", "core.md"].joined(separator: "/")
        try Data("let spec = \"\(outside)\"\n".utf8).write(to: directory.appendingPathComponent("Loader.swift"))
        let run = try script("check-self-contained", [directory.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("Loader.swift:1:"), "\(run.stderr)")
    }

    /// A symbol graph as swift-docc-plugin extracts it, with one public symbol documented or not.
    private func symbolGraph(documented: Bool, in directory: URL) throws -> URL {
        let comment = documented ? #""docComment": {"lines": [{"text": "The hero's id."}]},"# : ""
        let graph = """
            {"module": {"name": "Demo"}, "symbols": [
              {"kind": {"identifier": "swift.property"}, "pathComponents": ["Hero", "id"], "accessLevel": "public",
               \(comment) "location": {"uri": "file:///src/demo/Sources/Demo/Hero.swift", "position": {"line": 4, "character": 4}}},
              {"kind": {"identifier": "swift.func"}, "pathComponents": ["Hero", "helper()"], "accessLevel": "internal",
               "location": {"uri": "file:///src/demo/Sources/Demo/Hero.swift", "position": {"line": 9, "character": 4}}}
            ]}
            """
        let file = directory.appendingPathComponent("Demo-\(documented).symbols.json")
        try Data(graph.utf8).write(to: file)
        return file
    }

    @Test func theDocumentationCheckFailsOnAPublicSymbolWithoutAComment() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let documented = try script("lib/undocumented-symbols.py", [try symbolGraph(documented: true, in: directory).path])
        #expect(documented.status == 0 && documented.stdout.isEmpty, "\(documented.stdout)\(documented.stderr)")
        let missing = try script("lib/undocumented-symbols.py", [try symbolGraph(documented: false, in: directory).path])
        #expect(missing.status == 1)
        #expect(missing.stdout == "Sources/Demo/Hero.swift:5: Hero.id (swift.property)\n", "\(missing.stdout)")
    }
}
