import ArgumentParser

/// Which entry of an input document a command works on.
///
/// Contract: `--entry-id <id>` (optional, no default) is the `sys.id` of the entry to use from a
/// Content Delivery API collection response (`items` + `includes.Entry`); without it the first
/// item is used. Given with a single entry, it must be that entry's `sys.id`. An id that names no
/// entry of the input file fails with exit code 65. A command may give the option uses of its
/// own (`resolve --space` fetches this entry live) and checks them in its own `validate()`.
/// Every command that reads an entry file takes this group with `@OptionGroup`, so the option is
/// spelled, defaulted and described alike in each.
struct EntrySelectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("For a collection response: the sys.id of the entry.", valueName: "id"))
    var entryId: String?
}
