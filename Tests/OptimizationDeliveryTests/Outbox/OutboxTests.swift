import Foundation
import JavaScriptHost
import Logging
@testable import OptimizationDelivery
import OptimizationTestSupport
import Testing

@Suite("DurableOutbox")
struct OutboxTests {
    let fixture = OutboxFixture()

    @Test func crc32cMatchesTheStandardCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        let long = (0..<1_000).map { UInt8($0 % 251) }
        #expect(CRC32C.checksum(long[500...], continuing: CRC32C.checksum(long[..<500])) == CRC32C.checksum(long))
    }

    @Test func recoversUndeliveredEventsInOrderWithTheirOriginalFields() throws {
        defer { fixture.remove() }
        let clock = ManualClock()
        var appended: [OutboxRecord] = []
        do {
            let outbox = try fixture.open(clock: clock)
            appended.append(try outbox.append(OutboxFixture.event("e1", profile: "p1", consent: true)))
            clock.advance(by: .milliseconds(10))
            appended.append(try outbox.append(OutboxFixture.event("i1", queue: .insights, consent: false, acceptedAt: 1_767_225_000_000.5)))
            appended += try outbox.append(contentsOf: [
                OutboxFixture.event("e2", profile: "p2"), OutboxFixture.event("i2", queue: .insights, profile: "p1"),
            ])
            outbox.close()
        }
        #expect(appended.map(\.sequence) == [1, 2, 3, 4])
        #expect(appended[0].acceptedAt == clock.now() - 10)
        let reopened = try fixture.open(clock: clock)
        defer { reopened.close() }
        #expect(reopened.recovery.issues.isEmpty)
        #expect(reopened.recovery.records == appended)
        #expect(reopened.recovery.records(for: .experience).map(\.messageId) == ["e1", "e2"])
        #expect(reopened.recovery.records(for: .insights).map(\.messageId) == ["i1", "i2"])
        #expect(reopened.recovery.records[1].acceptedAt == 1_767_225_000_000.5 && reopened.recovery.records[1].consent == false)
        #expect(reopened.recovery.records[0].payload == OutboxFixture.event("e1").payload)
        // New sequences continue after the recovered ones.
        #expect(try reopened.append(OutboxFixture.event("e3")).sequence == 5)
    }

    @Test func acknowledgedEventsAreNotRecoveredAndDoneSegmentsAreDeleted() throws {
        defer { fixture.remove() }
        let configuration = OutboxConfiguration(segmentBytes: 512)
        do {
            let outbox = try fixture.open(configuration)
            for index in 1...40 { try outbox.append(OutboxFixture.event("m\(index)", queue: index % 2 == 0 ? .insights : .experience)) }
            #expect(fixture.segmentFiles().count > 3)
            #expect(outbox.acknowledge(sequences: Array(1...20)) == 20)
            #expect(outbox.acknowledge(messageIds: ["m21", "m22", "unknown"]) == 2)
            #expect(outbox.acknowledge(sequences: [1, 2]) == 0)
            #expect(outbox.count == 18)
            outbox.close()
        }
        let reopened = try fixture.open(configuration)
        #expect(reopened.recovery.records.map(\.messageId) == (23...40).map { "m\($0)" })
        #expect(reopened.acknowledge(sequences: reopened.recovery.records.map(\.sequence)) == 18)
        reopened.close()
        // Every segment and .acks file is gone; only the lock file stays.
        #expect(fixture.files() == [DurableOutbox.lockFileName])
        let empty = try fixture.open(configuration)
        defer { empty.close() }
        #expect(empty.recovery.records.isEmpty && empty.recovery.issues.isEmpty)
    }

    @Test func aMessageIdStillUndeliveredIsStoredOnce() throws {
        defer { fixture.remove() }
        let outbox = try fixture.open()
        defer { outbox.close() }
        let first = try outbox.append(OutboxFixture.event("same"))
        #expect(try outbox.append(OutboxFixture.event("same", queue: .insights)) == first)
        let batch = try outbox.append(contentsOf: [OutboxFixture.event("a"), OutboxFixture.event("a"), OutboxFixture.event("same")])
        #expect(batch.map(\.sequence) == [2, 2, 1])
        #expect(outbox.count == 2)
        outbox.acknowledge(messageIds: ["same"])
        #expect(try outbox.append(OutboxFixture.event("same")).sequence == 3)
    }

    @Test func badEventsAreTypedErrors() throws {
        defer { fixture.remove() }
        let outbox = try fixture.open(OutboxConfiguration(maxBytes: 1_000))
        #expect(throws: OutboxError.invalidEvent("the messageId must have 1 to 1,024 bytes")) {
            try outbox.append(OutboxFixture.event(""))
        }
        // A hostile acceptedAt: its expiry timer would not fit a Duration (a trap before this check).
        for hostile in [1e300, -1.0, 8.64e15 + 1, Double.nan, Double.infinity] {
            #expect(throws: OutboxError.invalidEvent("acceptedAt must be milliseconds from 0 to 8.64e15"), "\(hostile)") {
                try outbox.append(OutboxFixture.event("hostile", acceptedAt: hostile))
            }
        }
        #expect(try outbox.append(OutboxFixture.event("last instant", acceptedAt: 8.64e15)).acceptedAt == 8.64e15)
        #expect(outbox.acknowledge(messageIds: ["last instant"]) == 1)
        let tooLarge = #expect(throws: OutboxError.self) { try outbox.append(OutboxFixture.event("big", padding: 2_000)) }
        if case .eventTooLarge(_, 1_000)? = tooLarge {} else { Issue.record("expected eventTooLarge, got \(String(describing: tooLarge))") }
        #expect(outbox.count == 0)
        outbox.close()
        #expect(throws: OutboxError.closed) { try outbox.append(OutboxFixture.event("late")) }
        #expect(throws: OutboxError.closed) { try outbox.purge() }
        #expect(outbox.acknowledge(sequences: [1]) == 0)
    }

    // MARK: Damage

    @Test func aTornTailIsSkippedAndReported() throws {
        defer { fixture.remove() }
        do {
            let outbox = try fixture.open()
            for index in 1...3 { try outbox.append(OutboxFixture.event("m\(index)", padding: 50)) }
            outbox.close()
        }
        let segment = fixture.url(try #require(fixture.segmentFiles().first))
        let bytes = try Data(contentsOf: segment)
        try bytes.prefix(bytes.count - 7).write(to: segment)
        let reopened = try fixture.open()
        #expect(reopened.recovery.records.map(\.messageId) == ["m1", "m2"])
        guard case .truncatedTail(_, _, let ignored)? = reopened.recovery.issues.first else {
            Issue.record("expected a truncated tail, got \(reopened.recovery.issues)")
            return
        }
        #expect(reopened.recovery.issues.count == 1)
        #expect(ignored > 0)
        // Appends go to a new segment; everything stays readable.
        try reopened.append(OutboxFixture.event("m4"))
        reopened.close()
        let again = try fixture.open()
        defer { again.close() }
        #expect(again.recovery.records.map(\.messageId) == ["m1", "m2", "m4"])
    }

    @Test func aCorruptRecordIsSkippedAndTheRecordsAfterItAreKept() throws {
        defer { fixture.remove() }
        do {
            let outbox = try fixture.open()
            for index in 1...5 { try outbox.append(OutboxFixture.event("m\(index)", padding: 20)) }
            outbox.close()
        }
        let segment = fixture.url(try #require(fixture.segmentFiles().first))
        var bytes = try Data(contentsOf: segment)
        let marker = try #require(bytes.firstRange(of: Data(#""messageId":"m2""#.utf8)))
        bytes[marker.lowerBound + 5] ^= 0x20
        try bytes.write(to: segment)
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == ["m1", "m3", "m4", "m5"])
        #expect(reopened.recovery.issues.count == 1)
        if case .corruptRecords? = reopened.recovery.issues.first {} else {
            Issue.record("expected corrupt records, got \(reopened.recovery.issues)")
        }
    }

    @Test func aSegmentWithAWrongHeaderOrGarbageNeverStopsStartUp() throws {
        defer { fixture.remove() }
        do {
            let outbox = try fixture.open(OutboxConfiguration(segmentBytes: 300))
            for index in 1...6 { try outbox.append(OutboxFixture.event("m\(index)", padding: 100)) }
            outbox.close()
        }
        let segments = fixture.segmentFiles()
        #expect(segments.count >= 3)
        // First segment: header overwritten (its records are still found). Last: garbage appended.
        var first = try Data(contentsOf: fixture.url(segments[0]))
        first.replaceSubrange(0..<8, with: Data("GARBAGE!".utf8))
        try first.write(to: fixture.url(segments[0]))
        let handle = try FileHandle(forWritingTo: fixture.url(segments[segments.count - 1]))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        try handle.close()
        // And a file that is all noise, named like a segment.
        var random = SystemRandomNumberGenerator()
        try Data((0..<5_000).map { _ in UInt8.random(in: 0...255, using: &random) })
            .write(to: fixture.url(OutboxIndex.segmentName(1_000)))
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == (1...6).map { "m\($0)" })
        #expect(reopened.recovery.issues.contains { if case .corruptRecords(let name, 0, 8) = $0 { name == segments[0] } else { false } })
        #expect(reopened.recovery.issues.contains { if case .missingAcknowledgements = $0 { true } else { false } })
        #expect(reopened.recovery.issues.count >= 3)
    }

    @Test func aMissingSegmentIsReportedAndTheOthersRecover() throws {
        defer { fixture.remove() }
        do {
            let outbox = try fixture.open(OutboxConfiguration(segmentBytes: 300))
            for index in 1...9 {
                try outbox.append(OutboxFixture.event("m\(index)", queue: index % 2 == 0 ? .insights : .experience, padding: 100))
            }
            outbox.close()
        }
        let segments = fixture.segmentFiles()
        #expect(segments.count >= 3)
        let lost = segments[1]
        let lostIds = try OutboxFraming.scan(Array(Data(contentsOf: fixture.url(lost))), magic: OutboxFraming.segmentMagic)
            .payloads.compactMap { OutboxFraming.decodeEvent($0.payload)?.messageId }
        #expect(!lostIds.isEmpty)
        try FileManager.default.removeItem(at: fixture.url(lost))
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.issues == [.missingSegment(segment: lost)])
        let expected = (1...9).map { "m\($0)" }.filter { !lostIds.contains($0) }
        #expect(reopened.recovery.records.map(\.messageId) == expected)
        #expect(!fixture.files().contains(OutboxIndex.acknowledgementName(OutboxIndex.parse(lost)!.id)))
    }

    // MARK: Bounds

    @Test func aFullOutboxDropsTheOldestAndReportsThem() async throws {
        defer { fixture.remove() }
        let collector = DropCollector()
        let outbox = try fixture.open(OutboxConfiguration(maxEvents: 5, onDrop: collector.callback))
        for index in 1...8 { try outbox.append(OutboxFixture.event("m\(index)")) }
        #expect(outbox.pendingRecords().map(\.messageId) == (4...8).map { "m\($0)" })
        #expect(collector.all.map(\.reason) == [.maxEvents, .maxEvents, .maxEvents])
        #expect(collector.all.flatMap(\.records).map(\.messageId) == ["m1", "m2", "m3"])
        outbox.close()
        var streamed: [String] = []
        for await report in outbox.drops { streamed += report.records.map(\.messageId) }
        #expect(streamed == ["m1", "m2", "m3"])
        let reopened = try fixture.open(OutboxConfiguration(maxEvents: 5))
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == (4...8).map { "m\($0)" })
    }

    @Test func theByteBoundDropsTheOldestAndAnOutboxOpenedWithSmallerBoundsShrinks() throws {
        defer { fixture.remove() }
        let collector = DropCollector()
        let one = OutboxFixture.event("m0", padding: 200)
        let size = OutboxFraming.eventFrameSize(messageIdBytes: 2, profileIdBytes: nil, payloadBytes: one.payload.count)
        let outbox = try fixture.open(OutboxConfiguration(maxBytes: size * 4, onDrop: collector.callback))
        for index in 1...6 { try outbox.append(OutboxFixture.event("m\(index)", padding: 200)) }
        #expect(outbox.pendingBytes == size * 4)
        #expect(collector.all.flatMap(\.records).map(\.messageId) == ["m1", "m2"])
        #expect(collector.all.allSatisfy { $0.reason == .maxBytes })
        outbox.close()
        let smaller = DropCollector()
        let reopened = try fixture.open(OutboxConfiguration(maxEvents: 2, onDrop: smaller.callback))
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == ["m5", "m6"])
        #expect(smaller.all.map(\.reason) == [.maxEvents] && smaller.all[0].records.map(\.messageId) == ["m3", "m4"])
    }

    @Test func expiredEventsAreDroppedOnTheInjectedClockAndAtOpen() throws {
        defer { fixture.remove() }
        let clock = ManualClock()
        let collector = DropCollector()
        let configuration = OutboxConfiguration(timeToLive: .milliseconds(1_000), onDrop: collector.callback)
        let outbox = try fixture.open(configuration, clock: clock)
        try outbox.append(OutboxFixture.event("old"))
        clock.advance(by: .milliseconds(500))
        try outbox.append(OutboxFixture.event("newer"))
        clock.advance(by: .milliseconds(499))
        #expect(collector.all.isEmpty)
        clock.advance(by: .milliseconds(1))
        #expect(collector.all.map(\.reason) == [.expired])
        #expect(collector.all.flatMap(\.records).map(\.messageId) == ["old"])
        #expect(outbox.pendingRecords().map(\.messageId) == ["newer"])
        // An event accepted long ago is due at once.
        try outbox.append(OutboxFixture.event("ancient", acceptedAt: clock.now() - 5_000))
        clock.runDueTimers()
        #expect(collector.all.flatMap(\.records).map(\.messageId) == ["old", "ancient"])
        outbox.close()
        // Closed: no timer fires into it; the remaining event expires at the next open.
        clock.advance(by: .milliseconds(10_000))
        #expect(collector.all.count == 2)
        let atOpen = DropCollector()
        let reopened = try fixture.open(OutboxConfiguration(timeToLive: .milliseconds(1_000), onDrop: atOpen.callback), clock: clock)
        defer { reopened.close() }
        #expect(reopened.recovery.records.isEmpty)
        #expect(atOpen.all.map(\.reason) == [.expired] && atOpen.all[0].records.map(\.messageId) == ["newer"])
    }

    @Test func theDefaultTimeToLiveIsSevenDays() throws {
        defer { fixture.remove() }
        let clock = ManualClock()
        let outbox = try fixture.open(clock: clock)
        defer { outbox.close() }
        try outbox.append(OutboxFixture.event("week"))
        clock.advance(by: .milliseconds(7 * 24 * 3_600_000 - 1))
        #expect(outbox.count == 1)
        clock.advance(by: .milliseconds(1))
        #expect(outbox.count == 0)
    }

    // MARK: Privacy

    @Test func purgeRemovesEveryEventFromTheDisk() throws {
        defer { fixture.remove() }
        let outbox = try fixture.open(OutboxConfiguration(segmentBytes: 300))
        for index in 1...10 { try outbox.append(OutboxFixture.event("m\(index)", padding: 100)) }
        outbox.acknowledge(sequences: [1, 2])
        try outbox.purge()
        #expect(outbox.count == 0 && outbox.segmentCount == 0)
        #expect(fixture.files() == [DurableOutbox.lockFileName])
        try outbox.append(OutboxFixture.event("after"))
        outbox.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == ["after"])
        #expect(reopened.recovery.issues.isEmpty)
    }

    @Test func erasingAProfileRemovesItsEventsDeliveredOrNotFromEveryFile() throws {
        defer { fixture.remove() }
        let configuration = OutboxConfiguration(segmentBytes: 400)
        let outbox = try fixture.open(configuration)
        for index in 1...12 {
            try outbox.append(OutboxFixture.event("m\(index)", queue: index % 2 == 0 ? .insights : .experience,
                                                  profile: index % 3 == 0 ? "visitor-A" : "visitor-B", padding: 60))
        }
        outbox.acknowledge(messageIds: ["m3"])  // delivered, still on disk until its segment goes
        #expect(try outbox.eraseProfile("visitor-A") == 3)
        #expect(try outbox.eraseProfile("nobody") == 0)
        let expected = (1...12).filter { $0 % 3 != 0 }.map { "m\($0)" }
        #expect(outbox.pendingRecords().map(\.messageId) == expected)
        for name in fixture.files() {
            let bytes = try Data(contentsOf: fixture.url(name))
            #expect(bytes.firstRange(of: Data("visitor-A".utf8)) == nil, "\(name)")
            for index in [3, 6, 9, 12] { #expect(bytes.firstRange(of: Data(#""m\#(index)""#.utf8)) == nil, "\(name)") }
        }
        try outbox.append(OutboxFixture.event("m13", profile: "visitor-B"))
        outbox.close()
        let reopened = try fixture.open(configuration)
        defer { reopened.close() }
        #expect(reopened.recovery.issues.isEmpty)
        #expect(reopened.recovery.records.map(\.messageId) == expected + ["m13"])
        #expect(reopened.recovery.records(for: .insights).map(\.messageId) == expected.filter { Int($0.dropFirst())! % 2 == 0 })
    }

    // MARK: Files and ownership

    @Test func filesAreOwnerOnlyAndAnExistingDirectoryIsTightened() throws {
        defer { fixture.remove() }
        try FileManager.default.createDirectory(at: fixture.directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let outbox = try fixture.open()
        try outbox.append(OutboxFixture.event("m1"))
        outbox.acknowledge(sequences: [1])
        try outbox.append(OutboxFixture.event("m2"))
        defer { outbox.close() }
        func mode(_ url: URL) throws -> Int? {
            try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        }
        #expect(try mode(fixture.directory) == 0o700)
        let names = fixture.files()
        #expect(names.contains { $0.hasSuffix(".log") } && names.contains { $0.hasSuffix(".acks") } && names.contains(DurableOutbox.lockFileName))
        for name in names { #expect(try mode(fixture.url(name)) == 0o600, "\(name)") }
    }

    @Test func oneOutboxPerDirectoryInAProcess() throws {
        defer { fixture.remove() }
        let first = try fixture.open()
        #expect(throws: OutboxError.directoryOwnedInThisProcess(path: fixture.directory.path)) { try fixture.open() }
        #expect(OutboxError.directoryOwnedInThisProcess(path: "/d").description.contains("already open in this process"))
        try first.append(OutboxFixture.event("m1"))
        first.close()
        let second = try fixture.open()
        defer { second.close() }
        #expect(second.recovery.records.map(\.messageId) == ["m1"])
    }

    @Test func theSameDirectoryReachedByAnotherPathIsStillOwned() throws {
        defer { fixture.remove() }
        let first = try fixture.open()
        defer { first.close() }
        let alias = fixture.directory.deletingLastPathComponent().appendingPathComponent("alias")
        try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: fixture.directory)
        #expect(throws: OutboxError.directoryOwnedInThisProcess(path: alias.path)) {
            try DurableOutbox(directory: alias, logger: Logger(label: "outbox-test"))
        }
        // The refused opener did not release the owner's lock: the owner still appends and
        // recovers after a reopen.
        try first.append(OutboxFixture.event("m1"))
        #expect(first.pendingRecords().map(\.messageId) == ["m1"])
    }

    /// A process spawned while the outbox is open shares its descriptors between `fork` and
    /// `exec` (and for good, when the descriptor is handed down). The child must not keep the
    /// directory locked once the outbox is closed.
    @Test func aChildProcessHoldingTheLockDescriptorDoesNotKeepTheDirectoryLocked() throws {
        defer { fixture.remove() }
        let outbox = try fixture.open()
        try outbox.append(OutboxFixture.event("m1"))
        let lockPath = fixture.url(DurableOutbox.lockFileName).resolvingSymlinksInPath().path
        let descriptor = try #require(Self.openDescriptor(of: lockPath))
        let child = try #require(Self.spawnSleeper(inheriting: descriptor))
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        outbox.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == ["m1"])
    }

    /// This process's descriptor open on `path`, found in `/proc/self/fd`.
    private static func openDescriptor(of path: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.compactMap(Int32.init).first { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")) == path
        }
    }

    /// Spawns `sleep 600` with `descriptor` handed down as its descriptor 3; nil when it fails.
    private static func spawnSleeper(inheriting descriptor: Int32) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptor, 3)
        let arguments = ["sleep", "600"].map { $0.withCString { strdup($0) } }
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let status = (arguments + [nil]).withUnsafeBufferPointer { argv in
            posix_spawnp(&pid, "sleep", &actions, nil, argv.baseAddress!, environ)
        }
        return status == 0 ? pid : nil
    }

    @Test(arguments: [OutboxDurability.writeOnly, .syncEveryAppend, .syncInterval(milliseconds: 50)])
    func everyDurabilityPolicyKeepsWhatItAccepted(_ durability: OutboxDurability) throws {
        defer { fixture.remove() }
        let clock = ManualClock()
        let outbox = try fixture.open(OutboxConfiguration(durability: durability, segmentBytes: 300), clock: clock)
        for index in 1...10 { try outbox.append(OutboxFixture.event("m\(index)", padding: 50)) }
        if case .syncInterval = durability {
            #expect(clock.nextDueTime == clock.now() + 50)  // the periodic fsync, on the injected clock
            clock.advance(by: .milliseconds(50))
            #expect(clock.nextDueTime != clock.now() + 50)
        }
        try outbox.sync()
        outbox.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.records.map(\.messageId) == (1...10).map { "m\($0)" })
    }

    @Test func manySmallAcknowledgementsCompactMostlyDeliveredSegments() throws {
        defer { fixture.remove() }
        let outbox = try fixture.open(OutboxConfiguration(segmentBytes: 128 << 10))
        for index in 1...400 { try outbox.append(OutboxFixture.event("m\(index)", padding: 400)) }
        // Keep every 10th event undelivered: the sealed segments must shrink, not stay whole.
        let first = try #require(fixture.segmentFiles().first)
        let before = try Data(contentsOf: fixture.url(first)).count
        let delivered = outbox.pendingRecords().filter { $0.sequence % 10 != 0 }
        outbox.acknowledge(sequences: delivered.map(\.sequence))
        let after = try Data(contentsOf: fixture.url(first)).count
        #expect(after * 4 < before, "\(before) → \(after)")
        outbox.close()
        let reopened = try fixture.open()
        defer { reopened.close() }
        #expect(reopened.recovery.issues.isEmpty)
        #expect(reopened.recovery.records.count == 400 - delivered.count)
    }
}
