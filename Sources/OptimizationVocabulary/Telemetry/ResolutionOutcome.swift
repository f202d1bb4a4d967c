/// What a resolve rendered, for metrics (`optimization_resolves_total`'s `outcome`).
package enum ResolutionOutcome: String, Sendable {
    /// A variant of the entry.
    case variant
    /// The baseline: no selection matched the entry.
    case baseline
    /// The visitor's variant is the empty variant: the entry renders nothing (`isEmptyVariant`).
    case emptyVariant = "empty_variant"
    /// An internal failure: the baseline, logged.
    case fallback
}
