import HostPlatform
import Logging
import OptimizationJSON
import Synchronization

/// Sends Experience API requests the shared core built, within a budget on the injected clock:
/// the HTTP half of a service's Experience call (the shared core builds the request before and
/// interprets the answer after; no engine is held in between).
///
/// A 429 answer whose body names `ERR_PROFILE_OVERLOAD` (the API refuses concurrent work on one
/// profile) is sent again after the policy's backoff for the attempt
/// (``DeliveryPolicy/retryDelayMilliseconds(consecutiveFailures:random:)``), at least its
/// `Retry-After`, while that wait ends before the budget does. Every other answer, whatever its
/// status, is the result: what it means is the shared core's to say.
///
/// **Threading.** Thread-safe; ``send(_:budgetMilliseconds:)`` runs concurrently for any number
/// of callers. ``close()`` cancels every request in flight.
package final class ExperienceSender: Sendable {
    /// How one Experience call ended at the HTTP level.
    package enum Result: Sendable, Equatable {
        /// The API's answer: the first that is not a 429 `ERR_PROFILE_OVERLOAD`, or the last
        /// overload when the next wait would end at or after the budget.
        case answered(FetchResponse)
        /// No answer: the transport failed (its error's description).
        case failed(String)
        /// The budget ran out first; the request in flight (or the wait) was cancelled.
        case timedOut
        /// ``ExperienceSender/close()`` or the calling task's cancellation came first; the request
        /// was cancelled.
        case closed
    }

    private struct Flights {
        var closed = false
        var next: UInt64 = 0
        var tasks: [UInt64: Task<Void, Never>] = [:]
    }

    private let transport: any FetchTransport
    private let clock: any HostClock
    private let policy: DeliveryPolicy
    private let random: @Sendable () -> Double
    private let logger: Logger
    private let flights = Mutex(Flights())

    /// - Parameters:
    ///   - transport: carries the requests (its own timeout bounds each attempt as well).
    ///   - clock: the budget's and the backoff's time (a `ManualClock` in tests).
    ///   - policy: the backoff of overload retries.
    ///   - logger: retries at debug level, without visitor data.
    ///   - random: the jitter's source, a number in [0, 1).
    package init(
        transport: any FetchTransport, clock: any HostClock, policy: DeliveryPolicy, logger: Logger,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.transport = transport
        self.clock = clock
        self.policy = policy
        self.logger = logger
        self.random = random
    }

    /// Sends `request` (again after an overload, as described above) and returns how it ended
    /// within `budgetMilliseconds` of the clock. Cancelling the calling task cancels the request.
    package func send(_ request: FetchRequest, budgetMilliseconds: Double) async -> Result {
        let deadline = clock.now() + budgetMilliseconds
        // The first outcome only: the attempts' or the budget timer's.
        let (outcomes, sink) = AsyncStream.makeStream(of: Result.self, bufferingPolicy: .bufferingOldest(1))
        let attempts = Task { [self] in _ = sink.yield(await attempt(request, deadline: deadline)) }
        let flight = flights.withLock { flights -> UInt64? in
            guard !flights.closed else { return nil }
            flights.next += 1
            flights.tasks[flights.next] = attempts
            return flights.next
        }
        guard let flight else {
            attempts.cancel()
            return .closed
        }
        let timer = clock.schedule(after: .milliseconds(max(0, budgetMilliseconds))) {
            sink.yield(.timedOut)
            attempts.cancel()
        }
        defer {
            timer.cancel()
            sink.finish()
            attempts.cancel()
            _ = flights.withLock { $0.tasks.removeValue(forKey: flight) }
        }
        return await withTaskCancellationHandler {
            for await outcome in outcomes { return outcome }
            return Result.closed  // the calling task was cancelled
        } onCancel: {
            attempts.cancel()
        }
    }

    /// Cancels every request in flight (each ends ``Result/closed``); later sends end `closed`
    /// at once.
    package func close() {
        let running = flights.withLock { flights -> [Task<Void, Never>] in
            flights.closed = true
            defer { flights.tasks = [:] }
            return Array(flights.tasks.values)
        }
        for task in running { task.cancel() }
    }

    /// The attempts of ``send(_:budgetMilliseconds:)``, in its task.
    private func attempt(_ request: FetchRequest, deadline: Double) async -> Result {
        var failures = 0
        while true {
            let response: FetchResponse
            do {
                response = try await DeliveryAttempt.$resendCount.withValue(failures) { try await transport.send(request) }
            } catch {
                return Task.isCancelled ? .closed : .failed(String(describing: error))
            }
            if Task.isCancelled { return .closed }
            guard Self.isProfileOverload(response) else { return .answered(response) }
            failures += 1
            // A 429 is a retry outcome; its Retry-After (seconds or HTTP date) is the shortest wait.
            var retryAfter = 0.0
            if case .retry(_, _, let after?) = DeliveryOutcome(response: response, api: "Experience", now: clock.now()) { retryAfter = after }
            let delay = max(policy.retryDelayMilliseconds(consecutiveFailures: failures, random: random()), retryAfter)
            if clock.now() + delay >= deadline { return .answered(response) }
            logger.debug("Experience API profile overloaded; trying again", metadata: ["delayMs": "\(Int(delay))", "attempt": "\(failures + 1)"])
            guard await pause(milliseconds: delay) else { return .closed }
        }
    }

    /// Waits `milliseconds` of the clock; false when the task was cancelled first.
    private func pause(milliseconds: Double) async -> Bool {
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingOldest(1))
        let timer = clock.schedule(after: .milliseconds(milliseconds)) { tick.yield(()) }
        defer {
            timer.cancel()
            tick.finish()
        }
        for await _ in ticks { return !Task.isCancelled }
        return false
    }

    /// Whether `response` is a 429 whose body is an API envelope with `error.code`
    /// `ERR_PROFILE_OVERLOAD` (bodies over 64 KiB are not read).
    package static func isProfileOverload(_ response: FetchResponse) -> Bool {
        guard response.status == 429, response.body.utf8.count <= 65_536,
              let envelope = try? JSONValue(jsonText: response.body)
        else { return false }
        return envelope["error"]?["code"]?.stringValue == "ERR_PROFILE_OVERLOAD"
    }
}
