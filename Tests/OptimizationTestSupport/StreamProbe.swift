import Foundation

/// Reads a stream without ever waiting for an element that was not yielded: `yielded` tells how
/// many elements exist so far.
package struct StreamProbe<Element: Sendable> {
    private var iterator: AsyncStream<Element>.AsyncIterator
    private var read = 0
    private let yielded: @Sendable () -> Int

    package init(_ stream: AsyncStream<Element>, yielded: @escaping @Sendable () -> Int) {
        iterator = stream.makeAsyncIterator()
        self.yielded = yielded
        read = yielded()
    }

    /// The elements yielded since the last read, without waiting for more.
    package mutating func newElements() async -> [Element] {
        var out: [Element] = []
        while read < yielded() {
            guard let next = await iterator.next() else { break }
            out.append(next)
            read += 1
        }
        return out
    }

    /// Reads new elements until one matches `predicate`, polling for at most ``hangBound``, for
    /// an element yielded after the effect a test already saw. Elements read before the match
    /// are consumed.
    /// - Returns: the first match, nil when none came within the bound.
    package mutating func first(where predicate: (Element) -> Bool) async throws -> Element? {
        let deadline = ContinuousClock.now + hangBound
        repeat {
            if let match = await newElements().first(where: predicate) { return match }
            try await Task.sleep(for: .milliseconds(2))
        } while ContinuousClock.now < deadline
        return nil
    }
}
