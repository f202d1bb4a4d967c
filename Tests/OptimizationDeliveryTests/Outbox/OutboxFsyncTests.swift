#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import JavaScriptHost
import Logging
@testable import OptimizationDelivery
import OptimizationTestSupport
import Testing

/// The outbox's `fsync` discipline, on a ``FaultInjectingFileSystem``: failed syncs are retried,
/// writes that take nothing become errors, and the directory is synced when names change.
@Suite("DurableOutbox fsync discipline")
struct OutboxFsyncTests {
    let logger = Logger(label: "outbox-fsync-test", factory: { _ in SwiftLogNoOpLogHandler() })
    static let segment1 = "/outbox/" + OutboxIndex.segmentName(1)

    func open(
        _ fileSystem: FaultInjectingFileSystem, _ configuration: OutboxConfiguration, clock: ManualClock = ManualClock()
    ) throws -> DurableOutbox {
        try DurableOutbox(
            directory: URL(fileURLWithPath: fileSystem.directory), configuration: configuration, clock: clock, logger: logger,
            fileSystem: fileSystem)
    }

    /// What a new outbox recovers from `files` (a disk after a crash).
    func recover(_ files: [String: [UInt8]]) throws -> OutboxRecovery {
        let outbox = try open(FaultInjectingFileSystem(files: files), OutboxConfiguration())
        defer { outbox.close() }
        return outbox.recovery
    }

    @Test func aFailedPeriodicFsyncKeepsTheWritesUnsyncedAndIsRetriedAtTheNextTick() throws {
        let fileSystem = FaultInjectingFileSystem()
        let clock = ManualClock()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: .syncInterval(milliseconds: 100)), clock: clock)
        defer { outbox.close() }
        try outbox.append(OutboxFixture.event("m1"))
        fileSystem.failNextSyncs = 1
        clock.advance(by: .milliseconds(100))
        #expect(fileSystem.failNextSyncs == 0, "the tick tried to sync")
        #expect(try recover(fileSystem.durableFiles).records.isEmpty, "a power loss now loses m1: its fsync failed")
        #expect(clock.nextDueTime == clock.now() + 100, "a retry is scheduled")
        clock.advance(by: .milliseconds(100))
        #expect(try recover(fileSystem.durableFiles).records.map(\.messageId) == ["m1"])
        // Nothing left to sync: no more ticks.
        let syncs = fileSystem.fileSyncs
        clock.advance(by: .milliseconds(1_000))
        #expect(fileSystem.fileSyncs == syncs)
    }

    @Test func aWriteThatTakesNothingBecomesATypedErrorNotAHang() throws {
        let fileSystem = FaultInjectingFileSystem()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: .writeOnly))
        defer { outbox.close() }
        try outbox.append(OutboxFixture.event("m1"))
        let calls = fileSystem.writeCalls
        fileSystem.writeLimits = Array(repeating: 0, count: 100)
        #expect(throws: OutboxError.ioFailure(path: Self.segment1, operation: "write", errno: EIO)) {
            try outbox.append(OutboxFixture.event("m2"))
        }
        #expect(fileSystem.writeCalls - calls == PosixOutboxFileSystem.maxWriteAttemptsWithoutProgress)
        #expect(outbox.pendingRecords().map(\.messageId) == ["m1"])
        fileSystem.writeLimits = []
        try outbox.append(OutboxFixture.event("m3"))
        let recovery = try recover(fileSystem.currentFiles)
        #expect(recovery.records.map(\.messageId) == ["m1", "m3"])
        #expect(recovery.issues.isEmpty)
    }

    @Test func shortWritesStillStoreWholeRecords() throws {
        let fileSystem = FaultInjectingFileSystem()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: .syncEveryAppend))
        defer { outbox.close() }
        try outbox.append(OutboxFixture.event("m1"))
        let calls = fileSystem.writeCalls
        // One byte, nothing, three bytes, nothing twice, then the rest.
        fileSystem.writeLimits = [1, 0, 3, 0, 0]
        try outbox.append(OutboxFixture.event("m2", padding: 40))
        #expect(fileSystem.writeCalls - calls == 6)
        let recovery = try recover(fileSystem.durableFiles)
        #expect(recovery.records.map(\.messageId) == ["m1", "m2"])
        #expect(recovery.records.last?.payload == OutboxFixture.event("m2", padding: 40).payload)
        #expect(recovery.issues.isEmpty)
    }

    @Test func aFailedDirectoryFsyncFailsTheAppendUnderSyncEveryAppend() throws {
        let fileSystem = FaultInjectingFileSystem()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: .syncEveryAppend))
        defer { outbox.close() }
        // The first append creates the segment: its name must be durable before it returns.
        fileSystem.failNextDirectorySyncs = 1
        #expect(throws: OutboxError.ioFailure(path: "/outbox", operation: "fsync", errno: EIO)) {
            try outbox.append(OutboxFixture.event("m1"))
        }
        #expect(outbox.count == 0)
        try outbox.append(OutboxFixture.event("m2"))
        #expect(fileSystem.pendingDirectoryOperations.isEmpty)
        #expect(try recover(fileSystem.durableFiles).records.map(\.messageId) == ["m2"])
    }

    /// A deleted segment: its "complete" mark is durable before its removal can be, so a power
    /// loss that keeps the removal of the segment but not of its `.acks` file is not taken for a
    /// lost segment; and the removal itself is durable at the next sync point.
    @Test(arguments: [OutboxDurability.syncEveryAppend, .syncInterval(milliseconds: 100)])
    func aDeletedSegmentIsNeverReportedMissingAndItsRemovalBecomesDurable(_ durability: OutboxDurability) throws {
        let fileSystem = FaultInjectingFileSystem()
        let clock = ManualClock()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: durability, segmentBytes: 300), clock: clock)
        defer { outbox.close() }
        // Segments of two events: [m1 m2] [m3 m4] [m5 …].
        for index in 1...5 { try outbox.append(OutboxFixture.event("m\(index)", padding: 100)) }
        clock.advance(by: .milliseconds(100))
        #expect(fileSystem.pendingDirectoryOperations.isEmpty)
        let first = outbox.pendingRecords().filter { $0.sequence < 3 }
        #expect(outbox.segmentCount >= 3)
        outbox.acknowledge(sequences: first.map(\.sequence))
        #expect(fileSystem.currentFiles[OutboxIndex.segmentName(1)] == nil, "segment 1 was deleted")
        let pending = fileSystem.pendingDirectoryOperations
        #expect(pending.contains(.unlink(name: OutboxIndex.segmentName(1))))
        // Power loss with any prefix of the name changes durable.
        for applied in 0...pending.count {
            let recovery = try recover(fileSystem.durableFiles(applyingPending: applied))
            #expect(!recovery.issues.contains { if case .missingSegment = $0 { true } else { false } },
                    "\(applied) of \(pending.count) removals durable: \(recovery.issues)")
            #expect(Set(recovery.records.map(\.messageId)).isSuperset(of: (3...5).map { "m\($0)" }))
        }
        // The next sync point makes the removal durable (m7 goes to the open segment: no new name).
        let segments = outbox.segmentCount
        defer { #expect(outbox.segmentCount == segments) }
        switch durability {
        case .syncEveryAppend: try outbox.append(OutboxFixture.event("m7"))
        default: clock.advance(by: .milliseconds(100))
        }
        #expect(fileSystem.pendingDirectoryOperations.isEmpty)
        #expect(fileSystem.durableFiles[OutboxIndex.segmentName(1)] == nil)
        #expect(fileSystem.durableFiles[OutboxIndex.acknowledgementName(1)] == nil)
    }

    @Test func sealingASegmentUnderSyncIntervalLeavesItsFsyncToTheTick() throws {
        let fileSystem = FaultInjectingFileSystem()
        let clock = ManualClock()
        let outbox = try open(fileSystem, OutboxConfiguration(durability: .syncInterval(milliseconds: 100), segmentBytes: 300), clock: clock)
        defer { outbox.close() }
        for index in 1...6 { try outbox.append(OutboxFixture.event("m\(index)", padding: 100)) }
        #expect(outbox.segmentCount >= 3)
        #expect(fileSystem.fileSyncs == 0, "appends (and sealing) never wait for the disk")
        #expect(try recover(fileSystem.durableFiles).records.isEmpty)
        clock.advance(by: .milliseconds(100))
        #expect(try recover(fileSystem.durableFiles).records.map(\.messageId) == (1...6).map { "m\($0)" })
    }
}
