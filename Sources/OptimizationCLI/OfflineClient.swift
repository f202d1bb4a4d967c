import Foundation
import HostPlatform
import Optimization

/// The client the CLI commands run on: initialized, with no network transport and no storage
/// (the tool never sends events or keeps visitor state).
enum OfflineClient {
    /// - Throws: ``CLIFailure`` with exit code 70 when the engine cannot start.
    static func start() throws(CLIFailure) -> OptimizationClient {
        let client = OptimizationClient(environment: .init(transport: UnconfiguredFetchTransport(), storage: .disabled))
        do {
            try client.initialize(config: OptimizationConfig(clientId: "optimization-cli"))
        } catch {
            throw .software("cannot start the optimization engine: \(error)")
        }
        return client
    }

    /// Prints `value` as one line of JSON (or indented), naming `source` if it cannot be printed.
    static func printJSON(_ value: JSONValue, pretty: Bool, source: String) throws(CLIFailure) {
        do {
            print(pretty ? try value.prettyJSONText() : try value.jsonText())
        } catch {
            throw .data("\(source): cannot print the result: \(error)")
        }
    }
}
