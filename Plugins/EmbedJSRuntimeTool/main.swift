// Build tool, two commands:
//   `EmbedJSRuntimeTool <JSRuntime dir> <output.swift>`                   the embedded scripts;
//   `EmbedJSRuntimeTool --contract <bridge-contract.json> <output.swift>`  the bridge contract.
//
// The contract: reads `JSRuntime/bridge-contract.json` strictly (BridgeContractSource.swift) and
// writes the lists of `BridgeContract` (one enum per group of the file: its `BridgeFunction` or
// `NativeCallback` constants, documented with the file's text, and `all`), so that the file is
// the one place the Swift/JavaScript contract is written. Exits non-zero with a message on stderr
// when the file cannot be read or breaks its shape.
//
// The scripts: reads `<JSRuntime dir>/manifest.json` (the roles: `{"core": [...], "client": [...],
// "service": [...]}`, script paths relative to that folder, order irrelevant), computes the load
// order of each engine kind with `<JSRuntime dir>/load-order.js` (run in JavaScriptCore: the same
// code the Node suite runs, sorting the files by their `__optimization.declare` calls) and writes
// a Swift file declaring, each an array of `EmbeddedScript` in load order:
// `EmbeddedJSRuntime.clientScripts` (the client files and the core files they need),
// `serviceScripts` (the same for the service files), `scripts` (every role) and, from `<JSRuntime dir>/benchmarks/manifest.json`,
// `benchmarkScripts` (scripts only a benchmark loads, never a production engine). Each source is
// embedded once, as a raw string literal. Exits non-zero with a message on stderr when a manifest
// or a script cannot be read, or when load-order.js refuses the declarations (a name no file of a
// role provides, a name two files provide, a cycle); the message is load-order.js's.
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("EmbedJSRuntimeTool: error: \(message)\n".utf8))
    exit(1)
}

/// Writes `text` to `url`, creating its folder.
func write(_ text: String, to url: URL) {
    do {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url, options: .atomic)
    } catch {
        fail("cannot write \(url.path): \(error)")
    }
}

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--contract" {
    let contractFile = URL(fileURLWithPath: arguments[2])
    guard let json = try? Data(contentsOf: contractFile) else { fail("cannot read \(contractFile.path)") }
    do {
        write(try BridgeContractSource(json: json).swiftSource(), to: URL(fileURLWithPath: arguments[3]))
    } catch {
        fail("\(contractFile.path): \(error.message)")
    }
    exit(0)
}
guard arguments.count == 3 else {
    fail("usage: EmbedJSRuntimeTool <JSRuntime dir> <output.swift> | --contract <bridge-contract.json> <output.swift>")
}
let runtimeDirectory = URL(fileURLWithPath: arguments[1], isDirectory: true)
let outputFile = URL(fileURLWithPath: arguments[2])

func text(_ relativePath: String) -> String {
    guard !relativePath.hasPrefix("/"), !relativePath.split(separator: "/").contains("..") else {
        fail("manifest path \(relativePath) must stay inside JSRuntime/")
    }
    let url = runtimeDirectory.appendingPathComponent(relativePath)
    guard let data = try? Data(contentsOf: url), let source = String(data: data, encoding: .utf8) else {
        fail("cannot read \(url.path) as UTF-8")
    }
    return source.replacingOccurrences(of: "\r\n", with: "\n")
}

let manifestText = text("manifest.json")
guard let roles = try? JSONDecoder().decode([String: [String]].self, from: Data(manifestText.utf8)) else {
    fail("\(runtimeDirectory.path)/manifest.json must be a JSON object of roles, each an array of script paths")
}
var sources: [String: String] = [:]
for path in roles.values.joined() { sources[path] = text(path) }
let order: LoadOrder
do {
    order = try LoadOrder(script: text("load-order.js"), manifest: manifestText, sources: sources)
} catch {
    fail("JSRuntime/manifest.json: \(error.message)")
}
guard let benchmarkPaths = try? JSONDecoder().decode([String].self, from: Data(text("benchmarks/manifest.json").utf8)) else {
    fail("\(runtimeDirectory.path)/benchmarks/manifest.json must be a JSON array of script paths")
}
for path in benchmarkPaths { sources["benchmarks/" + path] = text("benchmarks/" + path) }

/// The shortest raw-string delimiter (`#` count) that cannot occur inside `source`.
func rawDelimiter(for source: String) -> String {
    var longest = 0
    var run = 0
    for character in source.unicodeScalars {
        run = character == "#" ? run + 1 : 0
        longest = max(longest, run)
    }
    return String(repeating: "#", count: longest + 1)
}

// One constant per script, named by its position in `all` (then the benchmark scripts).
let embedded = order.all + benchmarkPaths.map { "benchmarks/" + $0 }
let constantOf = Dictionary(uniqueKeysWithValues: embedded.enumerated().map { index, path in (path, "script\(index)") })
var swift = "// Generated by EmbedJSRuntimeTool from JSRuntime/manifest.json (ordered by JSRuntime/load-order.js)\n"
    + "// and JSRuntime/benchmarks/manifest.json. Do not edit.\n\n"
    + "extension EmbeddedJSRuntime {\n"
for (index, path) in embedded.enumerated() {
    let name = "script\(index)"
    let source = sources[path] ?? ""
    let hashes = rawDelimiter(for: source)
    swift += "    private static let \(name) = EmbeddedScript(path: \"\(path)\", source: \(hashes)\"\"\"\n"
    swift += source
    swift += source.hasSuffix("\n") ? "" : "\n"
    swift += "\"\"\"\(hashes))\n"
}

/// `package static let <name>: [EmbeddedScript]`, the constants of `paths` in that order.
func list(_ name: String, _ paths: [String], constants: [String: String]) -> String {
    "    package static let \(name): [EmbeddedScript] = [\(paths.compactMap { constants[$0] }.joined(separator: ", "))]\n"
}
swift += list("clientScripts", order.client, constants: constantOf)
swift += list("serviceScripts", order.service, constants: constantOf)
swift += list("scripts", order.all, constants: constantOf)
swift += list("benchmarkScripts", benchmarkPaths.map { "benchmarks/" + $0 }, constants: constantOf)
swift += "}\n"

write(swift, to: outputFile)
