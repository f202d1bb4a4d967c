/// The failure count and open window of one delivery path, as a value (its owner guards it):
/// ``DeliveryCircuit`` for concurrent callers, ``InsightsQueue`` for its flushes.
///
/// After ``DeliveryPolicy/maxConsecutiveFailures`` consecutive failures the circuit is open for
/// ``DeliveryPolicy/circuitOpenDuration`` (or the server's `Retry-After`, when longer). Once the
/// window has passed, ``admit(now:policy:)`` lets ONE caller through as the probe; the others are
/// refused until it reports.
struct CircuitState: Sendable, Equatable {
    private(set) var consecutiveFailures = 0
    /// Milliseconds since the epoch until which the circuit is open; 0 while it is closed.
    private(set) var openUntil: Double = 0
    private(set) var probing = false

    /// Counts a failure; opens the circuit at the limit.
    /// - Parameter minimumOpenMilliseconds: the server's `Retry-After`: the shortest open window.
    /// - Returns: whether this failure opened (or re-opened) the circuit.
    @discardableResult
    mutating func recordFailure(now: Double, policy: DeliveryPolicy, minimumOpenMilliseconds: Double = 0) -> Bool {
        probing = false
        consecutiveFailures += 1
        guard consecutiveFailures >= policy.maxConsecutiveFailures else {
            openUntil = 0
            return false
        }
        openUntil = now + max(policy.circuitOpenDuration.inMilliseconds, minimumOpenMilliseconds.rounded(.up))
        return true
    }

    /// Closes the circuit and frees the probe.
    /// - Returns: the failures counted before.
    @discardableResult
    mutating func recordSuccess() -> Int {
        defer { self = CircuitState() }
        return consecutiveFailures
    }

    /// Whether a caller may send now: always while closed; while open never; once the window has
    /// passed the first caller (the probe) and no other until it reports.
    mutating func admit(now: Double, policy: DeliveryPolicy) -> Bool {
        if consecutiveFailures < policy.maxConsecutiveFailures { return true }
        if probing || now < openUntil { return false }
        probing = true
        return true
    }

    /// Frees the probe of an admitted call that ended without a request.
    mutating func release() {
        probing = false
    }

    func isOpen(now: Double) -> Bool {
        openUntil > 0 && now < openUntil
    }
}
