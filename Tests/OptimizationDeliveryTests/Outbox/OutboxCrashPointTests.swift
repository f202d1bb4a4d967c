import Foundation
import JavaScriptHost
import Logging
@testable import OptimizationDelivery
import Synchronization
import OptimizationTestSupport
import Testing

/// Exhaustive crash points: each scripted workload runs once on a ``FaultInjectingFileSystem``
/// that records every mutation; then, for every prefix of that trace (a crash right after step
/// k), every disk a crash could leave there is recovered by a new ``DurableOutbox`` and checked:
///
/// - opening never throws; a process crash leaves no recovery issue, a power loss at most torn
///   tails and segments without their `.acks` file (never a "missing segment");
/// - every recovered record (or record dropped while opening, reported) is one that was
///   appended, field for field; no `messageId` twice; append order holds;
/// - every event the policy promised by then is recovered (process crash: every append that
///   returned; power loss: `syncEveryAppend` once its append returned, `syncInterval` once a sync
///   tick passed after it; `writeOnly` promises nothing on power loss, so only the process crash
///   is checked), unless an acknowledgement, a drop, a purge or an erasure of it had started;
/// - an event purged or erased never comes back once `purge()` / `eraseProfile(_:)` returned.
///
/// Deterministic (seeded workloads, ``ManualClock``).
@Suite("DurableOutbox crash points")
struct OutboxCrashPointTests {
    enum Workload: String, CaseIterable, Sendable {
        case appendsAcknowledgementsRolloverCompaction
        case expiryBoundsAcknowledgements
        case purgeAndErasureInterleaved
    }

    static let directory = "/outbox"
    static let interval = 100

    static var cases: [(Workload, OutboxDurability)] {
        Workload.allCases.flatMap { workload in
            [OutboxDurability.syncEveryAppend, .syncInterval(milliseconds: interval), .writeOnly].map { (workload, $0) }
        }
    }

    @Test(arguments: cases)
    func everyCrashPointRecoversWhatWasPromised(_ workload: Workload, _ durability: OutboxDurability) throws {
        let run = try CrashPointRun(workload: workload, durability: durability)
        try run.record()
        let result = run.checkEveryCrashPoint()
        // The workload reached what it exists for.
        let fileSystem = run.fileSystem
        #expect(fileSystem.stepCount(startingWith: "unlink segment-") > 0, "no segment was deleted")
        switch workload {
        case .appendsAcknowledgementsRolloverCompaction:
            #expect(fileSystem.stepCount(startingWith: "rename") >= 2, "no segment was compacted")
        case .expiryBoundsAcknowledgements:
            #expect(run.ledger.dropReasons == [.expired, .maxEvents, .maxBytes])
        case .purgeAndErasureInterleaved:
            #expect(fileSystem.stepCount(startingWith: "rename") >= 2, "no segment was rewritten by an erasure")
        }
        if durability != .writeOnly { #expect(fileSystem.stepCount(startingWith: "fsync directory") > 0) }
        print("outbox crash points (\(workload.rawValue), \(durability)): \(result.checked) states over \(result.steps) operations (\(result.distinct) distinct disks recovered)")
        #expect(result.checked > result.steps)
        for failure in result.failures.prefix(10) { Issue.record(Comment(rawValue: failure)) }
        #expect(result.failures.isEmpty, "\(result.failures.count) violations")
    }
}

/// What the workload did, by `messageId`, in trace steps (snapshot indexes of the file system).
final class CrashPointLedger: Sendable {
    struct Entry: Sendable {
        var record: OutboxRecord
        /// The append returned after this step.
        var returnedAt: Int
        /// The policy promised it durable (power loss) after this step.
        var promisedAt: Int?
        /// An acknowledgement, drop, purge or erasure of it started at this step.
        var releasedFrom: Int?
        /// A purge or erasure of it returned after this step.
        var forbiddenFrom: Int?
    }

    private struct State: Sendable {
        var entries: [String: Entry] = [:]
        var stepStart = 0
        var dropReasons: Set<OutboxDropReport.Reason> = []
    }

    private let state = Mutex(State())

    var entries: [String: Entry] { state.withLock { $0.entries } }
    var dropReasons: Set<OutboxDropReport.Reason> { state.withLock { $0.dropReasons } }

    /// A drop report of the recorded run: its events are released from the current step.
    func dropped(_ report: OutboxDropReport) {
        state.withLock { _ = $0.dropReasons.insert(report.reason) }
        released(report.records.map(\.messageId))
    }

    func beginStep(_ step: Int) { state.withLock { $0.stepStart = step } }

    func appended(_ records: [OutboxRecord], returnedAt step: Int, promised: Bool) {
        state.withLock { state in
            for record in records where state.entries[record.messageId] == nil {
                state.entries[record.messageId] = Entry(record: record, returnedAt: step, promisedAt: promised ? step : nil)
            }
        }
    }

    /// Released from the start of the current step (the drop callback runs inside it).
    func released(_ messageIds: some Sequence<String>) {
        state.withLock { state in
            for id in messageIds where state.entries[id]?.releasedFrom == nil { state.entries[id]?.releasedFrom = state.stepStart }
        }
    }

    func forbidden(_ messageIds: some Sequence<String>, from step: Int) {
        state.withLock { state in
            for id in messageIds where state.entries[id]?.forbiddenFrom == nil { state.entries[id]?.forbiddenFrom = step }
        }
    }

    /// Every returned, not yet promised event is promised after `step` (a sync tick).
    func promiseAll(at step: Int) {
        state.withLock { state in
            for id in state.entries.keys where state.entries[id]!.promisedAt == nil { state.entries[id]!.promisedAt = step }
        }
    }
}

/// One workload under one policy: the recorded run, then every crash point's check.
final class CrashPointRun: Sendable {
    let workload: OutboxCrashPointTests.Workload
    let durability: OutboxDurability
    let clock = ManualClock()
    let fileSystem: FaultInjectingFileSystem
    let ledger = CrashPointLedger()
    let logger = Logger(label: "outbox-crash-points", factory: { _ in SwiftLogNoOpLogHandler() })

    init(workload: OutboxCrashPointTests.Workload, durability: OutboxDurability) throws {
        self.workload = workload
        self.durability = durability
        fileSystem = FaultInjectingFileSystem(directory: OutboxCrashPointTests.directory, clock: clock)
    }

    var configuration: OutboxConfiguration {
        switch workload {
        case .appendsAcknowledgementsRolloverCompaction:
            return OutboxConfiguration(durability: durability, segmentBytes: 700)
        case .expiryBoundsAcknowledgements:
            return OutboxConfiguration(durability: durability, maxEvents: 6, maxBytes: 900, timeToLive: .milliseconds(1_000), segmentBytes: 600)
        case .purgeAndErasureInterleaved:
            return OutboxConfiguration(durability: durability, segmentBytes: 500)
        }
    }

    static let compactionMinimumBytes = 256

    func open(_ configuration: OutboxConfiguration, fileSystem: FaultInjectingFileSystem, clock: ManualClock) throws(OutboxError) -> DurableOutbox {
        try DurableOutbox(
            directory: URL(fileURLWithPath: OutboxCrashPointTests.directory), configuration: configuration, clock: clock,
            logger: logger, fileSystem: fileSystem, compactionMinimumBytes: Self.compactionMinimumBytes)
    }

    // MARK: Recording

    func record() throws {
        fileSystem.startRecording()
        var configuration = self.configuration
        let ledger = self.ledger
        configuration.onDrop = { report in ledger.dropped(report) }
        let outbox = try open(configuration, fileSystem: fileSystem, clock: clock)
        var driver = Driver(run: self, outbox: outbox)
        switch workload {
        case .appendsAcknowledgementsRolloverCompaction: try driver.appendsAcknowledgementsRolloverCompaction()
        case .expiryBoundsAcknowledgements: try driver.expiryBoundsAcknowledgements()
        case .purgeAndErasureInterleaved: try driver.purgeAndErasureInterleaved()
        }
        driver.step { outbox.close() }
        if durability != .writeOnly { ledger.promiseAll(at: fileSystem.stepCount - 1) }
    }

    struct Driver {
        let run: CrashPointRun
        let outbox: DurableOutbox
        var random = SplitMix64(state: 0x0B0C_5EED)
        var next = 0
        var fileSystem: FaultInjectingFileSystem { run.fileSystem }
        var ledger: CrashPointLedger { run.ledger }

        /// Runs one call of the workload as one ledger step.
        @discardableResult
        func step<T>(_ body: () throws -> T) rethrows -> T {
            ledger.beginStep(fileSystem.stepCount)
            return try body()
        }

        mutating func event(profile: String? = nil, acceptedAt: Double? = nil, padding: Int? = nil) -> OutboxEvent {
            next += 1
            let queue: EventQueueKind = Bool.random(using: &random) ? .experience : .insights
            return OutboxFixture.event(
                "m\(next)", queue: queue, profile: profile, consent: next % 4 != 0, acceptedAt: acceptedAt,
                padding: padding ?? Int.random(in: 0...80, using: &random))
        }

        mutating func append(_ count: Int, profile: String? = nil, acceptedAt: Double? = nil, padding: Int? = nil) throws {
            var events: [OutboxEvent] = []
            for _ in 0..<count { events.append(event(profile: profile, acceptedAt: acceptedAt, padding: padding)) }
            let records = try step { try count == 1 ? [outbox.append(events[0])] : outbox.append(contentsOf: events) }
            ledger.appended(records, returnedAt: fileSystem.stepCount - 1, promised: run.durability == .syncEveryAppend)
        }

        /// Acknowledges `messageIds` (released from the start of the call).
        func acknowledge(_ messageIds: [String]) {
            step {
                ledger.released(messageIds)
                outbox.acknowledge(messageIds: messageIds)
            }
        }

        /// The oldest `count` pending events of a random queue, as a 2xx would.
        mutating func acknowledgeOldest(_ count: Int) {
            let queue: EventQueueKind = Bool.random(using: &random) ? .experience : .insights
            acknowledge(outbox.pendingRecords(queue: queue).prefix(count).map(\.messageId))
        }

        /// A random share of the pending events (leaves sealed segments mostly done: compaction).
        mutating func acknowledgeRandom(keepingOneIn keep: Int) {
            let pending = outbox.pendingRecords()
            var chosen: [String] = []
            for record in pending.dropLast(2) where Int.random(in: 0..<keep, using: &random) != 0 { chosen.append(record.messageId) }
            acknowledge(chosen)
        }

        /// Moves the clock; a whole sync interval makes every returned event durable (syncInterval).
        func advance(_ milliseconds: Double) {
            step { run.clock.advance(by: .milliseconds(milliseconds)) }
            if case .syncInterval(let interval) = run.durability, milliseconds >= Double(interval) {
                ledger.promiseAll(at: fileSystem.stepCount - 1)
            }
        }

        func purge() throws {
            let ids = Array(ledger.entries.keys)
            try step {
                ledger.released(ids)
                try outbox.purge()
            }
            ledger.forbidden(ids, from: fileSystem.stepCount - 1)
        }

        func erase(_ profile: String) throws {
            let ids = ledger.entries.values.filter { $0.record.profileId == profile }.map(\.record.messageId)
            try step {
                ledger.released(ids)
                try outbox.eraseProfile(profile)
            }
            ledger.forbidden(ids, from: fileSystem.stepCount - 1)
        }

        // MARK: Workloads

        mutating func appendsAcknowledgementsRolloverCompaction() throws {
            for round in 0..<30 {
                try append(Int.random(in: 1...3, using: &random))
                if round % 3 == 2 { acknowledgeOldest(Int.random(in: 1...3, using: &random)) }
                if round % 4 == 3 { advance(Double(OutboxCrashPointTests.interval)) }
                if round % 10 == 9 { acknowledgeRandom(keepingOneIn: 4) }
            }
            acknowledgeRandom(keepingOneIn: 5)
            advance(Double(OutboxCrashPointTests.interval))
            try append(2)
        }

        mutating func expiryBoundsAcknowledgements() throws {
            let interval = Double(OutboxCrashPointTests.interval)
            for round in 0..<24 {
                try append(Int.random(in: 1...2, using: &random))
                advance(interval * Double(Int.random(in: 1...3, using: &random)))
                if round % 4 == 1 { try append(1, acceptedAt: run.clock.now() - 2_000) }  // expired on arrival
                if round % 3 == 2 { acknowledgeOldest(1) }
                if round % 5 == 4 { try append(1, padding: 400) }  // passes the byte bound
            }
            advance(1_000)  // everything left expires
            try append(3)
            advance(interval)
        }

        mutating func purgeAndErasureInterleaved() throws {
            let profiles = ["visitor-A", "visitor-B", "visitor-C"]
            let interval = Double(OutboxCrashPointTests.interval)
            for round in 0..<6 {
                for index in 0..<5 { try append(1, profile: profiles[(index + round) % 3]) }
                advance(interval)
                try erase(profiles[round % 3])
                try append(2, profile: profiles[(round + 1) % 3])
                acknowledgeOldest(1)
            }
            try purge()
            try append(2, profile: "visitor-B")
            advance(interval)
            try erase("visitor-B")
            try append(1, profile: "visitor-C")
            try purge()
            try append(1, profile: "visitor-A")
        }
    }

    // MARK: Checking

    struct Result {
        var checked = 0
        var steps = 0
        var distinct = 0
        var failures: [String] = []
    }

    private struct Recovered {
        var records: [OutboxRecord] = []
        var dropped: [OutboxRecord] = []
        var issues: [OutboxRecoveryIssue] = []
        var error: OutboxError?
    }

    private struct Key: Hashable {
        var files: [String: [UInt8]]
        var time: Double
    }

    func checkEveryCrashPoint() -> Result {
        var result = Result()
        result.steps = fileSystem.stepCount - 1
        var cache: [Key: Recovered] = [:]
        let entries = ledger.entries
        for step in 0..<fileSystem.stepCount {
            let time = fileSystem.time(afterStep: step)
            for state in fileSystem.crashStates(afterStep: step) {
                if durability == .writeOnly, state.kind == .powerLoss { continue }
                let key = Key(files: state.files, time: time)
                let recovered = cache[key] ?? recover(state.files, at: time)
                cache[key] = recovered
                result.checked += 1
                let context = "after step \(step) (\(fileSystem.step(step).description)), \(state.label)"
                for failure in violations(recovered, state: state, step: step, entries: entries) {
                    result.failures.append("\(context): \(failure)")
                }
            }
        }
        result.distinct = cache.count
        return result
    }

    private func recover(_ files: [String: [UInt8]], at time: Double) -> Recovered {
        let drops = DropCollector()
        var configuration = self.configuration
        configuration.onDrop = drops.callback
        let restored = FaultInjectingFileSystem(directory: OutboxCrashPointTests.directory, files: files)
        do {
            let outbox = try open(configuration, fileSystem: restored, clock: ManualClock(start: time))
            defer { outbox.close() }
            return Recovered(records: outbox.recovery.records, dropped: drops.all.flatMap(\.records), issues: outbox.recovery.issues)
        } catch {
            return Recovered(error: error)
        }
    }

    private func violations(
        _ recovered: Recovered, state: FaultInjectingFileSystem.CrashState, step: Int, entries: [String: CrashPointLedger.Entry]
    ) -> [String] {
        var failures: [String] = []
        if let error = recovered.error { return ["opening threw \(error)"] }
        for issue in recovered.issues {
            switch (state.kind, issue) {
            case (.powerLoss, .truncatedTail), (.powerLoss, .missingAcknowledgements): continue
            default: failures.append("unexpected recovery issue \(issue)")
            }
        }
        let accounted = recovered.records + recovered.dropped
        var seen: Set<String> = []
        for record in recovered.records where !seen.insert(record.messageId).inserted {
            failures.append("\(record.messageId) recovered twice")
        }
        for record in accounted where entries[record.messageId]?.record != record {
            failures.append("\(record.messageId) (sequence \(record.sequence)) was never appended like this")
        }
        let sequences = recovered.records.map(\.sequence)
        if sequences != sequences.sorted() { failures.append("records out of append order: \(sequences)") }
        let present = Set(accounted.map(\.messageId))
        for (id, entry) in entries.sorted(by: { $0.value.record.sequence < $1.value.record.sequence }) {
            if let forbidden = entry.forbiddenFrom, forbidden <= step, present.contains(id) {
                failures.append("\(id) came back after its purge or erasure returned")
            }
            if let released = entry.releasedFrom, released <= step { continue }
            let due = state.kind == .processCrash ? entry.returnedAt : entry.promisedAt
            if let due, due <= step, !present.contains(id) {
                failures.append("\(id) (sequence \(entry.record.sequence)) is lost")
            }
        }
        return failures
    }
}
