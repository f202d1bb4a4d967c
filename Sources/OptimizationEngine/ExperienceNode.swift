import OrderedCollections
import OptimizationJSON

/// An entity of Contentful Experiences that an `exo_node_*` event names (API v2): what was
/// seen, clicked or hovered, and which optimization and variant rendered it.
public struct ExperienceNode: Sendable, Equatable {
    /// The kinds of entity an event may name.
    public enum Kind: String, Sendable, CaseIterable {
        /// An experience.
        case experience = "Experience"
        /// A fragment.
        case fragment = "Fragment"
        /// A fragment defined inline.
        case inlineFragment = "InlineFragment"
        /// A component defined inline.
        case inlineComponent = "InlineComponent"
    }

    /// The entity's id.
    public var entityId: String
    /// What kind of entity it is.
    public var entityKind: Kind
    /// The id of the entity's kind (its type), when known.
    public var entityKindId: String?
    /// The optimization that selected the variant, if any.
    public var optimizationId: String?
    /// The experience the entity sits in, if any.
    public var parentExperienceId: String?
    /// The rendered variant's id, if any.
    public var variantId: String?
    /// The Contentful entries the entity rendered, if known.
    public var entryIds: [String]?
    /// Parameters the entity was rendered with, if any.
    public var parameters: OrderedDictionary<String, JSONValue>?
    /// The rendered variant's index (0 for the baseline), if known.
    public var variantIndex: Int?

    /// A node; each parameter sets the property of the same name.
    public init(
        entityId: String, entityKind: Kind, entityKindId: String? = nil, optimizationId: String? = nil,
        parentExperienceId: String? = nil, variantId: String? = nil, entryIds: [String]? = nil,
        parameters: OrderedDictionary<String, JSONValue>? = nil, variantIndex: Int? = nil
    ) {
        self.entityId = entityId
        self.entityKind = entityKind
        self.entityKindId = entityKindId
        self.optimizationId = optimizationId
        self.parentExperienceId = parentExperienceId
        self.variantId = variantId
        self.entryIds = entryIds
        self.parameters = parameters
        self.variantIndex = variantIndex
    }

    /// The event payload's node members.
    var payload: OrderedDictionary<String, JSONValue> {
        var payload: OrderedDictionary<String, JSONValue> = ["entityId": .string(entityId), "entityKind": .string(entityKind.rawValue)]
        if let entityKindId { payload["entityKindId"] = .string(entityKindId) }
        if let optimizationId { payload["optimizationId"] = .string(optimizationId) }
        if let parentExperienceId { payload["parentExperienceId"] = .string(parentExperienceId) }
        if let variantId { payload["variantId"] = .string(variantId) }
        if let entryIds { payload["entryIds"] = .array(entryIds.map(JSONValue.string)) }
        if let parameters { payload["parameters"] = .object(parameters) }
        if let variantIndex { payload["variantIndex"] = .number(JSONNumber(variantIndex)) }
        return payload
    }
}
