import OrderedCollections
import OptimizationJSON

/// What a server hands the browser with a rendered page (API v2): how the page may be cached,
/// the visitor's profile id, and the replay, the exact events the server evaluated without
/// storing them (a preflight call), which the browser commits once.
///
/// A handoff that carries the profile, its id or a replay is private to one visitor: render
/// the page with `Cache-Control: private, no-store`. ``cacheSafetyWarnings`` and
/// ``assertCacheSafe()`` catch a handoff whose cache scope says otherwise.
public struct OptimizationHandoff: Sendable, Equatable {
    /// Who may reuse the page the handoff is rendered into.
    public enum CacheScope: String, Sendable, CaseIterable {
        /// One visitor's request: never shared.
        case privateRequest = "private-request"
        /// Shared by every visitor with the same selections (a `key` is required).
        case publicPermutation = "public-permutation"
        /// Shared by every visitor.
        case `static` = "static"
    }

    /// How the page may be cached.
    public struct Cache: Sendable, Equatable {
        /// Who may reuse the page.
        public var scope: CacheScope
        /// The cache key of a shared page.
        public var key: String?
        /// Tags for purging.
        public var tags: [String]?

        /// A cache description; each parameter sets the property of the same name.
        public init(scope: CacheScope, key: String? = nil, tags: [String]? = nil) {
            self.scope = scope
            self.key = key
            self.tags = tags
        }
    }

    /// The events the browser commits once, on the route they were evaluated for.
    public struct Replay: Sendable, Equatable {
        /// The path (and query) of the page, starting with `/`: the browser replays only there.
        public var routeKey: String
        /// The Experience events, last the `page` event, as the preview call sent them.
        public var events: [JSONValue]
        /// The locale of the evaluation, when the request had one.
        public var locale: String?

        /// A replay; each parameter sets the property of the same name.
        public init(routeKey: String, events: [JSONValue], locale: String? = nil) {
            self.routeKey = routeKey
            self.events = events
            self.locale = locale
        }
    }

    /// How the page may be cached.
    public var cache: Cache
    /// The visitor's profile id, when known.
    public var profileId: String?
    /// The events to commit, when the server prepared them.
    public var replay: Replay?
    /// State the host hands over with the page (`{selectedOptimizations?, changes?, profile?}`).
    public var state: JSONValue?

    /// A handoff; each parameter sets the property of the same name.
    public init(cache: Cache, profileId: String? = nil, replay: Replay? = nil, state: JSONValue? = nil) {
        self.cache = cache
        self.profileId = profileId
        self.replay = replay
        self.state = state
    }

    /// A handoff as the shared core describes it (`{cache: {scope, key?, tags?}, profileId?,
    /// replay?: {routeKey, events, locale?}, state?}`); nil when it has another shape.
    public init?(json: JSONValue) {
        guard let scope = json["cache"]?["scope"]?.stringValue.flatMap(CacheScope.init(rawValue:)) else { return nil }
        cache = Cache(
            scope: scope, key: json["cache"]?["key"]?.stringValue,
            tags: json["cache"]?["tags"]?.arrayValue.map { $0.compactMap(\.stringValue) })
        profileId = json["profileId"]?.stringValue
        if let replay = json["replay"] {
            guard let routeKey = replay["routeKey"]?.stringValue, let events = replay["events"]?.arrayValue else { return nil }
            self.replay = Replay(routeKey: routeKey, events: events, locale: replay["locale"]?.stringValue)
        }
        state = json["state"]
    }

    /// The handoff as JSON, for the page (the shape ``init(json:)`` reads).
    public var json: JSONValue {
        var cacheObject: OrderedDictionary<String, JSONValue> = ["scope": .string(cache.scope.rawValue)]
        if let key = cache.key { cacheObject["key"] = .string(key) }
        if let tags = cache.tags { cacheObject["tags"] = .array(tags.map(JSONValue.string)) }
        var object: OrderedDictionary<String, JSONValue> = ["cache": .object(cacheObject)]
        if let state { object["state"] = state }
        if let profileId { object["profileId"] = .string(profileId) }
        if let replay {
            var replayObject: OrderedDictionary<String, JSONValue> = ["routeKey": .string(replay.routeKey), "events": .array(replay.events)]
            if let locale = replay.locale { replayObject["locale"] = .string(locale) }
            object["replay"] = .object(replayObject)
        }
        return .object(object)
    }

    /// What makes this handoff unsafe to cache as its scope says; empty when it is safe. A
    /// shared scope (`public-permutation`, `static`) must not carry private data: the first of
    /// `state.profile`, `profileId` and `replay` it carries is reported; a `public-permutation`
    /// needs a cache key. A `private-request` handoff is always safe.
    public var cacheSafetyWarnings: [CacheSafetyWarning] {
        guard cache.scope != .privateRequest else { return [] }
        var warnings: [CacheSafetyWarning] = []
        let privateField: [String]? =
            if state?["profile"] != nil { ["state", "profile"] } else if profileId != nil { ["profileId"] } else if replay != nil { ["replay"] } else { nil }
        if let privateField {
            warnings.append(CacheSafetyWarning(
                code: .profileStateInPublicCache, path: privateField,
                message: "a \(cache.scope.rawValue) handoff carries \(privateField.joined(separator: ".")), which belongs to one visitor"))
        }
        if cache.scope == .publicPermutation, cache.key?.isEmpty ?? true {
            warnings.append(CacheSafetyWarning(
                code: .missingPublicPermutationCacheKey, path: ["cache", "key"], message: "a public-permutation handoff needs a cache key"))
        }
        return warnings
    }

    /// Throws when ``cacheSafetyWarnings`` is not empty.
    /// - Throws: ``OptimizationHandoffError/unsafeToCache(_:)`` with every warning.
    public func assertCacheSafe() throws(OptimizationHandoffError) {
        let warnings = cacheSafetyWarnings
        if !warnings.isEmpty { throw .unsafeToCache(warnings) }
    }
}

/// One reason a handoff must not be cached as its scope says.
public struct CacheSafetyWarning: Sendable, Equatable {
    /// The kinds of problem.
    public enum Code: String, Sendable, CaseIterable {
        /// A shared scope carries the profile, its id or a replay.
        case profileStateInPublicCache = "profile-state-in-public-cache"
        /// A `public-permutation` handoff has no cache key.
        case missingPublicPermutationCacheKey = "missing-public-permutation-cache-key"
    }

    /// What is wrong.
    public let code: Code
    /// Where, as the keys from the handoff's root.
    public let path: [String]
    /// The problem in words.
    public let message: String
}

/// Why a handoff was refused.
public enum OptimizationHandoffError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The handoff's cache scope lets visitors share data that belongs to one of them.
    case unsafeToCache([CacheSafetyWarning])

    public var description: String {
        switch self {
        case .unsafeToCache(let warnings): return warnings.map(\.message).joined(separator: "; ")
        }
    }
}
