import OptimizationDelivery
import Logging
import Synchronization
import HostPlatform
import OptimizationVocabulary

extension SharedOutboxRelay {
    // MARK: The worker

    func requestWake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        commandSink.yield(.wake)
    }

    func scheduleTick() {
        let timer = clock.schedule(after: configuration.pollInterval) { [weak self] in
            guard let self else { return }
            self.state.withLock { $0.erasureCheckDue = true }
            self.requestWake()
            self.scheduleTick()
        }
        let keep = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.ticker = timer
            return true
        }
        if !keep { timer.cancel() }
    }

    func work() async {
        for await command in commands {
            switch command {
            case .wake:
                wakePending.store(false, ordering: .releasing)
                await settle()
                await renewLeasesIfDue()
                if await readErasuresIfDue() {
                    while await claimRound() {}
                }
            case .pull(let claim, let continuation):
                await settle()
                if claim, await readErasuresIfDue() {
                    while await claimRound() {}
                }
                continuation.resume()
            case .erase(let profileId, let continuation):
                continuation.resume(returning: await erase(profileId))
            case .close(let continuation):
                await shutDown()
                continuation.resume()
                commandSink.finish()
                return
            }
        }
    }

    func shutDown() async {
        let released = state.withLock { state -> [UInt64] in
            state.closed = true
            state.ticker?.cancel()
            state.ticker = nil
            state.released.append(contentsOf: state.held.values.map(\.sequence))
            state.held.removeAll()
            return state.released
        }
        await settle()
        if !released.isEmpty {
            logger.info("claimed shared-outbox events still queued were given back", metadata: ["count": "\(released.count)"])
        }
    }

    func reportWorkerFailure(_ operation: String, _ error: any Error) {
        let first = state.withLock { state -> Bool in
            defer { state.workerOutageLogged = true }
            return !state.workerOutageLogged
        }
        if first {
            logger.warning("the shared outbox cannot be reached; retrying on the next poll", metadata: ["operation": "\(operation)", "error": "\(error)"])
        }
    }

    func reportWorkerSuccess() {
        let recovered = state.withLock { state -> Bool in
            defer { state.workerOutageLogged = false }
            return state.workerOutageLogged
        }
        if recovered { logger.notice("the shared outbox is reachable again") }
    }
}
