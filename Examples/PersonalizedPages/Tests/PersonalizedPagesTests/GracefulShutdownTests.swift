import AsyncHTTPClient
import Foundation
import OptimizationTesting
import Testing

/// SIGTERM on the real `personalized-pages` executable, run as a child process: the views queued
/// by a page (far below the batch size, long before the 30 s flush timer) reach the Insights API
/// before the process exits.
@Suite(.hangBound) struct GracefulShutdownTests {
    /// The built `personalized-pages` next to the test bundle (`swift build --build-tests` and
    /// `swift test` build every product into the same folder).
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("personalized-pages")
    }

    @Test func sigtermFlushesQueuedViewsBeforeExit() async throws {
        let executable = Self.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the package first: \(executable.path)")
        try await withLocalAPIServer { server in
            let process = Process()
            process.executableURL = executable
            process.arguments = [
                "--port", "0", "--engines", "1", "--client-id", "sigterm-test",
                "--experience-base-url", server.experienceBaseURL, "--insights-base-url", server.insightsBaseURL,
                "--log-level", "warning", "--visitor-state-key", TestVisitorState.key,
            ]
            let stdout = Pipe()
            process.standardOutput = stdout
            let exited = AsyncStream<Int32>.makeStream()
            process.terminationHandler = { exited.continuation.yield($0.terminationStatus); exited.continuation.finish() }
            try process.run()
            defer { if process.isRunning { process.terminate() } }

            let port = try await Self.listeningPort(stdout.fileHandleForReading)
            try await withHTTPClient { client in
                var visitor = Visitor(baseURL: "http://127.0.0.1:\(port)", client: client, cookies: ["pp_state": TestVisitorState.cookie(consent: true)])
                let page = try await visitor.get("/")
                #expect(page.status == 200)
                #expect(TestVisitorState.open(visitor.cookies["pp_state"])?.profileId != nil)
            }
            #expect(server.insightsEvents.isEmpty, "views are still queued")

            process.terminate()  // SIGTERM
            let status = try await Self.withHangBound { await exited.stream.first { _ in true } }
            #expect(status == 0)
            let views = server.insightsEvents.filter { $0["type"] == "component" }
            #expect(views.count == 3, "every queued view was flushed before exit")
        }
    }

    /// Reads stdout until `listening on http://127.0.0.1:<port>` (60 s hang bound). The pipe is
    /// read by Foundation's readability handler, off the cooperative thread pool.
    static func listeningPort(_ handle: FileHandle) async throws -> Int {
        try await listeningPorts(handle, metrics: false).port
    }

    /// Reads stdout until `listening on http://127.0.0.1:<port>` and, with `metrics`, `metrics on
    /// http://127.0.0.1:<port>` (either order; 60 s hang bound).
    static func listeningPorts(_ handle: FileHandle, metrics: Bool) async throws -> (port: Int, metricsPort: Int?) {
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { continuation.finish() } else { continuation.yield(data) }
        }
        defer { handle.readabilityHandler = nil }
        return try await withHangBound {
            var text = ""
            for await chunk in chunks {
                text += String(decoding: chunk, as: UTF8.self)
                let port = text.firstMatch(of: /listening on http:\/\/127\.0\.0\.1:(\d+)\n/).flatMap { Int($0.1) }
                let metricsPort = text.firstMatch(of: /metrics on http:\/\/127\.0\.0\.1:(\d+)\n/).flatMap { Int($0.1) }
                if let port, !metrics || metricsPort != nil { return (port, metricsPort) }
            }
            throw HarnessError("the app exited before listening; stdout: \(text)")
        }
    }

    /// Runs `body`, failing after 60 s (a hang detector: everything here takes well under 1 s).
    static func withHangBound<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw HarnessError("hang: no answer within 60 s") }
            return value
        }
    }
}
