import OptimizationJSON
/// The compact `resolvePrepared` answer: `"<sel>|<exp>|<var>|<empty>|<contextId>"`
/// (see JSRuntime/README.md).
package struct CompactResolution: Equatable {
    package var selectionIndex: Int
    package var experienceIndex: Int
    package var variantIndex: Int
    package var isEmptyVariant: Bool
    package var contextId: String?

    package init?(_ text: String) {
        let fields = text.split(separator: "|", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, let selection = Int(fields[0]), let experience = Int(fields[1]),
              let variant = Int(fields[2]), fields[3] == "0" || fields[3] == "1"
        else { return nil }
        selectionIndex = selection
        experienceIndex = experience
        variantIndex = variant
        isEmptyVariant = fields[3] == "1"
        contextId = fields[4].isEmpty ? nil : String(fields[4])
    }

    /// Maps indices back onto the caller's own values; nil if they do not fit the documents.
    package func resolved(entry: ContentfulEntry, selections: SelectedOptimizations?) -> ResolvedOptimizedEntry? {
        var selection: JSONValue?
        if selectionIndex >= 0 {
            // Only the selection returned is built (selections opened from a visitor state are
            // kept as text until read).
            guard let selected = selections?.selection(at: selectionIndex) else { return nil }
            selection = selected
        }
        let location: EntryLocation = variantIndex >= 0 && experienceIndex >= 0
            ? .variant(experience: experienceIndex, variant: variantIndex) : .baseline
        guard let rendered = entry.renderedEntry(at: location) else { return nil }
        return ResolvedOptimizedEntry(
            entry: rendered, selectedOptimization: selection, optimizationContextId: contextId,
            isEmptyVariant: isEmptyVariant)
    }
}
