import Foundation
import PackagePlugin

/// Embeds the shared JavaScript (`JSRuntime/`: the roles of `manifest.json`, in the load order
/// `load-order.js` computes from the files' declarations) into the target as Swift source, so the
/// `optimization` binary and every library product carry their JavaScript with them and need no
/// resource bundle at run time.
@main
struct EmbedJSRuntimePlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let runtime = context.package.directoryURL.appending(path: "JSRuntime")
        let manifest = runtime.appending(path: "manifest.json")
        let roles = try JSONDecoder().decode([String: [String]].self, from: Data(contentsOf: manifest))
        let scripts = roles.values.joined().sorted()
        let benchmarkManifest = runtime.appending(path: "benchmarks/manifest.json")
        let benchmarkScripts = try JSONDecoder().decode([String].self, from: Data(contentsOf: benchmarkManifest))
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedJSRuntimeScripts.swift")
        return [
            .buildCommand(
                displayName: "Embedding JSRuntime (\(scripts.count) scripts)",
                executable: try context.tool(named: "EmbedJSRuntimeTool").url,
                arguments: [runtime.path, output.path],
                inputFiles: [manifest, benchmarkManifest, runtime.appending(path: "load-order.js")]
                    + scripts.map { runtime.appending(path: $0) }
                    + benchmarkScripts.map { runtime.appending(path: "benchmarks/" + $0) },
                outputFiles: [output]
            )
        ]
    }
}
