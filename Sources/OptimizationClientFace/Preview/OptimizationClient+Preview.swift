import HostPlatform
import OptimizationJSON
import OptimizationEngine

// Preview overrides: force an audience or a variant for this client's
// visitor, e.g. from an internal tool or a debug endpoint. No UI.
//
// An override changes BOTH the selected optimizations (``state``, and every resolution that uses
// the current selections) AND the flags derived from the overridden experiences' inline-variable
// components, for experiences whose `nt_experience` entry the engine has seen (through
// `resolveOptimizedEntry(baseline:selectedOptimizations:)` or
// ``loadDefinitions(audiences:experiences:)``). New Experience API data keeps the overrides
// applied; resetting restores the natural values. ``reset()`` clears every override.
//
// Threading: every method is synchronous and safe from any thread; ``state`` reflects the change
// before the method returns. Errors: none are thrown; before `initialize` (or after
// ``destroy()``) the mutations do nothing and ``previewState`` is nil. An invalid argument (a
// negative variant index) is logged and ignored.
extension OptimizationClient {
    /// Forces audience `id`: `qualified` true activates it (each of `experienceIds` → variant 1),
    /// false deactivates it (→ variant 0). With no experience ids only the audience record
    /// changes.
    public func overrideAudience(id: String, qualified: Bool, experienceIds: [String]) {
        callSync(BridgeContract.Visitor.overrideAudience, .string(id), .bool(qualified), .json(Self.stringArrayJSON(experienceIds)))
    }

    /// Forces experience `experienceId` to `variantIndex` (0 = baseline).
    public func overrideVariant(experienceId: String, variantIndex: Int) {
        callSync(BridgeContract.Visitor.overrideVariant, .string(experienceId), .number(Double(variantIndex)))
    }

    /// Drops the override of audience `id` and the variant overrides it set.
    public func resetAudienceOverride(id: String) {
        callSync(BridgeContract.Visitor.resetAudienceOverride, .string(id))
    }

    /// Drops the variant override of `experienceId` (no-op when there is none).
    public func resetVariantOverride(experienceId: String) {
        callSync(BridgeContract.Visitor.resetVariantOverride, .string(experienceId))
    }

    /// Drops every override; selections and changes return to their natural values.
    public func resetAllOverrides() {
        callSync(BridgeContract.Visitor.resetAllOverrides)
    }

    /// Marks the preview panel open or closed (reported in ``previewState``).
    public func setPreviewPanelOpen(_ open: Bool) {
        callSync(BridgeContract.Visitor.setPreviewPanelOpen, .bool(open))
    }

    /// Hands the engine the space's audience and experience definitions — two Content Delivery
    /// API collection responses of `nt_audience` and `nt_experience` entries (`items`, optional
    /// `includes`) — for ``PreviewState/previewModel`` and for flag derivation.
    /// - Returns: how many audiences and experiences were loaded.
    /// - Throws: `OptimizationError/notInitialized`; `OptimizationError/bridgeError(_:)` when
    ///   a collection has no `items` array.
    @discardableResult
    public func loadDefinitions(audiences: JSONValue, experiences: JSONValue) throws(OptimizationError) -> (audiences: Int, experiences: Int) {
        guard let runtime = currentRuntime else { throw .notInitialized }
        let result: JSONValue
        do {
            let text = try runtime.engine.call(
                BridgeContract.Visitor.loadDefinitions, .json(try audiences.jsonText()), .json(try experiences.jsonText())).stringValue ?? ""
            result = try JSONValue(jsonText: text)
        } catch {
            throw .bridgeError("loadDefinitions failed: \(error)")
        }
        if let message = result["error"]?.stringValue { throw .bridgeError(message) }
        return (result["audienceCount"]?.intValue ?? 0, result["experienceCount"]?.intValue ?? 0)
    }

    /// The current overrides and their effect; nil before `initialize` (or after ``destroy()``).
    /// Computed on each access.
    public var previewState: PreviewState? {
        guard let text = callSync(BridgeContract.Visitor.getPreviewState)?.stringValue,
              let value = try? JSONValue(jsonText: text)
        else { return nil }
        return PreviewState(json: value)
    }

    private static func stringArrayJSON(_ values: [String]) -> String {
        (try? JSONValue.array(values.map(JSONValue.string)).jsonText()) ?? "[]"
    }
}
