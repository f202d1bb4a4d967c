import ArgumentParser
import Foundation
import Optimization

/// `optimization resolve <entry.json | -> [--selections <file>] [--entry-id <id>]`, or live:
/// `optimization resolve --space <id> --entry-id <id> [--profile <id> [--api-version v1 --client-id <id>]]`
struct ResolveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resolve",
        abstract: "Print the entry a visitor would see: the baseline or the selected variant.",
        discussion: """
            The entry file holds one Contentful entry (links already resolved) or a raw Content \
            Delivery API collection response (`items` + `includes.Entry`); the baseline is then \
            `items[0]`, or the item given by --entry-id, and links are resolved from the includes.

            --selections holds an Experience API response (`{"data":{"experiences":[…]}}`, read \
            exactly as a live answer is, following --api-version) or a bare JSON array of selected \
            optimizations (used as given). Without it nothing is selected.

            Live mode (--space, no file): fetches entry --entry-id from the Contentful Delivery API \
            (--preview: the Preview API) with its includes, using the token in \
            CONTENTFUL_ACCESS_TOKEN or the first line of --access-token-file (never printed). \
            --profile <id> fetches that visitor's selections live from the Experience API (a \
            preflight call: nothing is stored) instead of --selections: with API v2 (the default) \
            on the space's routes (v3/spaces/…), with --api-version v1 on the routes of \
            --client-id (v2/organizations/…). --environment names the environment of both APIs.

            Output: one JSON object {"entry": …, "selectedOptimization": …, "isEmptyVariant": true} \
            (the last two only when present). Errors go to stderr as `error: …`; exit codes: \
            64 usage, 65 invalid data, 66 missing input or unknown entry, 69 Contentful or \
            Experience API unreachable or failing, 77 access token rejected.

            Examples:
              optimization resolve Fixtures/entries/hero-optimized.json
              optimization resolve page.json --selections profile-response.json
              curl -s "$CDA/entries?sys.id=4ib0hs&include=10" | optimization resolve - --selections sel.json
              optimization resolve collection.json --entry-id 5XHssysWUDECHzKLzoIsg1 --pretty
              CONTENTFUL_ACCESS_TOKEN=… optimization resolve --space abc123 --entry-id 4ib0hs --profile p-42
              CONTENTFUL_ACCESS_TOKEN=… optimization resolve --space abc123 --entry-id 4ib0hs --profile p-42 --api-version v1 --client-id key_123
            """
    )

    @Argument(help: ArgumentHelp("Entry or CDA collection JSON file; `-` reads standard input. Omit with --space.", valueName: "entry.json"))
    var entryPath: String?

    @Option(name: .long, help: ArgumentHelp("Experience API response or JSON array of selected optimizations.", valueName: "file"))
    var selections: String?

    /// `--entry-id`: the item of a collection file, and in live mode the entry to fetch.
    @OptionGroup var entrySelection: EntrySelectionOptions

    /// `--pretty`.
    @OptionGroup var output: OutputFormatOptions

    @Option(name: .long, help: ArgumentHelp("Live mode: fetch --entry-id from this Contentful space.", valueName: "id"))
    var space: String?

    @Option(name: .long, help: ArgumentHelp("Live mode: the Contentful environment (default master).", valueName: "id"))
    var environment: String?

    @Option(name: .long, help: ArgumentHelp("Live mode: the locale to fetch (default: the space's).", valueName: "code"))
    var locale: String?

    @Flag(name: .long, help: "Live mode: use the Content Preview API (drafts; needs a preview token).")
    var preview = false

    @Option(name: .long, help: ArgumentHelp("Live mode: the Contentful API base URL (default: the public host).", valueName: "url"))
    var cdaBaseURL: String?

    @Option(name: .long, help: ArgumentHelp("Live mode: a file whose first line is the access token (default: $CONTENTFUL_ACCESS_TOKEN).", valueName: "file"))
    var accessTokenFile: String?

    @Option(name: .long, help: ArgumentHelp("Live mode: fetch this visitor's selections from the Experience API (preflight).", valueName: "id"))
    var profile: String?

    @Option(name: .long, help: ArgumentHelp("The Optimization API version of --profile's call or of the answer in --selections: v2 (the space is the tenant) or v1 (live: needs --client-id); default v2.", valueName: "v1|v2"))
    var apiVersion: String = "v2"

    @Option(name: .long, help: ArgumentHelp("With --profile and --api-version v1: the Optimization client id (organization).", valueName: "id"))
    var clientId: String?

    @Option(name: .long, help: ArgumentHelp("With --profile: the Experience API base URL.", valueName: "url"))
    var experienceBaseURL: String?

    @Option(name: .long, help: ArgumentHelp("Live mode: per-request timeout in milliseconds (default 10000).", valueName: "ms"))
    var timeout: Int = 10_000

    func validate() throws {
        if entryPath == "-" && selections == "-" {
            throw ValidationError("the entry and --selections cannot both read standard input")
        }
        guard OptimizationAPIVersion(rawValue: apiVersion) != nil else { throw ValidationError("--api-version must be v1 or v2") }
        if space != nil {
            if entryPath != nil { throw ValidationError("give either an entry file or --space, not both") }
            if entrySelection.entryId == nil { throw ValidationError("--space needs --entry-id") }
            if profile != nil && selections != nil { throw ValidationError("give either --selections or --profile, not both") }
            let version = OptimizationAPIVersion(rawValue: apiVersion) ?? .v2
            if profile != nil && version == .v1 && clientId == nil { throw ValidationError("--profile with --api-version v1 needs --client-id") }
            if clientId != nil && version == .v2 { throw ValidationError("--client-id is for --api-version v1 (in v2 the space is the tenant)") }
            if timeout < 1 { throw ValidationError("--timeout must be at least 1") }
        } else {
            if entryPath == nil { throw ValidationError("missing the entry file (or --space for live mode)") }
            let liveOnly = [
                ("--environment", environment != nil), ("--locale", locale != nil), ("--preview", preview),
                ("--cda-base-url", cdaBaseURL != nil), ("--access-token-file", accessTokenFile != nil),
                ("--profile", profile != nil), ("--client-id", clientId != nil), ("--experience-base-url", experienceBaseURL != nil),
            ]
            if let option = liveOnly.first(where: { $0.1 }) { throw ValidationError("\(option.0) needs --space (live mode)") }
        }
    }

    func run() throws {
        let version = OptimizationAPIVersion(rawValue: apiVersion) ?? .v2
        let client = try OfflineClient.start()
        defer { client.destroy() }
        var selected = try selections.map { path throws(CLIFailure) in
            try SelectionsFile.read(path, apiVersion: version, client: client)
        }
        let entry: ContentfulEntry
        let sourceName: String
        if let space, let entryId = entrySelection.entryId {
            let live = LiveSources(
                space: space, environment: environment ?? "master", locale: locale, preview: preview, cdaBaseURL: cdaBaseURL,
                accessToken: try LiveSources.accessToken(file: accessTokenFile), entryId: entryId, profileId: profile,
                clientId: clientId, apiVersion: version, optimizationEnvironment: environment,
                experienceBaseURL: experienceBaseURL, timeoutMilliseconds: timeout)
            let (fetched, liveSelections) = try BlockingTask.run { () async throws(CLIFailure) -> (ContentfulEntry, SelectedOptimizations?) in
                try await live.fetch()
            }
            entry = fetched
            selected = liveSelections ?? selected
            sourceName = "entry \(entryId)"
        } else {
            let path = entryPath ?? "-"
            entry = try InputFile.decode(path) { try ContentfulEntry(jsonData: $0, entryId: entrySelection.entryId) }
            sourceName = InputFile.displayName(path)
        }
        let resolved = client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selected ?? .empty)
        try OfflineClient.printJSON(resolved.jsonValue, pretty: output.pretty, source: sourceName)
    }
}
