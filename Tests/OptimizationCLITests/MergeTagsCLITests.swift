import Foundation
import Optimization
import Testing

/// `optimization merge-tags` through the real executable (Fixtures/merge-tags).
@Suite("optimization merge-tags")
struct MergeTagsCLITests {
    static let fixtures = CLITests.fixtures.appendingPathComponent("merge-tags")

    private func fixture(_ name: String) -> String {
        Self.fixtures.appendingPathComponent(name).path
    }

    static let cases: [(entry: String, profile: String, expected: JSONValue)] = [
        ("article.json", "profile.json", ["traits_firstName": "Ada", "location.continent": "EU"]),
        ("article.json", "profile-response.json", ["traits_firstName": "there", "location.continent": "NA"]),
        ("article.json", "profile-incomplete.json", ["traits_firstName": "there", "location.continent": "your part of the world"]),
        ("article-collection.json", "profile.json", ["traits_firstName": "Ada", "location.continent": "EU", "traits.ordersPlaced": "0"]),
        ("article-collection.json", "profile-response.json", ["traits_firstName": "there", "location.continent": "NA", "traits.ordersPlaced": "7"]),
        ("article-collection.json", "profile-incomplete.json",
         ["traits_firstName": "there", "location.continent": "your part of the world", "traits.ordersPlaced": .null]),
    ]

    @Test(arguments: cases.indices)
    func rendersEveryMergeTagForTheProfile(_ index: Int) throws {
        let (entry, profile, expected) = Self.cases[index]
        let run = try CLI.run(["merge-tags", fixture(entry), "--profile", fixture(profile)])
        #expect(run.status == 0, "\(run.stderr)")
        let output = try JSONValue(jsonText: run.stdout)
        #expect(output == expected)
        #expect(output.objectValue.map { Array($0.keys) } == expected.objectValue.map { Array($0.keys) }, "document order")
        #expect(run.stdout.split(separator: "\n").count == 1)
    }

    @Test func aLinkMissingFromTheIncludesIsAWarning() throws {
        let run = try CLI.run(["merge-tags", fixture("article-collection.json"), "--profile", fixture("profile.json"), "--field", "footer"])
        #expect(run.status == 0)
        #expect(try JSONValue(jsonText: run.stdout) == ["traits_firstName": "Ada"])
        #expect(run.stderr == "warning: \(fixture("article-collection.json")): embedded entry \"9MissingMergeTag0000001\" is not in the document's includes; skipped\n")
    }

    @Test func readsTheEntryFromStandardInputAndAnExperienceResponseAsProfile() throws {
        let input = try Data(contentsOf: Self.fixtures.appendingPathComponent("article.json"))
        let visitor = CLITests.fixtures.appendingPathComponent("selections/identified-visitor.json").path
        let run = try CLI.run(["merge-tags", "-", "--profile", visitor, "--pretty"], stdin: input)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try JSONValue(jsonText: run.stdout) == ["traits_firstName": "Maria", "location.continent": "EU"])
        #expect(run.stdout.split(separator: "\n").count > 1)
    }

    @Test func anEntryWithoutMergeTagsPrintsAnEmptyObject() throws {
        let run = try CLI.run(["merge-tags", CLITests.fixtures.appendingPathComponent("entries/banner-components.json").path, "--profile", fixture("profile.json")])
        #expect(run.status == 0)
        #expect(run.stdout == "{}\n")
    }

    @Test func theHeroFixturesEmbedAMergeTagInline() throws {
        for file in ["entries/hero-optimized.json", "entries/cda-hero-collection.json"] {
            let run = try CLI.run(["merge-tags", CLITests.fixtures.appendingPathComponent(file).path, "--profile", fixture("profile.json")])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try JSONValue(jsonText: run.stdout) == ["traits.firstName": "Ada"], "\(file)")
        }
    }

    @Test(arguments: [
        (["--field", "summary"], "is not a rich-text document"),
        (["--field", "nope"], "has no field \"nope\""),
        (["--entry-id", "other"], "no item with sys.id"),
    ])
    func badFieldsAndIdsExit65(_ extra: [String], _ fragment: String) throws {
        let run = try CLI.run(["merge-tags", fixture("article.json"), "--profile", fixture("profile.json")] + extra)
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("error: ") && run.stderr.contains(fragment), "\(run.stderr)")
        #expect(run.stdout.isEmpty)
    }

    @Test func badInputsUseTheResolveConventions() throws {
        let invalid = CLITests.fixtures.appendingPathComponent("invalid")
        let notJSON = try CLI.run(["merge-tags", invalid.appendingPathComponent("not-json.txt").path, "--profile", fixture("profile.json")])
        #expect(notJSON.status == 65 && notJSON.stderr.contains("invalid JSON"))
        let badProfile = try CLI.run(["merge-tags", fixture("article.json"), "--profile", invalid.appendingPathComponent("wrong-shape-array.json").path])
        #expect(badProfile.status == 65)
        #expect(badProfile.stderr.contains("wrong-shape-array.json") && badProfile.stderr.contains("expected a profile object"))
        let envelope = try CLI.run(["merge-tags", fixture("article.json"), "--profile", "-"], stdin: Data(#"{"data":{"experiences":[]}}"#.utf8))
        #expect(envelope.status == 65 && envelope.stderr.contains("data.profile"))
        let missing = try CLI.run(["merge-tags", fixture("article.json"), "--profile", "/nonexistent/profile.json"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: /nonexistent/profile.json: no such file\n")
        let missingEntry = try CLI.run(["merge-tags", "/nonexistent/entry.json", "--profile", fixture("profile.json")])
        #expect(missingEntry.status == 66)
        let noProfile = try CLI.run(["merge-tags", fixture("article.json")])
        #expect(noProfile.status == 64 && noProfile.stderr.hasPrefix("error: "))
        let bothStdin = try CLI.run(["merge-tags", "-", "--profile", "-"])
        #expect(bothStdin.status == 64)
    }

    @Test func helpShowsExamples() throws {
        let run = try CLI.run(["merge-tags", "--help"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("Examples:") && run.stdout.contains("--profile"))
    }
}
