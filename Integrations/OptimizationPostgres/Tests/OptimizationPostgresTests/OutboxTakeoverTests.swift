import Optimization
import Foundation
import OptimizationPostgres
import PostgresTestServer
import Testing

/// A replica killed with SIGKILL while it holds claimed, partly delivered events: another replica
/// delivers every event after the lease expires, at least once and in order per profile. 20
/// rounds with seeds, one real helper process each.
@Suite struct OutboxTakeoverTests {
    static var helper: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("outbox-crash-helper")
    }

    @Test func aKilledReplicasEventsAreDeliveredByAnotherInOrderPerProfile() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.helper.path), "build the package first: \(Self.helper.path)")
        try await withPostgresTestServer { server in
            for seed in 0..<20 {
                try await round(seed: UInt64(seed), server: server)
            }
        }
    }

    func round(seed: UInt64, server: PostgresTestServer) async throws {
        let schema = "takeover_\(seed)"
        let events = 12 + Int(seed % 7)
        let process = Process()
        process.executableURL = Self.helper
        process.arguments = [server.connectionString(), schema, "\(seed)", "\(events)", "3", "400"]
        let stdout = Pipe()
        process.standardOutput = stdout
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let lines = try await Self.readLines(stdout.fileHandleForReading, until: "waiting")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(lines.first == "appended \(events)", "seed \(seed)")
        let deliveredByA = lines.compactMap { $0.hasPrefix("delivered ") ? UInt64($0.dropFirst(10)) : nil }

        try await withDatabases(server, count: 1, schema: schema) { databases in
            let b = PostgresOutboxStore(database: databases[0], configuration: .init(leaseDuration: .seconds(30)))
            var deliveredByB: [OutboxRecord] = []
            try await waitUntil("B delivered everything (seed \(seed))") {
                let claim = try await b.claim(queue: .insights, limit: 4)
                deliveredByB += claim
                try await b.acknowledge(claim.map(\.sequence))
                return try await b.depth() == 0
            }
            // Every event at least once; per profile, first deliveries in append order, and B's
            // deliveries of a profile in order.
            let all = deliveredByB.map(\.sequence)
            #expect(Set(all).count == events, "seed \(seed): B delivered \(Set(all).count) distinct of \(events)")
            #expect(Set(deliveredByA).isSubset(of: Set(all)), "seed \(seed): A's unacknowledged deliveries are sent again")
            for profile in Set(deliveredByB.compactMap(\.profileId)) {
                let sequences = deliveredByB.filter { $0.profileId == profile }.map(\.sequence)
                #expect(sequences == sequences.sorted(), "seed \(seed) profile \(profile)")
            }
            let expectedIds = (0..<events).map { "m-\(seed)-\($0)" }
            #expect(Set(deliveredByB.map(\.messageId)) == Set(expectedIds), "seed \(seed)")
        }
    }

    /// Lines of the helper's stdout until `last` (60 s hang bound).
    static func readLines(_ handle: FileHandle, until last: String) async throws -> [String] {
        let (chunks, continuation) = AsyncStream<Data>.makeStream()
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { continuation.finish() } else { continuation.yield(data) }
        }
        defer { handle.readabilityHandler = nil }
        return try await withThrowingTaskGroup(of: [String]?.self) { group in
            group.addTask {
                var text = ""
                for await chunk in chunks {
                    text += String(decoding: chunk, as: UTF8.self)
                    let lines = text.split(separator: "\n").map(String.init)
                    if lines.contains(last) { return lines }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let lines = first else { throw WaitTimedOut(description: "the helper did not say \(last)") }
            return lines
        }
    }
}
