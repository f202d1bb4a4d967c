import Foundation
import Optimization
import Testing

/// Runs the real `optimization` executable (built next to the test bundle).
@Suite("optimization CLI")
struct CLITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent("Fixtures")

    static let goldenCases: [JSONValue] = {
        guard let data = try? Data(contentsOf: fixtures.appendingPathComponent("golden-cases.json")) else { return [] }
        return (try? JSONValue(jsonData: data).arrayValue) ?? []
    }()

    @Test(arguments: goldenCases.indices)
    func goldenCaseThroughTheCLI(_ index: Int) throws {
        let golden = Self.goldenCases[index]
        var arguments = ["resolve", fixture(golden["entry"]?.stringValue ?? "")]
        if let selections = golden["selections"]?.stringValue { arguments += ["--selections", fixture(selections)] }
        if let entryId = golden["entryId"]?.stringValue { arguments += ["--entry-id", entryId] }
        let run = try CLI.run(arguments)
        #expect(run.status == 0, "\(golden["name"]?.stringValue ?? ""): \(run.stderr)")
        let output = try JSONValue(jsonText: run.stdout)
        let expect = golden["expect"]
        #expect(output["entry"]?["sys"]?["id"] == expect?["entryId"], "\(golden["name"]?.stringValue ?? "")")
        let selection = expect?["selection"]
        if let selection, !selection.isNull {
            #expect(output["selectedOptimization"]?["experienceId"] == selection["experienceId"])
            #expect(output["selectedOptimization"]?["variantIndex"] == selection["variantIndex"])
        } else {
            #expect(output["selectedOptimization"] == nil)
        }
        #expect(output["isEmptyVariant"] == (expect?["isEmptyVariant"]?.boolValue == true ? .bool(true) : nil))
        #expect(output.objectValue?.keys.allSatisfy { ["entry", "selectedOptimization", "isEmptyVariant"].contains($0) } == true)
        #expect(run.stdout.split(separator: "\n").count == 1)
    }

    @Test func readsStandardInput() throws {
        let input = try Data(contentsOf: Self.fixtures.appendingPathComponent("entries/hero-optimized.json"))
        let run = try CLI.run(["resolve", "-", "--selections", fixture("selections/new-visitor.json")], stdin: input)
        #expect(run.status == 0)
        #expect(try JSONValue(jsonText: run.stdout)["selectedOptimization"] != nil)
    }

    @Test(arguments: [
        ("invalid/not-json.txt", "invalid JSON at line"), ("invalid/truncated.json", "invalid JSON"),
        ("invalid/wrong-shape-array.json", "not a Contentful entry"), ("invalid/wrong-shape-string.json", "not a Contentful entry"),
        ("invalid/empty-collection.json", "no items"), ("invalid/entry-missing-sys.json", "sys"),
    ])
    func badEntryFilesExit65WithAClearError(_ file: String, _ fragment: String) throws {
        let run = try CLI.run(["resolve", fixture(file)])
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains(file) && run.stderr.contains(fragment), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func badSelectionsExit65() throws {
        let run = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--selections", fixture("invalid/selections-wrong-shape.json")])
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains("selections-wrong-shape.json"))
    }

    /// An Experience answer in `--selections` is validated by the shared core, as a live answer is;
    /// a bare array of selections is used as given.
    @Test func anInvalidExperienceAnswerExits65WithTheCoresReason() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-answer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String)] = [
            (#"{"data":{"experiences":[],"changes":[]}}"#, "data.profile"),
            (#"{"data":{"profile":{"id":"p"},"experiences":[{"experienceId":1}],"changes":[]}}"#, "data.experiences[0]"),
            (#"{"data":{"profile":{"id":"p"},"experiences":[],"changes":[]},"error":false}"#, "\"error\""),
        ]
        for (index, (text, reason)) in cases.enumerated() {
            let file = directory.appendingPathComponent("answer-\(index).json")
            try Data(text.utf8).write(to: file)
            let run = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--selections", file.path])
            #expect(run.status == 65, "\(text)")
            #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains(file.path) && run.stderr.contains(reason), "\(run.stderr)")
        }
        // The v1 envelope allows a boolean `error`.
        let v1 = directory.appendingPathComponent("answer-2.json")
        let run = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--selections", v1.path, "--api-version", "v1"])
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test func missingInputExits66() throws {
        let run = try CLI.run(["resolve", "/nonexistent/entry.json"])
        #expect(run.status == 66)
        #expect(run.stderr == "error: /nonexistent/entry.json: no such file\n")
        let selections = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--selections", "/nonexistent/s.json"])
        #expect(selections.status == 66)
    }

    @Test func usageErrorsExit64() throws {
        let missing = try CLI.run(["resolve"])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("error: "))
        let unknown = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--bogus"])
        #expect(unknown.status == 64)
        let entryIdMismatch = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--entry-id", "other"])
        #expect(entryIdMismatch.status == 65)
    }

    @Test func absurdlyDeepNestingIsRefusedWithoutCrashing() throws {
        let deep = Data((String(repeating: "{\"a\":", count: 100_000) + "1" + String(repeating: "}", count: 100_000)).utf8)
        let run = try CLI.run(["resolve", "-"], stdin: deep)
        #expect(run.status == 65)
        #expect(run.stderr.contains("nested deeper than"))
    }

    @Test func helpShowsExamples() throws {
        let run = try CLI.run(["resolve", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Examples:") && run.stdout.contains("--selections"))
    }

    @Test func theBinaryWorksWhenCopiedAloneToAnotherDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("optimization-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("optimization")
        try FileManager.default.copyItem(at: try CLI.executable(), to: copy)
        let run = try CLI.run(["resolve", fixture("entries/hero-optimized.json"), "--selections", fixture("selections/new-visitor.json")],
                              executable: copy, workingDirectory: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try JSONValue(jsonText: run.stdout)["entry"] != nil)
    }

    private func fixture(_ path: String) -> String {
        Self.fixtures.appendingPathComponent(path).path
    }
}

/// Finds and runs the `optimization` executable.
enum CLI {
    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The built executable `name` (default `optimization`) next to the test bundle.
    static func executable(named name: String = "optimization") throws -> URL {
        let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testBundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) next to \(testBundle.path)"])
    }

    static func run(
        _ arguments: [String], stdin: Data? = nil, executable: URL? = nil, workingDirectory: URL? = nil,
        environment extra: [String: String] = [:]
    ) throws -> Run {
        let process = Process()
        process.executableURL = try executable ?? self.executable()
        process.arguments = arguments
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        try process.run()
        // Read both pipes concurrently with writing stdin so large outputs cannot deadlock.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = output.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = errors.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let stdin { try? input.fileHandleForWriting.write(contentsOf: stdin) }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Run(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self))
    }
}
