import Foundation
import PackagePlugin

/// Embeds the shared JavaScript (`JSRuntime/`: the roles of `manifest.json`, in the load order
/// `load-order.js` computes from the files' declarations) into the target as Swift source, so the
/// `optimization` binary and every library product carry their JavaScript with them and need no
/// resource bundle at run time; and generates the lists of `BridgeContract` from
/// `JSRuntime/bridge-contract.json`, the one place the Swift/JavaScript contract is written.
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
        let contract = runtime.appending(path: "bridge-contract.json")
        let contractOutput = context.pluginWorkDirectoryURL.appending(path: "GeneratedBridgeContract.swift")
        let tool = try context.tool(named: "EmbedJSRuntimeTool").url
        return [
            .buildCommand(
                displayName: "Embedding JSRuntime (\(scripts.count) scripts)",
                executable: tool,
                arguments: [runtime.path, output.path],
                inputFiles: [manifest, benchmarkManifest, runtime.appending(path: "load-order.js")]
                    + scripts.map { runtime.appending(path: $0) }
                    + benchmarkScripts.map { runtime.appending(path: "benchmarks/" + $0) },
                outputFiles: [output]
            ),
            .buildCommand(
                displayName: "Generating BridgeContract from JSRuntime/bridge-contract.json",
                executable: tool,
                arguments: ["--contract", contract.path, contractOutput.path],
                inputFiles: [contract],
                outputFiles: [contractOutput]
            ),
        ]
    }
}
