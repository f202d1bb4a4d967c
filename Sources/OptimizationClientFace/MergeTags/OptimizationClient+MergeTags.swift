import JavaScriptHost
import OrderedCollections
import OptimizationJSON
import OptimizationContent
import OptimizationEngine

// Merge tags.
//
// The value of a merge tag is the first present value among the profile paths its
// `nt_mergetag_id` may denote (`a_b_c` is tried as `a_b_c`, `a.b_c`, `a.b.c`); any present
// string, number or boolean is returned as its string — `0` and `false` included. A missing,
// `null` or `""` value, an object or array, or a profile that is not a complete Experience API
// Profile gives `nt_fallback` (nil when the entry has none).
//
// Threading: synchronous, safe from any thread (the engine's lock for each value). Errors:
// values never throw; nil before `initialize` (or after ``destroy()``) and for a value that is
// not a valid resolved `nt_mergetag` entry.
extension OptimizationClient {
    /// The value of merge tag `mergeTagEntry` (a resolved `nt_mergetag` entry) for the current
    /// profile (``state``'s `profile`).
    public func getMergeTagValue(_ mergeTagEntry: JSONValue) -> String? {
        mergeTagValue(mergeTagEntry, profile: nil)
    }

    /// The value of merge tag `mergeTagEntry` for `profile` (an Experience API Profile object)
    /// instead of the current one.
    public func getMergeTagValue(_ mergeTagEntry: JSONValue, profile: JSONValue) -> String? {
        mergeTagValue(mergeTagEntry, profile: profile)
    }

    /// Renders every merge tag embedded in `entry`'s rich text (see
    /// ``MergeTags/references(in:field:)``).
    /// - Parameters:
    ///   - entry: the entry whose rich-text fields hold the merge tags.
    ///   - profile: the profile to render for; nil uses the current profile.
    ///   - field: only this rich-text field; nil scans every rich-text field.
    /// - Returns: merge tag id → value, in document order. Before `initialize` every value is nil.
    /// - Throws: ``MergeTags/ScanError`` when `field` is missing or not rich text.
    public func mergeTagValues(
        in entry: ContentfulEntry, profile: JSONValue? = nil, field: String? = nil
    ) throws(MergeTags.ScanError) -> MergeTagValues {
        let scan = try MergeTags.references(in: entry, field: field)
        var values = OrderedDictionary<String, String?>()
        for reference in scan.references {
            values[reference.id] = mergeTagValue(reference.entry, profile: profile)
        }
        return MergeTagValues(values: values, unresolvedLinks: scan.unresolvedLinks)
    }

    private func mergeTagValue(_ entry: JSONValue, profile: JSONValue?) -> String? {
        guard let runtime = currentRuntime, let entryText = try? entry.jsonText() else { return nil }
        var arguments: [JavaScriptValue] = [.json(entryText)]
        if let profile {
            guard let profileText = try? profile.jsonText() else { return nil }
            arguments.append(.json(profileText))
        }
        do {
            return try runtime.engine.call(BridgeContract.Visitor.getMergeTagValue, arguments: arguments).stringValue
        } catch {
            environment.logger.error("\(BridgeContract.Visitor.getMergeTagValue.path) failed", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
