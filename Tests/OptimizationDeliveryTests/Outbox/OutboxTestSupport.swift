import OptimizationTestSupport
import Foundation
import JavaScriptHost
import Logging
@testable import OptimizationDelivery
import Synchronization

/// A temporary outbox directory (removed by ``remove()``) and helpers shared by the outbox tests.
struct OutboxFixture {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
    var directory: URL { root.appendingPathComponent("outbox") }
    let logger = Logger(label: "outbox-test")

    func open(_ configuration: OutboxConfiguration = .init(), clock: any HostClock = ManualClock()) throws -> DurableOutbox {
        try DurableOutbox(directory: directory, configuration: configuration, clock: clock, logger: logger)
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }

    /// Names in the directory, sorted.
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    func segmentFiles() -> [String] {
        files().filter { $0.hasSuffix(".log") }
    }

    func url(_ name: String) -> URL {
        directory.appendingPathComponent(name)
    }

    /// An event whose JSON carries its own messageId (so a recovered payload can be checked).
    static func event(
        _ messageId: String, queue: EventQueueKind = .experience, profile: String? = nil, consent: Bool = true,
        acceptedAt: Double? = nil, padding: Int = 0
    ) -> OutboxEvent {
        let json = #"{"messageId":"\#(messageId)","type":"track","pad":"\#(String(repeating: "p", count: padding))"}"#
        return OutboxEvent(
            queue: queue, messageId: messageId, profileId: profile, consent: consent, acceptedAt: acceptedAt,
            payload: Array(json.utf8))
    }
}

/// Collects drop reports given to ``OutboxConfiguration/onDrop``.
final class DropCollector: Sendable {
    private let reports = Mutex<[OutboxDropReport]>([])
    var all: [OutboxDropReport] { reports.withLock { $0 } }
    var callback: @Sendable (OutboxDropReport) -> Void { { [self] report in reports.withLock { $0.append(report) } } }
}

/// A seeded generator (SplitMix64), so a workload is the same in every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
