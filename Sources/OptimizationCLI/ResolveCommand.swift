import ArgumentParser
import Foundation
import Optimization

/// `optimization resolve <entry.json | -> [--selections <file>] [--entry-id <id>]`
struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Print the entry a visitor would see: the baseline or the selected variant.",
        discussion: """
            The entry file holds one Contentful entry (links already resolved) or a raw Content \
            Delivery API collection response (`items` + `includes.Entry`); the baseline is then \
            `items[0]`, or the item given by --entry-id, and links are resolved from the includes.

            --selections holds an Experience API response (`{"data":{"experiences":[…]}}`) or a \
            bare JSON array of selected optimizations. Without it nothing is selected.

            Output: one JSON object {"entry": …, "selectedOptimization": …, "isEmptyVariant": true} \
            (the last two only when present). Errors go to stderr as `error: …`; exit codes: \
            64 usage, 65 invalid data, 66 missing input.

            Examples:
              optimization resolve Fixtures/entries/hero-optimized.json
              optimization resolve page.json --selections profile-response.json
              curl -s "$CDA/entries?sys.id=4ib0hs&include=10" | optimization resolve - --selections sel.json
              optimization resolve collection.json --entry-id 5XHssysWUDECHzKLzoIsg1 --pretty
            """
    )

    @Argument(help: ArgumentHelp("Entry or CDA collection JSON file; `-` reads standard input.", valueName: "entry.json"))
    var entryPath: String

    @Option(name: .long, help: ArgumentHelp("Experience API response or JSON array of selected optimizations.", valueName: "file"))
    var selections: String?

    @Option(name: .long, help: ArgumentHelp("For a collection response: the sys.id of the baseline item.", valueName: "id"))
    var entryId: String?

    @Flag(name: .long, help: "Indent the output.")
    var pretty = false

    func validate() throws {
        if entryPath == "-" && selections == "-" {
            throw ValidationError("the entry and --selections cannot both read standard input")
        }
    }

    func run() throws {
        let entry = try InputFile.decode(entryPath) { try ContentfulEntry(jsonData: $0, entryId: entryId) }
        let selected = try selections.map { path throws(CLIFailure) in
            try InputFile.decode(path) { try SelectedOptimizations(jsonData: $0) }
        }
        let client = try OfflineClient.start()
        defer { client.destroy() }
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selected ?? .empty)
        try OfflineClient.printJSON(resolved.jsonValue, pretty: pretty, source: InputFile.displayName(entryPath))
    }
}
