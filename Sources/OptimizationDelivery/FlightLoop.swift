/// The `flush()` of a delivery queue: awaits the flight in progress (`begin` answers it with
/// `started` false), then starts flights while something is left and each flight it started
/// moved events out of the queue (`sent`, a count that only grows, changed); returns when `begin`
/// answers nil (nothing may be sent now) or a flight it started sent nothing (a failure: the
/// retry is the queue's). With a durable window the queue's size says nothing about progress
/// (the window refills), hence the count.
func runFlights(begin: () -> (task: Task<Void, Never>, started: Bool)?, remaining: () -> Int, sent: () -> UInt64) async {
    while true {
        let before = sent()
        guard let flight = begin() else { return }
        await flight.task.value
        guard flight.started else { continue }
        if remaining() == 0 || sent() == before { return }
    }
}
