import Dispatch
import Foundation
import JavaScriptHost
import Logging
import Optimization

/// The durable outbox's figures for `optimization bench` (the EventOutbox article “The durable outbox”, "Measurements"):
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

    private static let logger: Logger = {
        var logger = Logger(label: "optimization.bench.outbox")
        logger.logLevel = .warning  // keep the bench's output one JSON object
        return logger
    }()

    private static func configuration(_ durability: OutboxDurability) -> OutboxConfiguration {
        OutboxConfiguration(durability: durability, maxEvents: 1_000_000, maxBytes: 1 << 30)
    }

    private static func event(_ index: Int) -> OutboxEvent {
        let messageId = UUID().uuidString.lowercased()
        let json = """
            {"type":"track","event":"cta_clicked","properties":{"plan":"pro","position":\(index)},\
            "messageId":"\(messageId)","channel":"server","anonymousId":"4b8e5f0c-51c4-4c6e-9a53-6b0b1c1d2e3f",\
            "originalTimestamp":"2026-01-01T00:00:00.000Z","sentAt":"2026-01-01T00:00:00.000Z",\
            "timestamp":"2026-01-01T00:00:00.000Z","context":{"app":{"name":"kiosk","version":"1.4.2"},\
            "gdpr":{"isConsentGiven":true},"library":{"name":"swift-optimization-linux","version":"0.1.0"},\
            "locale":"en-US","page":{"path":"/","query":{},"referrer":"","search":"","url":"https://example.com/"},\
            "userAgent":"swift-optimization-linux"}}
            """
        return OutboxEvent(queue: index % 3 == 0 ? .insights : .experience, messageId: messageId, profileId: "profile-1",
                           consent: true, payload: Array(json.utf8))
    }

    private static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("optimization-bench-outbox-\(UUID().uuidString)")
    }

    /// Appends per second (events prepared beforehand, so only `append` is timed).
    private static func appendRate(_ durability: OutboxDurability, count: Int) -> Double? {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let outbox = try? DurableOutbox(directory: directory, configuration: configuration(durability), logger: logger) else {
            return nil
        }
        defer { outbox.close() }
        let events = (0..<count).map(event)
        let start = DispatchTime.now().uptimeNanoseconds
        for event in events {
            guard (try? outbox.append(event)) != nil else { return nil }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(count) / seconds
    }

    /// Median time to open a directory holding `events` undelivered events.
    private static func recoveryMilliseconds(events: Int) -> Double? {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let outbox = try DurableOutbox(directory: directory, configuration: configuration(.writeOnly), logger: logger)
            try outbox.append(contentsOf: (0..<events).map(event))
            outbox.close()
            var samples: [Double] = []
            for _ in 0..<5 {
                let start = DispatchTime.now().uptimeNanoseconds
                let reopened = try DurableOutbox(directory: directory, configuration: configuration(.default), logger: logger)
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
