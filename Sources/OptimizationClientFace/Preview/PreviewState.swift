import OptimizationJSON

/// A snapshot of the preview overrides and what they produce (the bridge's
/// `getPreviewState`), for an internal tool or a debug endpoint.
///
/// A value; safe to keep and to pass across threads. Read it through
/// ``OptimizationClient/previewState``.
public struct PreviewState: Sendable, Equatable {
    /// Audience id → forced qualification (`true` activated, `false` deactivated).
    public var audienceOverrides: [String: Bool]
    /// Experience id → forced variant index (0 = baseline).
    public var variantOverrides: [String: Int]
    /// Audience id → whether the visitor's profile qualified for it naturally, captured when the
    /// audience was first overridden.
    public var defaultAudienceQualifications: [String: Bool]
    /// Experience id → its natural (un-overridden) variant index, for overridden experiences
    /// only (0 when the experience is not naturally selected).
    public var defaultVariantIndices: [String: Int]
    /// The selected optimizations in effect (overrides applied), when known.
    public var selectedOptimizations: JSONValue?
    /// The changes (flag sources) in effect (overrides applied), when known.
    public var changes: JSONValue?
    /// The visitor's profile, when known.
    public var profile: JSONValue?
    /// The preview panel flag set through ``OptimizationClient/setPreviewPanelOpen(_:)``.
    public var previewPanelOpen: Bool
    /// Audiences with their experiences, variant distribution and override state, after
    /// ``OptimizationClient/loadDefinitions(audiences:experiences:)``; nil before.
    public var previewModel: JSONValue?
    /// Audience id → name, from the loaded definitions.
    public var audienceNameMap: [String: String]
    /// Experience id → name, from the loaded definitions.
    public var experienceNameMap: [String: String]

    /// Reads the bridge's preview state JSON; nil when it is not an object.
    init?(json value: JSONValue) {
        guard case .object = value else { return nil }
        func present(_ key: String) -> JSONValue? {
            guard let member = value[key], !member.isNull else { return nil }
            return member
        }
        func map<T>(_ key: String, _ read: (JSONValue) -> T?) -> [String: T] {
            var result: [String: T] = [:]
            for (name, member) in value[key]?.objectValue ?? [:] {
                if let element = read(member) { result[name] = element }
            }
            return result
        }
        audienceOverrides = map("audienceOverrides") { $0.boolValue }
        variantOverrides = map("variantOverrides") { $0.intValue }
        defaultAudienceQualifications = map("defaultAudienceQualifications") { $0.boolValue }
        defaultVariantIndices = map("defaultVariantIndices") { $0.intValue }
        selectedOptimizations = present("selectedOptimizations")
        changes = present("changes")
        profile = present("profile")
        previewPanelOpen = value["previewPanelOpen"]?.boolValue ?? false
        previewModel = present("previewModel")
        audienceNameMap = map("audienceNameMap") { $0.stringValue }
        experienceNameMap = map("experienceNameMap") { $0.stringValue }
    }
}
