/// The three tunable numbers of entry view tracking, per controller.
///
/// The initializer does not validate; ``validate()`` does, and every ``ViewTrackingController``
/// initializer calls it, so an invalid value is reported when the controller is created.
public struct ViewTrackingOptions: Sendable, Equatable {
    /// Fraction of the entry (0…1) that must be visible for it to count as visible. The bound
    /// is inclusive: a ratio equal to this value counts. Must be in (0, 1]. Default 0.8.
    public var minVisibleRatio: Double
    /// Continuous visibility before the view event fires. Must be > 0. Default 2 s.
    public var dwellTime: Duration
    /// Time between duration updates after the view event, while the entry stays visible. Must
    /// be > 0. Default 5 s.
    public var viewDurationUpdateInterval: Duration

    /// Creates options without validating them (``validate()`` does).
    /// - Parameters:
    ///   - minVisibleRatio: fraction of the entry that must be visible, in (0, 1]; default 0.8.
    ///   - dwellTime: continuous visibility before the view event; default 2 s.
    ///   - viewDurationUpdateInterval: time between duration updates; default 5 s.
    public init(minVisibleRatio: Double = 0.8, dwellTime: Duration = .seconds(2), viewDurationUpdateInterval: Duration = .seconds(5)) {
        self.minVisibleRatio = minVisibleRatio
        self.dwellTime = dwellTime
        self.viewDurationUpdateInterval = viewDurationUpdateInterval
    }

    /// Checks every field (in declaration order).
    /// - Throws: ``ViewTrackingError/invalidOption(_:value:)`` for the first invalid field:
    ///   `minVisibleRatio` outside (0, 1] (NaN and infinities included), or a time that is not
    ///   longer than zero (its value reported in milliseconds).
    public func validate() throws(ViewTrackingError) {
        guard minVisibleRatio.isFinite, minVisibleRatio > 0, minVisibleRatio <= 1 else {
            throw .invalidOption(.minVisibleRatio, value: minVisibleRatio)
        }
        guard dwellTime > .zero else {
            throw .invalidOption(.dwellTime, value: dwellTime.inMilliseconds)
        }
        guard viewDurationUpdateInterval > .zero else {
            throw .invalidOption(.viewDurationUpdateInterval, value: viewDurationUpdateInterval.inMilliseconds)
        }
    }
}

/// Why a ``ViewTrackingController`` could not be created.
public enum ViewTrackingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A field of ``ViewTrackingOptions`` has an invalid value.
    public enum Field: String, Sendable, Equatable, CaseIterable {
        /// ``ViewTrackingOptions/minVisibleRatio``.
        case minVisibleRatio
        /// ``ViewTrackingOptions/dwellTime``.
        case dwellTime
        /// ``ViewTrackingOptions/viewDurationUpdateInterval``.
        case viewDurationUpdateInterval

        /// The rule the field's value must satisfy.
        public var requirement: String {
            switch self {
            case .minVisibleRatio: "a number in (0, 1]"
            case .dwellTime, .viewDurationUpdateInterval: "a duration longer than zero"
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
