import JavaScriptHost
import Synchronization

/// A `FetchTransport` in the test process: records every request, answers from a script (200
/// when it is empty), and can hold requests until the test releases them, so a test decides
/// exactly when a flight ends.
final class ScriptedTransport: FetchTransport {
    enum Answer: Sendable {
        case status(Int, headers: [String: String] = [:])
        case failure
    }

    private struct State {
        var requests: [FetchRequest] = []
        var script: [Answer] = []
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        var arrivals: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    struct TransportFailure: Error, CustomStringConvertible {
        var description: String { "connection refused" }
    }

    func send(_ request: FetchRequest) async throws -> FetchResponse {
        let (hold, waiting) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.requests.append(request)
            defer { state.arrivals.removeAll() }
            return (state.holding, state.arrivals)
        }
        for arrival in waiting { arrival.resume() }
        if hold {
            await withCheckedContinuation { continuation in
                let release = state.withLock { state -> Bool in
                    guard state.holding else { return true }
                    state.held.append(continuation)
                    return false
                }
                if release { continuation.resume() }
            }
        }
        let answer = state.withLock { $0.script.isEmpty ? Answer.status(200) : $0.script.removeFirst() }
        switch answer {
        case .status(let status, let headers): return FetchResponse(status: status, headers: headers)
        case .failure: throw TransportFailure()
        }
    }

    /// Answers for the next requests, in order.
    func script(_ answers: Answer...) {
        state.withLock { $0.script += answers }
    }

    /// Holds every request from now on until ``release()``.
    func hold() {
        state.withLock { $0.holding = true }
    }

    /// Lets every held request (and later ones) go on.
    func release() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holding = false
            defer { state.held.removeAll() }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    var requests: [FetchRequest] {
        state.withLock { $0.requests }
    }

    /// Returns once at least `count` requests arrived (a hang is caught by the suite's time limit).
    func waitForRequests(_ count: Int) async {
        while true {
            let arrived = await withCheckedContinuation { continuation in
                let enough = state.withLock { state -> Bool in
                    if state.requests.count >= count { return true }
                    state.arrivals.append(continuation)
                    return false
                }
                if enough { continuation.resume() }
            } as Void
            _ = arrived
            if state.withLock({ $0.requests.count >= count }) { return }
        }
    }
}
