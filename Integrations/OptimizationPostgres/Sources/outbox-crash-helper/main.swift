// Test support for the shared outbox's takeover test: a replica that appends scripted events,
// claims a batch, "delivers" part of it without acknowledging, then waits to be killed (SIGKILL).
//
//   outbox-crash-helper <connection-string> <schema> <seed> <events> <profiles> <lease-ms>
//
// Prints `appended <n>`, one `delivered <sequence>` per delivered event, then `waiting`.
import Optimization
import Foundation
import Logging
import OptimizationPostgres

let arguments = CommandLine.arguments
guard arguments.count == 7, let seed = UInt64(arguments[3]), let count = Int(arguments[4]), let profiles = Int(arguments[5]),
      let leaseMs = Int(arguments[6])
else {
    FileHandle.standardError.write(Data("usage: outbox-crash-helper <url> <schema> <seed> <events> <profiles> <lease-ms>\n".utf8))
    exit(64)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var generator = SplitMix(seed: seed)
let logger = Logger(label: "outbox-crash-helper", factory: { _ in SwiftLogNoOpLogHandler() })
let database = OptimizationDatabase(
    configuration: try PostgresConfiguration(connectionString: arguments[1], poolSize: 2, schema: arguments[2]), logger: logger)
try await database.start()
let store = PostgresOutboxStore(database: database, configuration: .init(leaseDuration: .milliseconds(leaseMs)))
var events: [OutboxEvent] = []
for index in 0..<count {
    let profile = "profile-\(Int(generator.next() % UInt64(profiles)))"
    events.append(OutboxEvent(queue: .insights, messageId: "m-\(seed)-\(index)", profileId: profile, consent: true,
                              payload: Array(#"{"messageId":"m-\#(seed)-\#(index)"}"#.utf8)))
}
// Appended in a few calls, as requests would.
var start = 0
while start < events.count {
    let size = 1 + Int(generator.next() % 5)
    try await store.append(Array(events[start..<min(start + size, events.count)]))
    start += size
}
say("appended \(events.count)")
let claim = try await store.claim(queue: .insights, limit: max(1, count / 2))
let delivered = claim.prefix(Int(generator.next() % UInt64(claim.count + 1)))
for record in delivered { say("delivered \(record.sequence)") }
say("waiting")
while true { try await Task.sleep(for: .seconds(3600)) }

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
