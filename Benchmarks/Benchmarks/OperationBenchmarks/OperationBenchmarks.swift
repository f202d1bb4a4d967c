import Benchmark
import BenchmarkFixtures
import Foundation
import JavaScriptHost
import Optimization

// The library's operations one at a time, on ordo-one/benchmark: `malloc` calls per operation
// (mallocCountTotal, every thread of the process counted), checked against the committed p90
// thresholds in Thresholds/debug (scripts/benchmark-thresholds); wall clock and throughput are
// printed for information and never checked. Each sample is one operation (event_accept: 1,000);
// the operations are BenchmarkOperations's, which `optimization-bench --operations-only` measures
// too.

/// The tolerance of an operation's allocation check: how many `malloc` calls per sample its p90
/// may differ from the committed threshold, either way (an operation that allocates less fails
/// the check too, until its threshold is lowered).
func allocations(tolerance: Int) -> [BenchmarkMetric: BenchmarkThresholds] {
    [.mallocCountTotal: BenchmarkThresholds(absolute: [.p90: tolerance])]
}

/// The configuration of one operation: `iterations` samples measured after `warmup`, each of
/// `scalingFactor` operations; `tolerance` for its allocation check (per sample).
func operation(
    iterations: Int, warmup: Int = 20, scalingFactor: BenchmarkScalingFactor = .one, tolerance: Int
) -> Benchmark.Configuration {
    .init(
        metrics: [.mallocCountTotal, .wallClock, .throughput],
        warmupIterations: warmup,
        scalingFactor: scalingFactor,
        maxDuration: .seconds(30),
        maxIterations: iterations,
        thresholds: allocations(tolerance: tolerance))
}

/// A client for the resolve operations and the entries they resolve (from `setUp()` to
/// `tearDown()`).
final class ResolveFixture {
    var client: OptimizationClient?
    var selections: SelectedOptimizations?
    var entry: ContentfulEntry?
    var coldEntries: [ContentfulEntry] = []
    var next = 0

    func setUp(coldEntries count: Int) throws {
        let client = try BenchmarkOperations.resolvingClient()
        let selections = try BenchmarkOperations.selections()
        let entry = try ContentfulEntry(jsonText: BenchmarkFixture.entryJSON())
        guard client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections).entryId == BenchmarkOperations.variantId else {
            throw BenchmarkSetupFailure("the bench entry did not resolve to its variant")
        }
        coldEntries = try BenchmarkOperations.coldEntries(count: count, firstRevision: 500_000)
        next = 0
        (self.client, self.selections, self.entry) = (client, selections, entry)
    }

    func tearDown() {
        client?.destroy()
        (client, selections, entry, coldEntries) = (nil, nil, nil, [])
    }

    /// The next prepared entry (never resolved before, while `coldEntries` lasts).
    func nextColdEntry() -> ContentfulEntry {
        defer { next += 1 }
        return coldEntries[next % coldEntries.count]
    }
}

/// A started service on the loopback API server (from `setUp()` to `tearDown()`).
final class ServiceFixture {
    var loopback: LoopbackService?
    var next = 0

    func setUp() async throws {
        next = 0
        loopback = try await LoopbackService.start(options: BenchmarkOperations.serviceOptions)
    }

    func tearDown() async {
        await loopback?.stop()
        loopback = nil
    }

    var service: OptimizationService {
        get throws {
            guard let service = loopback?.service else { throw BenchmarkSetupFailure("no service") }
            return service
        }
    }

    func nextIndex() -> Int {
        defer { next += 1 }
        return next
    }
}

/// A started service whose deliveries an ``ImmediateNoContentTransport`` answers (from `setUp()`
/// to `tearDown()`).
final class ImmediateServiceFixture {
    var service: OptimizationService?
    var next = 0

    func setUp() async throws {
        next = 0
        let service = OptimizationService(
            config: OptimizationConfig(clientId: "bench"), options: BenchmarkOperations.serviceOptions,
            environment: .init(transport: ImmediateNoContentTransport()))
        try await service.start()
        self.service = service
    }

    func tearDown() async {
        await service?.shutdown()
        service = nil
    }

    func nextIndex() -> Int {
        defer { next += 1 }
        return next
    }
}

/// A durable outbox in a temporary directory and the events to append (from `setUp()` to
/// `tearDown()`).
final class OutboxFixture {
    var directory: URL?
    var outbox: DurableOutbox?
    var events: [OutboxEvent] = []
    var next = 0

    func setUp(events count: Int) throws {
        let directory = BenchmarkOperations.temporaryOutboxDirectory()
        self.directory = directory
        outbox = try DurableOutbox(
            directory: directory, configuration: BenchmarkOperations.outboxConfiguration(.default), logger: BenchmarkOperations.quietLogger)
        events = (0..<count).map(BenchmarkOperations.outboxEvent)
        next = 0
    }

    func tearDown() {
        outbox?.close()
        outbox = nil
        events = []
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func nextEvent() -> OutboxEvent {
        defer { next += 1 }
        return events[next % events.count]
    }
}

/// A benchmark's setup that could not prepare what it measures.
struct BenchmarkSetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

let benchmarks: @Sendable () -> Void = {
    let resolve = ResolveFixture()

    // An entry resolved again for the same selections (the 2.9 KB bench entry, 20 selections).
    Benchmark("warm_resolve", configuration: operation(iterations: 2_000, tolerance: 1)) { _ in
        guard let client = resolve.client, let entry = resolve.entry, let selections = resolve.selections else { return }
        blackHole(client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections))
    } setup: {
        try resolve.setUp(coldEntries: 1)
    } teardown: {
        resolve.tearDown()
    }

    // A new entry revision each time (entries parsed beforehand): the entry's transfer into the
    // engine and the shared resolver.
    Benchmark("cold_resolve", configuration: operation(iterations: 500, tolerance: 3)) { _ in
        guard let client = resolve.client, let selections = resolve.selections else { return }
        blackHole(client.resolveOptimizedEntry(baseline: resolve.nextColdEntry(), selectedOptimizations: selections))
    } setup: {
        try resolve.setUp(coldEntries: 20 + 500)
    } teardown: {
        resolve.tearDown()
    }

    // The bench entry's JSON text parsed into a ContentfulEntry (validated and indexed; the
    // document's tree is built on demand).
    let entryText = BenchmarkFixture.entryJSON()
    Benchmark("json_parse", configuration: operation(iterations: 1_000, tolerance: 1)) { benchmark in
        do {
            blackHole(try ContentfulEntry(jsonText: entryText))
        } catch {
            benchmark.error("the bench entry did not parse: \(error)")
        }
    }

    // The sealed visitor state of a request: opened (verified, its selections kept as sealed)
    // and sealed again (a returning visitor with a profile id and the 20 bench selections).
    let stateCodec = try? BenchmarkOperations.visitorStateCodec()
    let sealedState = stateCodec.flatMap { try? BenchmarkOperations.sealedVisitorState($0) }
    Benchmark("visitor_state_open_seal", configuration: operation(iterations: 1_000, tolerance: 1)) { benchmark in
        guard let stateCodec, let sealedState else { return benchmark.error("the bench visitor state could not be sealed") }
        do {
            blackHole(try BenchmarkOperations.openAndSealVisitorState(sealedState, codec: stateCodec))
        } catch {
            benchmark.error("\(error)")
        }
    }

    let loopback = ServiceFixture()

    let immediate = ImmediateServiceFixture()

    // One service trackClick for one of 100 visitors, accepted into the Insights queue, with its
    // share of the queue's flushes (one every 25 events, in the background), which an in-process
    // transport answers with 204 at once. A sample is 1,000 events, so that each holds its share
    // of flushes whenever they run: the threshold and the tolerance are per 1,000 events.
    Benchmark("event_accept", configuration: operation(iterations: 10, warmup: 1, scalingFactor: .kilo, tolerance: 4_000)) { benchmark in
        do {
            guard let service = immediate.service else { throw BenchmarkSetupFailure("no service") }
            for _ in benchmark.scaledIterations {
                try await BenchmarkOperations.acceptEvent(on: service, index: immediate.nextIndex())
            }
        } catch {
            benchmark.error("trackClick failed: \(error)")
        }
    } setup: {
        try await immediate.setUp()
    } teardown: {
        await immediate.tearDown()
    }

    // forRequest and one page(): the Experience call built in the request's engine, answered by
    // the loopback API server, the answer interpreted. Its p90 moves by up to ±6 between runs of
    // one build (609, 615 and 621 seen; the HTTP client's connection and event-loop timing), so
    // the tolerance is 15.
    Benchmark("experience_answer", configuration: operation(iterations: 200, tolerance: 15)) { benchmark in
        do {
            try await BenchmarkOperations.answerExperience(on: try loopback.service, index: loopback.nextIndex())
        } catch {
            benchmark.error("page() failed: \(error)")
        }
    } setup: {
        try await loopback.setUp()
    } teardown: {
        await loopback.tearDown()
    }

    let outbox = OutboxFixture()

    // One realistic 700-byte track event appended to a durable outbox with the default
    // durability (events prepared beforehand).
    Benchmark("outbox_append", configuration: operation(iterations: 1_000, tolerance: 2)) { benchmark in
        do {
            try outbox.outbox?.append(outbox.nextEvent())
        } catch {
            benchmark.error("append failed: \(error)")
        }
    } setup: {
        try outbox.setUp(events: 20 + 1_000)
    } teardown: {
        outbox.tearDown()
    }
}
