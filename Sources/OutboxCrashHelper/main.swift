// Test support for the outbox crash test (Tests/OptimizationDeliveryTests/Outbox/OutboxCrashTests.swift): opens
// a DurableOutbox on a directory, appends scripted events and acknowledges some (simulating
// delivery), printing a line for each only after the call returned, until it is killed.
//
//   OutboxCrashHelper <directory> <seed> <generation> <writeOnly|syncEveryAppend|syncInterval> <events>
//   OutboxCrashHelper client …   (an OptimizationClient with a durable outbox: ClientMode.swift)
//   OutboxCrashHelper service …  (an OptimizationService with an outbox directory: ServiceMode.swift)
//
// stdout, one write(2) per line:
//   recovered <count>
//   accepted <experience|insights> <messageId>     (after append returned)
//   acking <messageId>                             (before acknowledge is called)
//   acked <messageId>                              (after acknowledge returned)
//   done                                           (all <events> appended)
// Exit status: 0 done, 64 usage, 75 the directory is locked by another outbox, 74 other errors.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import Optimization

func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(1, raw.baseAddress! + offset, raw.count - offset)
            if written <= 0 { if errno == EINTR { continue }; exit(74) }
            offset += written
        }
    }
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(status)
}

/// SplitMix64: the same sequence for the same seed on every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// A lower priority, so appending as fast as it can does not starve the test suite running beside it.
_ = nice(10)

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "client" {
    await runClientMode(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "service" {
    await runServiceMode(Array(CommandLine.arguments.dropFirst(2)))
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let seed = UInt64(arguments[2]), let generation = Int(arguments[3]), let total = Int(arguments[5]) else {
    fail("usage: OutboxCrashHelper <directory> <seed> <generation> <durability> <events>", status: 64)
}
let durability: OutboxDurability
switch arguments[4] {
case "writeOnly": durability = .writeOnly
case "syncEveryAppend": durability = .syncEveryAppend
case "syncInterval": durability = .syncInterval(milliseconds: 5)
default: fail("unknown durability \(arguments[4])", status: 64)
}

var logger = Logger(label: "outbox-crash-helper")
logger.logLevel = .error
let outbox: DurableOutbox
do {
    // Small segments so rotation, deletion and compaction happen within a few hundred events.
    outbox = try DurableOutbox(
        directory: URL(fileURLWithPath: arguments[1]),
        configuration: OutboxConfiguration(durability: durability, maxEvents: 1_000_000, maxBytes: 1 << 30, segmentBytes: 4_096),
        logger: logger)
} catch {
    fail("\(error)", status: { if case .directoryLocked = error { return 75 } else { return 74 } }())
}
emit("recovered \(outbox.recovery.records.count)")

var random = SeededGenerator(state: seed &* 31 &+ UInt64(generation))
var number = 0
while number < total {
    var batch: [OutboxEvent] = []
    for _ in 0..<(Int.random(in: 0..<4, using: &random) == 0 ? Int.random(in: 2...5, using: &random) : 1) {
        number += 1
        let messageId = "g\(generation)-\(number)"
        let queue: QueueEvent.Queue = Bool.random(using: &random) ? .experience : .insights
        let consent = number % 3 != 0
        let padding = String(repeating: "x", count: Int.random(in: 0...600, using: &random))
        let payload = #"{"messageId":"\#(messageId)","consent":\#(consent),"type":"track","pad":"\#(padding)"}"#
        batch.append(OutboxEvent(
            queue: queue, messageId: messageId, profileId: "profile-\(number % 3)", consent: consent,
            payload: Array(payload.utf8)))
    }
    do {
        let records = try outbox.append(contentsOf: batch)
        for record in records { emit("accepted \(record.queue.rawValue) \(record.messageId)") }
    } catch {
        fail("\(error)", status: 74)
    }
    if Int.random(in: 0..<3, using: &random) == 0 {
        // Deliver the oldest few of one queue, as a 2xx would.
        let queue: QueueEvent.Queue = Bool.random(using: &random) ? .experience : .insights
        let delivered = outbox.pendingRecords(queue: queue).prefix(Int.random(in: 1...6, using: &random))
        for record in delivered { emit("acking \(record.messageId)") }
        outbox.acknowledge(sequences: delivered.map(\.sequence))
        for record in delivered { emit("acked \(record.messageId)") }
    }
}
outbox.close()
emit("done")
