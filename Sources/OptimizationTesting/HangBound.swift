/// How long a test waits for work that takes well under a second before it calls the wait a
/// hang: 10 minutes, longer than a whole run of a large suite on a busy 2-core machine, where every
/// test starts at once and the task a test waits for can be queued behind all the others. A wait
/// that succeeds ends as soon as its condition holds; only a real hang waits this long.
public let defaultHangBound: Duration = .seconds(600)

/// Runs `body`, failing with ``HangError`` when it has not finished after `limit` of real time:
/// a hang detector for tests whose work takes well under a second, never a wait for a timer.
/// - Throws: what `body` throws, or ``HangError``.
public func withHangBound<T: Sendable>(_ limit: Duration = defaultHangBound, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw HangError(limit: limit) }
        return value
    }
}

/// ``withHangBound(_:_:)``'s body did not finish in time.
public struct HangError: Error, CustomStringConvertible {
    /// The limit that passed.
    public let limit: Duration
    /// The failure, in words.
    public var description: String { "hang: no answer within \(limit)" }
}
