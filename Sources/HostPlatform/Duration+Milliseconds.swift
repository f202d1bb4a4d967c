extension Duration {
    /// This duration in milliseconds, with fractions (the unit of ``HostClock`` and of the
    /// shared JavaScript's settings).
    package var inMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
    }

    /// This duration in whole milliseconds, rounded toward zero and clamped to `Int`.
    package var wholeMilliseconds: Int {
        let value = inMilliseconds.rounded(.towardZero)
        if value >= Double(Int.max) { return Int.max }
        if value <= Double(Int.min) { return Int.min }
        return Int(value)
    }
}
