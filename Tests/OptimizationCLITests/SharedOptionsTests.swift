import ArgumentParser
import Testing
@testable import OptimizationCLI

/// The options that several `optimization` commands take come from one `ParsableArguments` group
/// each. Parsed through every command, the same arguments must give the same values (the same
/// spelling, the same default) and every command must show the same help line for them; a command
/// that declares such an option itself instead of taking the group fails here.
@Suite("optimization shared options")
struct SharedOptionsTests {
    /// A subcommand and the least it needs to parse.
    struct Command {
        var type: any ParsableCommand.Type
        var required: [String]
        var name: String { type.configuration.commandName ?? "" }
    }

    static var commands: [Command] {
        [
            Command(type: ResolveCommand.self, required: ["entry.json"]),
            Command(type: MergeTagsCommand.self, required: ["entry.json", "--profile", "profile.json"]),
        ]
    }

    /// A group: the options it declares, and argument lists with the values they must parse to.
    struct Group<Options: ParsableArguments> {
        var names: [String]
        var samples: [(arguments: [String], values: [String?])]
        var values: (Options) -> [String?]
    }

    static var output: Group<OutputFormatOptions> {
        Group(
            names: ["--pretty"],
            samples: [([], ["false"]), (["--pretty"], ["true"])],
            values: { [String($0.pretty)] })
    }

    static var entrySelection: Group<EntrySelectionOptions> {
        Group(
            names: ["--entry-id"],
            samples: [([], [nil]), (["--entry-id", "5XHssysWUDECHzKLzoIsg1"], ["5XHssysWUDECHzKLzoIsg1"])],
            values: { [$0.entryId] })
    }

    /// The group of type `Options` that `command` holds, found by reflection; nil when it has none.
    static func group<Options: ParsableArguments>(_: Options.Type, in command: any ParsableCommand) -> Options? {
        Mirror(reflecting: command).children.lazy.compactMap { ($0.value as? OptionGroup<Options>)?.wrappedValue }.first
    }

    /// The help line of option `name` in `help`, unwrapped and with its spacing collapsed.
    static func helpLine(_ name: String, in help: String) -> String? {
        help.split(separator: "\n")
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
            .first { $0 == name || $0.hasPrefix(name + " ") }
    }

    static func help(_ command: Command) -> String {
        OptimizationCommand.helpMessage(for: command.type, columns: 10_000)
    }

    /// Every subcommand is listed here, so that a new one is checked too.
    @Test func everySubcommandIsChecked() {
        let subcommands = OptimizationCommand.configuration.subcommands.map { $0.configuration.commandName ?? "" }
        #expect(subcommands.sorted() == Self.commands.map(\.name).sorted())
    }

    @Test func theOutputFormatIsParsedAlikeByEveryCommand() throws {
        try check(Self.output)
    }

    @Test func theEntrySelectionIsParsedAlikeByEveryCommand() throws {
        try check(Self.entrySelection)
    }

    private func check<Options: ParsableArguments>(_ group: Group<Options>) throws {
        let groupHelp = Options.helpMessage(columns: 10_000)
        var takers: [String] = []
        for command in Self.commands {
            let parsed = try OptimizationCommand.parseAsRoot([command.name] + command.required)
            let help = Self.help(command)
            let shows = group.names.contains { Self.helpLine($0, in: help) != nil }
            let takesGroup = Self.group(Options.self, in: parsed) != nil
            // An option of the group that a command declares itself would show without the group.
            #expect(shows == takesGroup, "\(command.name): shows \(group.names): \(shows), takes \(Options.self): \(takesGroup)")
            guard takesGroup else { continue }
            takers.append(command.name)
            for name in group.names {
                #expect(Self.helpLine(name, in: help) == Self.helpLine(name, in: groupHelp), "\(command.name) \(name)")
            }
            for sample in group.samples {
                #expect(group.values(try Options.parse(sample.arguments)) == sample.values, "\(Options.self) \(sample.arguments)")
                let reparsed = try OptimizationCommand.parseAsRoot([command.name] + command.required + sample.arguments)
                let options = try #require(Self.group(Options.self, in: reparsed))
                #expect(group.values(options) == sample.values, "\(command.name) \(sample.arguments)")
            }
        }
        #expect(takers.count >= 2, "\(Options.self) is shared: \(takers)")
    }
}
