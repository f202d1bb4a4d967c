import HostPlatform

/// Runs `operation` in a task of its own and waits for it at most `timeout` of `clock`'s time
/// (a timer on the clock, so a `ManualClock` decides when the deadline passes).
///
/// At the deadline the caller stops waiting; the operation is not cancelled and goes on in its
/// task (the caller then usually closes what it was waiting on, which ends it). Unlike a task
/// group, this never waits for an operation that ignores cancellation.
/// - Returns: true when the operation finished first; false when the deadline passed or the
///   calling task was cancelled first.
func withDeadline(
    _ timeout: Duration, on clock: any HostClock, _ operation: @escaping @Sendable () async -> Void
) async -> Bool {
    // The stream keeps the first outcome only: whichever of the operation and the timer ends first.
    let (outcomes, sink) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingOldest(1))
    let timer = clock.schedule(after: timeout) { sink.yield(false) }
    defer {
        timer.cancel()
        sink.finish()
    }
    Task {
        await operation()
        sink.yield(true)
    }
    for await finished in outcomes { return finished }
    return false  // the calling task was cancelled: the iteration ended without an outcome
}
