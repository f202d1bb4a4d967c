extension Int {
    /// A JavaScript number as an `Int`, never trapping: rounded toward zero and clamped to
    /// `Int.min...Int.max`; nil for NaN and ±infinity.
    ///
    /// `Int(_: Double)` traps on a finite value beyond ±2^63, which any script can return (a
    /// count of `1e300`, a thrown object whose `line` is huge): every number that crosses from
    /// JavaScript into a Swift integer goes through this instead.
    package init?(clampingJavaScriptNumber number: Double) {
        guard number.isFinite else { return nil }
        let whole = number.rounded(.towardZero)
        if whole >= Double(Int.max) {
            self = .max
        } else if whole <= Double(Int.min) {
            self = .min
        } else {
            self = Int(whole)
        }
    }
}
