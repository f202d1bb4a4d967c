import ArgumentParser

/// How a command prints its one JSON result on standard output.
///
/// Contract: `--pretty` (a flag, off by default) indents the JSON over several lines; without it
/// the result is exactly one line. It changes the layout only, never the value printed. Every
/// command that prints JSON takes this group with `@OptionGroup`, so the flag is spelled,
/// defaulted and described alike in each.
struct OutputFormatOptions: ParsableArguments {
    @Flag(name: .long, help: "Indent the output.")
    var pretty = false
}
