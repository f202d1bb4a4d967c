/// The three tunable numbers of entry view tracking, per controller.
///
/// The initializer does not validate; ``validate()`` does, and every ``ViewTrackingController``
/// initializer calls it, so an invalid value is reported when the controller is created.
public struct ViewTrackingOptions: Sendable, Equatable {
    /// Fraction of the entry (0…1) that must be visible for it to count as visible. The bound
    /// is inclusive: a ratio equal to this value counts. Must be in (0, 1]. Default 0.8.
    public var minVisibleRatio: Double
    /// Milliseconds of continuous visibility before the view event fires. Must be > 0 and
    /// finite. Default 2000.
    public var dwellTimeMs: Double
    /// Milliseconds between duration updates after the view event, while the entry stays
    /// visible. Must be > 0 and finite. Default 5000.
    public var viewDurationUpdateIntervalMs: Double

    /// Creates options without validating them (``validate()`` does).
    /// - Parameters:
    ///   - minVisibleRatio: fraction of the entry that must be visible, in (0, 1]; default 0.8.
    ///   - dwellTimeMs: milliseconds of continuous visibility before the view event; default 2000.
    ///   - viewDurationUpdateIntervalMs: milliseconds between duration updates; default 5000.
    public init(minVisibleRatio: Double = 0.8, dwellTimeMs: Double = 2000, viewDurationUpdateIntervalMs: Double = 5000) {
        self.minVisibleRatio = minVisibleRatio
        self.dwellTimeMs = dwellTimeMs
        self.viewDurationUpdateIntervalMs = viewDurationUpdateIntervalMs
    }

    /// Checks every field (in declaration order).
    /// - Throws: ``ViewTrackingError/invalidOption(_:value:)`` for the first invalid field:
    ///   `minVisibleRatio` outside (0, 1], or a time that is not a finite number > 0
    ///   (NaN and infinities are invalid everywhere).
    public func validate() throws(ViewTrackingError) {
        guard minVisibleRatio.isFinite, minVisibleRatio > 0, minVisibleRatio <= 1 else {
            throw .invalidOption(.minVisibleRatio, value: minVisibleRatio)
        }
        guard dwellTimeMs.isFinite, dwellTimeMs > 0 else {
            throw .invalidOption(.dwellTimeMs, value: dwellTimeMs)
        }
        guard viewDurationUpdateIntervalMs.isFinite, viewDurationUpdateIntervalMs > 0 else {
            throw .invalidOption(.viewDurationUpdateIntervalMs, value: viewDurationUpdateIntervalMs)
        }
    }
}

/// Why a ``ViewTrackingController`` could not be created.
public enum ViewTrackingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field of ``ViewTrackingOptions`` has an invalid value.
    public enum Field: String, Sendable, Equatable, CaseIterable {
        /// ``ViewTrackingOptions/minVisibleRatio``.
        case minVisibleRatio
        /// ``ViewTrackingOptions/dwellTimeMs``.
        case dwellTimeMs
        /// ``ViewTrackingOptions/viewDurationUpdateIntervalMs``.
        case viewDurationUpdateIntervalMs

        /// The rule the field's value must satisfy.
        public var requirement: String {
            switch self {
            case .minVisibleRatio: "a number in (0, 1]"
            case .dwellTimeMs, .viewDurationUpdateIntervalMs: "a finite number of milliseconds > 0"
            }
        }
    }

    /// `field` has `value`, which breaks ``Field/requirement``.
    case invalidOption(Field, value: Double)
    /// The component id (the baseline entry's `sys.id`) is empty.
    case emptyComponentId

    public var description: String {
        switch self {
        case let .invalidOption(field, value):
            "invalid view tracking option \(field.rawValue) = \(value): must be \(field.requirement)"
        case .emptyComponentId:
            "invalid view tracking componentId: must be the baseline entry's non-empty sys.id"
        }
    }
}
