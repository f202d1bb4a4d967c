import ArgumentParser
import Foundation
import JavaScriptHost
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
        let entryName = InputFile.displayName(entryPath)
        let entry: ContentfulEntry
        do {
            entry = try ContentfulEntry(jsonData: try InputFile.read(entryPath), entryId: entryId)
        } catch let failure as CLIFailure {
            throw failure
        } catch {
            throw CLIFailure.data("\(entryName): \(error)")
        }
        var selected: SelectedOptimizations?
        if let selections {
            do {
                selected = try SelectedOptimizations(jsonData: try InputFile.read(selections))
            } catch let failure as CLIFailure {
                throw failure
            } catch {
                throw CLIFailure.data("\(InputFile.displayName(selections)): \(error)")
            }
        }
        // Resolution only: the tool never sends events, so it opens no network client.
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        do {
            try client.initialize(config: OptimizationConfig(clientId: "optimization-cli"))
        } catch {
            throw CLIFailure.software("cannot start the optimization engine: \(error)")
        }
        defer { client.destroy() }
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selected ?? .empty)
        do {
            let value = resolved.jsonValue
            print(pretty ? try value.prettyJSONText() : try value.jsonText())
        } catch {
            throw CLIFailure.data("\(entryName): cannot print the result: \(error)")
        }
    }
}
