// `OutboxCrashHelper service …`: an OptimizationService with an outbox directory and a small
// Insights window accepts scripted `trackClick` events of three visitors while its API is down,
// printing a line for each only after the call that accepted it returned, until it is killed
// (Tests/OptimizationServiceFaceTests/ServiceOutboxCrashTests.swift).
//
//   OutboxCrashHelper service <directory> <experienceBaseURL> <insightsBaseURL> <seed> <generation> <events> <window>
//
// stdout, one write(2) per line:
//   started                                    (start() returned: recovery is done)
//   accepted <profile> <name>                  (trackClick(componentId: name) returned accepted)
//   dropped <profile> <name>                   (a queue event reported the event dropped)
//   done                                       (all <events> accepted)
// Exit status: 0 done, 64 usage, 75 start failed (the directory is in use), 74 other errors.
import Foundation
import Optimization

func runServiceMode(_ arguments: [String]) async -> Never {
    guard arguments.count == 7, let seed = UInt64(arguments[3]), let generation = Int(arguments[4]),
          let total = Int(arguments[5]), let window = Int(arguments[6]) else {
        fail("usage: OutboxCrashHelper service <directory> <experienceBaseURL> <insightsBaseURL> <seed> <generation> <events> <window>", status: 64)
    }
    let service = OptimizationService(
        config: OptimizationConfig(
            clientId: "org-1", api: OptimizationAPIConfig(experienceBaseURL: arguments[1], insightsBaseURL: arguments[2])),
        options: .init(engines: 1, insightsMaxEvents: window, outboxDirectory: URL(fileURLWithPath: arguments[0])))
    let reports = service.queueEvents
    Task {
        for await report in reports {
            for name in droppedNames(report) { emit("dropped - \(name)") }
        }
    }
    do {
        try await service.start()
    } catch {
        fail("\(error)", status: 75)
    }
    emit("started")
    var random = SeededGenerator(state: seed &* 31 &+ UInt64(generation))
    for number in 1...max(1, total) {
        let profile = "visitor-\(Int.random(in: 0..<3, using: &random))"
        let name = "g\(generation)-\(number)"
        do {
            let request = service.forRequest(RequestOptions(consent: true, profileId: profile))
            guard try await request.trackClick(TrackClickPayload(componentId: name)).accepted else {
                fail("trackClick \(name) was not accepted", status: 74)
            }
            emit("accepted \(profile) \(name)")
        } catch {
            fail("\(error)", status: 74)
        }
    }
    await service.shutdown()
    emit("done")
    exit(0)
}
