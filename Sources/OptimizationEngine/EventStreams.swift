import Synchronization

/// Fans elements out to any number of `AsyncStream`s: the accepted-event and blocked-event
/// streams of `OptimizationClient`.
///
/// Every ``makeStream()`` returns a new stream that receives only elements yielded after it was
/// created (no replay). ``yield(_:)`` never blocks and never suspends, so it may run while the
/// engine's lock is held (inside a native push-back). ``finishAll()`` finishes every current
/// stream; streams made afterwards work normally. Each stream buffers up to
/// ``bufferLimit`` elements its consumer has not read yet, dropping the oldest beyond that.
/// Thread-safe.
package final class EventBroadcaster<Element: Sendable>: Sendable {
    /// Unread elements one stream keeps before dropping its oldest.
    package static var bufferLimit: Int { 10_000 }

    private struct Subscribers {
        var nextId = 0
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
        var yielded = 0
    }

    private let subscribers = Mutex(Subscribers())

    package init() {}

    /// A new stream of every element yielded from now on, until ``finishAll()``.
    package func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferLimit))
        let id = subscribers.withLock { state -> Int in
            state.nextId += 1
            state.continuations[state.nextId] = continuation
            return state.nextId
        }
        // Runs when the consumer stops iterating or the stream finishes; never called with the
        // lock held (finishAll finishes outside it).
        continuation.onTermination = { [weak self] _ in
            self?.remove(id)
        }
        return stream
    }

    /// Delivers `element` to every current stream.
    package func yield(_ element: Element) {
        let targets = subscribers.withLock { state -> [AsyncStream<Element>.Continuation] in
            state.yielded += 1
            return Array(state.continuations.values)
        }
        for continuation in targets {
            continuation.yield(element)
        }
    }

    /// Finishes every current stream (its consumer still reads what was buffered, then ends).
    package func finishAll() {
        let finished = subscribers.withLock { state -> [AsyncStream<Element>.Continuation] in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in finished {
            continuation.finish()
        }
    }

    /// How many elements were yielded in total (for tests).
    package var yieldedCount: Int {
        subscribers.withLock { $0.yielded }
    }

    /// How many streams are currently subscribed (for tests).
    package var subscriberCount: Int {
        subscribers.withLock { $0.continuations.count }
    }

    private func remove(_ id: Int) {
        _ = subscribers.withLock { $0.continuations.removeValue(forKey: id) }
    }
}
