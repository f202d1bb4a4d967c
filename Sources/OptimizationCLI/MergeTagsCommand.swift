import ArgumentParser
import Foundation
import Optimization

/// `optimization merge-tags <entry.json | -> --profile <profile.json> [--field <name>] [--entry-id <id>]`
struct MergeTagsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-tags",
        abstract: "Print the value of every merge tag in an entry's rich text for a profile.",
        discussion: """
            The entry file holds one Contentful entry (links already resolved) or a raw Content \
            Delivery API collection response (`items` + `includes.Entry`); the entry is then \
            `items[0]`, or the item given by --entry-id, and embedded links are resolved from the \
            includes. Every `embedded-entry-inline` node whose target is an `nt_mergetag` entry, in \
            every rich-text field (or only --field), is rendered for the profile.

            --profile holds an Experience API Profile object, or an Experience API response whose \
            `data.profile` is used. A merge tag takes the first present profile value its \
            nt_mergetag_id names (`0` and `false` included); otherwise its nt_fallback.

            Output: one JSON object mapping each merge tag's nt_mergetag_id (its sys.id when it \
            has none) to its value, or null when there is no value and no fallback. Embedded links \
            missing from the includes are reported on stderr as warnings. Errors go to stderr as \
            `error: …`; exit codes: 64 usage, 65 invalid data, 66 missing input.

            Examples:
              optimization merge-tags Fixtures/merge-tags/article.json --profile Fixtures/merge-tags/profile.json
              optimization merge-tags article-collection.json --profile response.json --field body --pretty
              curl -s "$CDA/entries?sys.id=6Xa1&include=2" | optimization merge-tags - --profile profile.json
            """
    )

    @Argument(help: ArgumentHelp("Entry or CDA collection JSON file; `-` reads standard input.", valueName: "entry.json"))
    var entryPath: String

    @Option(name: .long, help: ArgumentHelp("Profile JSON, or an Experience API response with data.profile.", valueName: "profile.json"))
    var profile: String

    @Option(name: .long, help: ArgumentHelp("Only this rich-text field.", valueName: "name"))
    var field: String?

    /// `--entry-id`: the item of a collection file.
    @OptionGroup var entrySelection: EntrySelectionOptions

    /// `--pretty`.
    @OptionGroup var output: OutputFormatOptions

    func validate() throws {
        if entryPath == "-" && profile == "-" {
            throw ValidationError("the entry and --profile cannot both read standard input")
        }
    }

    func run() throws {
        let entryName = InputFile.displayName(entryPath)
        let entry = try InputFile.decode(entryPath) { try ContentfulEntry(jsonData: $0, entryId: entrySelection.entryId) }
        let profileValue = try InputFile.decode(profile) { data in
            var bytes = Array(data)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            return try MergeTags.profile(in: try JSONValue(jsonData: bytes))
        }
        let client = try OfflineClient.start()
        defer { client.destroy() }
        let rendered: MergeTagValues
        do {
            rendered = try client.mergeTagValues(in: entry, profile: profileValue, field: field)
        } catch {
            throw CLIFailure.data("\(entryName): \(error)")
        }
        for id in rendered.unresolvedLinks {
            FileHandle.standardError.write(Data("warning: \(entryName): embedded entry \"\(id)\" is not in the document's includes; skipped\n".utf8))
        }
        try OfflineClient.printJSON(rendered.jsonValue, pretty: output.pretty, source: entryName)
    }
}
