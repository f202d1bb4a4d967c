import BenchmarkFixtures
import Dispatch
import Foundation
import JavaScriptHost
import Logging
import Optimization

/// The durable outbox's figures for `optimization bench` (the OptimizationDelivery article “The durable outbox”, "Measurements"):
///
/// - `outbox_append_per_s`: events appended per second by one thread with the default durability
///   (`OutboxDurability/default`), a realistic 700-byte track event each.
/// - `outbox_append_write_only_per_s` / `outbox_append_sync_every_per_s`: the same with the
///   other two policies (the trade-off behind the default).
/// - `outbox_recover_10k_ms`: opening a directory that holds 10,000 undelivered events (median
///   of 5 opens).
///
/// Works in a temporary directory, removed afterwards. Never throws: a failure yields no figures.
enum OutboxBench {
    static func figures(appends: Int = 20_000, syncedAppends: Int = 300) -> [(String, Double)] {
        var figures: [(String, Double)] = []
        guard let perSecond = appendRate(.default, count: appends),
              let writeOnly = appendRate(.writeOnly, count: appends),
              let syncEvery = appendRate(.syncEveryAppend, count: syncedAppends),
              let recover = recoveryMilliseconds(events: 10_000)
        else { return figures }
        figures.append(("outbox_append_per_s", perSecond))
        figures.append(("outbox_append_write_only_per_s", writeOnly))
        figures.append(("outbox_append_sync_every_per_s", syncEvery))
        figures.append(("outbox_recover_10k_ms", recover))
        return figures
    }

    private static let logger = BenchmarkOperations.quietLogger  // keep the bench's output one JSON object

    /// Appends per second (events prepared beforehand, so only `append` is timed).
    private static func appendRate(_ durability: OutboxDurability, count: Int) -> Double? {
        let directory = BenchmarkOperations.temporaryOutboxDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let outbox = try? DurableOutbox(directory: directory, configuration: BenchmarkOperations.outboxConfiguration(durability), logger: logger) else {
            return nil
        }
        defer { outbox.close() }
        let events = (0..<count).map(BenchmarkOperations.outboxEvent)
        let start = DispatchTime.now().uptimeNanoseconds
        for event in events {
            guard (try? outbox.append(event)) != nil else { return nil }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(count) / seconds
    }

    /// Median time to open a directory holding `events` undelivered events.
    private static func recoveryMilliseconds(events: Int) -> Double? {
        let directory = BenchmarkOperations.temporaryOutboxDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let outbox = try DurableOutbox(directory: directory, configuration: BenchmarkOperations.outboxConfiguration(.writeOnly), logger: logger)
            try outbox.append(contentsOf: (0..<events).map(BenchmarkOperations.outboxEvent))
            outbox.close()
            var samples: [Double] = []
            for _ in 0..<5 {
                let start = DispatchTime.now().uptimeNanoseconds
                let reopened = try DurableOutbox(directory: directory, configuration: BenchmarkOperations.outboxConfiguration(.default), logger: logger)
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
                guard reopened.recovery.records.count == events else { return nil }
                reopened.close()
                samples.append(elapsed)
            }
            return samples.sorted()[samples.count / 2]
        } catch {
            return nil
        }
    }
}
