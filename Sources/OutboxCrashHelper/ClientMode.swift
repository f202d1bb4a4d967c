// `OutboxCrashHelper client …`: an OptimizationClient with a storage directory (so a durable
// outbox) accepts scripted events while its API is down, printing a line for each only after the
// call that accepted it returned, until it is killed
// (Tests/OptimizationClientFaceTests/ClientOutboxCrashTests.swift).
//
//   OutboxCrashHelper client <directory> <experienceBaseURL> <insightsBaseURL> <seed> <generation> <events>
//
// stdout, one write(2) per line:
//   started                                    (initialize returned: recovery is done)
//   accepted <experience|insights> <name>      (track(event: name) / trackClick(componentId: name) returned accepted)
//   dropped <experience|insights> <name>       (a queue event reported the event dropped: a bound, a refusal)
//   done                                       (all <events> accepted)
// Exit status: 0 done, 64 usage, 75 initialize failed (the directory is in use), 74 other errors.
import Foundation
import Optimization

func runClientMode(_ arguments: [String]) async -> Never {
    guard arguments.count == 6, let seed = UInt64(arguments[3]), let generation = Int(arguments[4]), let total = Int(arguments[5]) else {
        fail("usage: OutboxCrashHelper client <directory> <experienceBaseURL> <insightsBaseURL> <seed> <generation> <events>", status: 64)
    }
    let client = OptimizationClient(environment: .init(storage: .directory(URL(fileURLWithPath: arguments[0]))))
    let reports = client.queueEvents
    Task {
        for await report in reports {
            for name in droppedNames(report) { emit("dropped \(report.queue.rawValue) \(name)") }
        }
    }
    do {
        try client.initialize(config: OptimizationConfig(
            clientId: "org-1", defaults: StorageDefaults(consent: true),
            api: OptimizationAPIConfig(experienceBaseURL: arguments[1], insightsBaseURL: arguments[2])))
    } catch {
        fail("\(error)", status: 75)
    }
    emit("started")
    var random = SeededGenerator(state: seed &* 31 &+ UInt64(generation))
    for number in 1...max(1, total) {
        let name = "g\(generation)-\(number)"
        do {
            if Bool.random(using: &random) {
                guard try await client.track(event: name).accepted else { fail("track \(name) was not accepted", status: 74) }
                emit("accepted experience \(name)")
            } else {
                guard try await client.trackClick(TrackClickPayload(componentId: name)).accepted else { fail("trackClick \(name) was not accepted", status: 74) }
                emit("accepted insights \(name)")
            }
        } catch {
            fail("\(error)", status: 74)
        }
    }
    client.destroy()
    emit("done")
    exit(0)
}

/// The scripted names of the events a queue event reports dropped (Experience: `event`, Insights:
/// `componentId`).
func droppedNames(_ report: QueueEvent) -> [String] {
    guard report.type == .offlineDrop || report.type == .batchDropped else { return [] }
    return (report.context["droppedEvents"]?.arrayValue ?? []).compactMap { event in
        event["event"]?.stringValue ?? event["componentId"]?.stringValue
    }
}
