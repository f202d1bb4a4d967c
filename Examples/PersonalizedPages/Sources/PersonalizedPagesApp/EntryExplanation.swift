import Optimization

/// Why one entry of a page shows the content it shows, taken from what the library reported for
/// the request: the entry's `ResolvedOptimizedEntry` (its `selectedOptimization`, rendered entry
/// and `isEmptyVariant`) and whether consent kept the request from having selections.
/// Shown by the debug panel (``DebugPanel``).
public struct EntryExplanation: Sendable, Equatable {
    /// The reason, in the panel's words.
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// The visitor's selections chose a variant of one of the entry's experiences, and it
        /// is rendered (or, for the empty variant, nothing is).
        case selected
        /// The visitor's selections chose the baseline (variant 0) of one of the entry's
        /// experiences, or a variant the entry does not have, so the baseline is rendered.
        case baseline
        /// The visitor's selections have none for any of the entry's experiences: the baseline.
        case noSelection = "no selection"
        /// The request had no selections because consent withheld them (the Experience call
        /// was blocked by consent, or the visitor's state may not keep selections): the baseline.
        case consent
    }

    /// One experience of the entry (from the baseline's `nt_experiences`).
    public struct Experience: Sendable, Equatable {
        /// `nt_experience_id`, else the entry's `sys.id`.
        public var id: String
        /// `nt_name`; nil when the experience is only a link the document does not resolve.
        public var name: String?
    }

    /// The baseline's `sys.id`.
    public var baselineId: String
    /// The id of the entry rendered; nil for the empty variant (nothing rendered).
    public var renderedEntryId: String?
    /// The selected variant index (0 the baseline); nil when nothing was selected.
    public var variantIndex: Int?
    /// The experience that was selected; otherwise every experience of the entry.
    public var experiences: [Experience]
    /// Why the rendered entry is shown.
    public var reason: Reason

    /// An explanation with the given parts (the debug panel's rows; tests may build them).
    public init(baselineId: String, renderedEntryId: String?, variantIndex: Int?, experiences: [Experience], reason: Reason) {
        self.baselineId = baselineId
        self.renderedEntryId = renderedEntryId
        self.variantIndex = variantIndex
        self.experiences = experiences
        self.reason = reason
    }

    /// The explanation of `resolved`, the library's answer for `baseline`.
    /// - Parameter consentWithheldSelections: true when the request has no selections because of
    ///   consent (its Experience call was blocked with `.blocked(.consent)`, or, without an
    ///   Experience call, the visitor has not given the persistence consent that the state cookie
    ///   needs to keep selections). Only used when nothing was selected for the entry.
    public init(baseline: ContentfulEntry, resolved: ResolvedOptimizedEntry, consentWithheldSelections: Bool) {
        let all = Self.experiences(of: baseline)
        let rendered = resolved.isEmptyVariant ? nil : resolved.entryId
        guard let selection = resolved.selectedOptimization else {
            self.init(
                baselineId: baseline.id, renderedEntryId: rendered, variantIndex: nil, experiences: all,
                reason: consentWithheldSelections ? .consent : .noSelection)
            return
        }
        let index = selection["variantIndex"]?.intValue ?? 0
        let experienceId = selection["experienceId"]?.stringValue ?? ""
        let selected = all.first { $0.id == experienceId } ?? Experience(id: experienceId, name: nil)
        let showsVariant = index > 0 && (resolved.isEmptyVariant || rendered != baseline.id)
        self.init(
            baselineId: baseline.id, renderedEntryId: rendered, variantIndex: index, experiences: [selected],
            reason: showsVariant ? .selected : .baseline)
    }

    /// The experiences in `baseline`'s `fields.nt_experiences`, in order: inline entries with
    /// their id and name, links resolved from a collection's `includes.Entry` when there.
    static func experiences(of baseline: ContentfulEntry) -> [Experience] {
        let included = baseline.document["includes"]?["Entry"]?.arrayValue ?? []
        return (baseline.baseline["fields"]?["nt_experiences"]?.arrayValue ?? []).compactMap { item in
            guard let sysId = item["sys"]?["id"]?.stringValue else { return nil }
            var entry = item
            if item["sys"]?["type"]?.stringValue == "Link" {
                entry = included.first { $0["sys"]?["id"]?.stringValue == sysId } ?? item
            }
            let fields = entry["fields"]
            return Experience(id: fields?["nt_experience_id"]?.stringValue ?? sysId, name: fields?["nt_name"]?.stringValue)
        }
    }
}
