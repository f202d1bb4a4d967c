import OptimizationContent
import OptimizationJSON

/// An Experience API answer as the shared core reads it: the visitor's profile, the selected
/// optimizations and the changes (custom flags and Experiences entities), read by
/// ``OptimizationClient/parseExperienceAnswer(_:apiVersion:)`` with the very parse the delivery
/// path applies to a live answer. So an answer read from a file or a cache gives the same
/// selections, byte for byte, as the same answer received from the API (each selection carries
/// `sticky`; keys the core does not know are left out).
///
/// A value type; `Sendable`.
public struct ExperienceAnswer: Sendable, Equatable {
    /// The `data.profile` object (it has a string `id`).
    public var profile: JSONValue
    /// The `data.experiences`, each `{experienceId, variantIndex, variants, sticky}`.
    public var selectedOptimizations: SelectedOptimizations
    /// The `data.changes` of the types the core knows (`Variable`, `Experience`, `Fragment`).
    public var changes: [JSONValue]
    /// How many changes of other types were left out.
    public var ignoredChanges: Int

    /// The profile's `id`.
    public var profileId: String? { profile["id"]?.stringValue }
}

/// Why ``OptimizationClient/parseExperienceAnswer(_:apiVersion:)`` returned no answer.
public enum ExperienceAnswerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client has no engine: before `initialize` or after `destroy`.
    case notInitialized
    /// The text is not a valid Experience API answer of that version; the message names what is
    /// wrong (for example `data.experiences is not an array`).
    case invalid(String)

    public var description: String {
        switch self {
        case .notInitialized: return "SDK not initialized. Call initialize() first."
        case .invalid(let message): return message
        }
    }
}
