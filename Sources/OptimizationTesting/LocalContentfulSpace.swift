import OptimizationContent
import Foundation
import Optimization
import OrderedCollections
import Synchronization

/// The content of one Contentful space as the ``LocalContentfulDeliveryServer`` serves it:
/// entries and assets by `sys.id`, stored in single-locale delivery form, plus the Content
/// Delivery API's collection contract over them (`GET /spaces/{space}/environments/{env}/entries`).
///
/// **Threading.** Thread-safe (one lock); changes are seen by the next request.
public final class LocalContentfulSpace: Sendable {
    private struct Content {
        var entries: [String: JSONValue] = [:]
        var assets: [String: JSONValue] = [:]
    }

    /// The space id the server answers for.
    public let spaceId: String
    /// Environments the server answers for (others are 404).
    public let environments: Set<String>
    /// The access token `Authorization: Bearer …` (or `access_token=`) must carry.
    public let accessToken: String
    private let content = Mutex(Content())

    /// Creates an empty space.
    /// - Parameters:
    ///   - spaceId: the space id the server answers for; default `local-space`.
    ///   - environments: the environments the server answers for; default `master` only.
    ///   - accessToken: the token requests must carry; default `local-cda-token`.
    public init(spaceId: String = "local-space", environments: Set<String> = ["master"], accessToken: String = "local-cda-token") {
        self.spaceId = spaceId
        self.environments = environments
        self.accessToken = accessToken
    }

    // MARK: Content

    /// Adds (or replaces, by `sys.id`) every entry and asset found in the JSON files of
    /// `directory`: CDA collection responses (`items`, `includes.Entry`, `includes.Asset`) or
    /// single entries/assets. Returns the number of entries now stored.
    /// - Throws: the file system's error, or the `JSONError` of a file that is not JSON.
    @discardableResult
    public func load(directory: URL) throws -> Int {
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        for file in files {
            let document = try JSONValue(jsonData: Data(contentsOf: file))
            if let items = document["items"]?.arrayValue {
                for item in items + (document["includes"]?["Entry"]?.arrayValue ?? [])
                    + (document["includes"]?["Asset"]?.arrayValue ?? []) {
                    put(item)
                }
            } else {
                put(document)
            }
        }
        return entryCount
    }

    /// Stores `resource` (an object with `sys.type` `Entry` or `Asset` and a string `sys.id`),
    /// replacing the one with the same id. Anything else is ignored.
    public func put(_ resource: JSONValue) {
        guard let id = resource["sys"]?["id"]?.stringValue else { return }
        switch resource["sys"]?["type"]?.stringValue {
        case "Entry": content.withLock { $0.entries[id] = resource }
        case "Asset": content.withLock { $0.assets[id] = resource }
        default: return
        }
    }

    /// Republishes entry `id` with `fields.<field>` set to `value`, raising `sys.revision` by one.
    /// Returns false when there is no such entry.
    @discardableResult
    public func publish(entryId id: String, field: String, value: JSONValue) -> Bool {
        content.withLock { content in
            guard let entry = content.entries[id], case .object(var members) = entry,
                  case .object(var sys)? = entry["sys"], case .object(var fields)? = entry["fields"]
            else { return false }
            fields[field] = value
            sys["revision"] = .number(JSONNumber((entry["sys"]?["revision"]?.intValue ?? 0) + 1))
            members["sys"] = .object(sys)
            members["fields"] = .object(fields)
            content.entries[id] = .object(members)
            return true
        }
    }

    /// Deletes (unpublishes) entry `id`; links to it become `notResolvable`.
    public func removeEntry(id: String) {
        _ = content.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// The stored entry `id`.
    public func entry(id: String) -> JSONValue? {
        content.withLock { $0.entries[id] }
    }

    /// Number of stored entries.
    public var entryCount: Int { content.withLock { $0.entries.count } }

    /// Every stored entry id, sorted.
    public var entryIds: [String] { content.withLock { $0.entries.keys.sorted() } }

    // MARK: The CDA contract

    /// The CDA's answer to `request` (path, query and `Authorization` as recorded).
    func response(to request: RecordedRequest) -> PlannedResponse {
        let segments = request.path.split(separator: "/").map(String.init)
        guard request.method == "GET" || request.method == "HEAD" else {
            return Self.error(405, id: "MethodNotAllowed", message: "Only GET is supported by the Content Delivery API.")
        }
        // /spaces/{space}/environments/{env}/entries or /spaces/{space}/entries (env master)
        let environment: String
        if segments.count == 5, segments[0] == "spaces", segments[2] == "environments", segments[4] == "entries" {
            environment = segments[3]
        } else if segments.count == 3, segments[0] == "spaces", segments[2] == "entries" {
            environment = "master"
        } else {
            return Self.error(404, id: "NotFound", message: "The resource could not be found.")
        }
        let token = request.header("authorization").flatMap { header -> String? in
            guard header.lowercased().hasPrefix("bearer ") else { return nil }
            return String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } ?? request.queryValue("access_token")
        guard token == accessToken else {
            return Self.error(401, id: "AccessTokenInvalid", message: "The access token you sent could not be found or is invalid.")
        }
        guard segments[1] == spaceId, environments.contains(environment) else {
            return Self.error(404, id: "NotFound", message: "The resource could not be found.")
        }
        switch query(request) {
        case .success(let body): return LocalAPIServerState.json(200, body)
        case .failure(let failure): return Self.error(400, id: "InvalidQuery", message: failure.message)
        }
    }

    private struct QueryFailure: Error {
        let message: String
    }

    private func query(_ request: RecordedRequest) -> Result<JSONValue, QueryFailure> {
        var include = 1
        if let text = request.queryValue("include") {
            guard let value = Int(text), (0...10).contains(value) else {
                return .failure(QueryFailure(message: "The query you sent was invalid: include must be an integer between 0 and 10."))
            }
            include = value
        }
        var limit = 100
        if let text = request.queryValue("limit") {
            guard let value = Int(text), (0...1000).contains(value) else {
                return .failure(QueryFailure(message: "The query you sent was invalid: limit must be an integer between 0 and 1000."))
            }
            limit = value
        }
        var skip = 0
        if let text = request.queryValue("skip") {
            guard let value = Int(text), value >= 0 else {
                return .failure(QueryFailure(message: "The query you sent was invalid: skip must be a non-negative integer."))
            }
            skip = value
        }
        let content = self.content.withLock { $0 }
        if let locale = request.queryValue("locale") {
            let known = Set(content.entries.values.compactMap { $0["sys"]?["locale"]?.stringValue }).union(["en-US"])
            guard known.contains(locale) else {
                return .failure(QueryFailure(message: "Unknown locale: \(locale)"))
            }
        }
        var filters: [(JSONValue) -> Bool] = []
        if let id = request.queryValue("sys.id") {
            filters.append { $0["sys"]?["id"]?.stringValue == id }
        }
        if let list = request.queryValue("sys.id[in]") {
            let ids = Set(list.split(separator: ",").map(String.init))
            filters.append { ids.contains($0["sys"]?["id"]?.stringValue ?? "") }
        }
        let contentType = request.queryValue("content_type")
        if let contentType {
            filters.append { $0["sys"]?["contentType"]?["sys"]?["id"]?.stringValue == contentType }
        }
        for item in request.queryItems where item.name.hasPrefix("fields.") {
            guard contentType != nil else {
                return .failure(QueryFailure(message: "The query you sent was invalid: a fields. filter needs content_type."))
            }
            let field = String(item.name.dropFirst("fields.".count))
            let wanted = item.value ?? ""
            filters.append { entry in
                switch entry["fields"]?[field] {
                case .string(let value)?: return value == wanted
                case .number(let number)?: return number.text == wanted
                case .bool(let flag)?: return "\(flag)" == wanted
                case .array(let values)?: return values.contains(.string(wanted))
                default: return false
                }
            }
        }
        let matching = content.entries.keys.sorted().compactMap { content.entries[$0] }
            .filter { entry in filters.allSatisfy { $0(entry) } }
        let page = Array(matching.dropFirst(skip).prefix(limit))
        let (includedEntries, includedAssets, unresolved) = Self.includes(of: page, depth: include, content: content)
        var body: OrderedDictionary<String, JSONValue> = [
            "sys": ["type": "Array"], "total": .number(JSONNumber(matching.count)),
            "skip": .number(JSONNumber(skip)), "limit": .number(JSONNumber(limit)), "items": .array(page),
        ]
        var includes: OrderedDictionary<String, JSONValue> = [:]
        if !includedEntries.isEmpty { includes["Entry"] = .array(includedEntries) }
        if !includedAssets.isEmpty { includes["Asset"] = .array(includedAssets) }
        if !includes.isEmpty { body["includes"] = .object(includes) }
        if !unresolved.isEmpty {
            body["errors"] = .array(unresolved.map { link in
                ["sys": ["id": "notResolvable", "type": "error"],
                 "details": ["type": "Link", "linkType": .string(link.type), "id": .string(link.id)]]
            })
        }
        return .success(.object(body))
    }

    private struct Link: Hashable {
        let type: String
        let id: String
    }

    /// Entries and assets linked from `items`, `depth` levels deep (items themselves are never
    /// repeated in the includes), and the links whose targets do not exist.
    private static func includes(
        of items: [JSONValue], depth: Int, content: Content
    ) -> ([JSONValue], [JSONValue], [Link]) {
        var seen = Set(items.compactMap { $0["sys"]?["id"]?.stringValue }.map { Link(type: "Entry", id: $0) })
        var entries: [JSONValue] = [], assets: [JSONValue] = [], unresolved: [Link] = []
        var frontier = items
        for _ in 0..<depth {
            var next: [JSONValue] = []
            for resource in frontier {
                for link in links(in: resource["fields"] ?? .null) where !seen.contains(link) {
                    seen.insert(link)
                    if link.type == "Entry", let target = content.entries[link.id] {
                        entries.append(target)
                        next.append(target)
                    } else if link.type == "Asset", let target = content.assets[link.id] {
                        assets.append(target)
                    } else {
                        unresolved.append(link)
                    }
                }
            }
            frontier = next
            if frontier.isEmpty { break }
        }
        return (entries, assets, unresolved)
    }

    /// Every Entry/Asset link in `value`, in document order (the Delivery source's own walk).
    private static func links(in value: JSONValue) -> [Link] {
        ContentfulCollectionSplitter.links(in: value).map { Link(type: $0.0, id: $0.1) }
    }

    /// A CDA error body: `{"sys":{"type":"Error","id":…},"message":…,"requestId":…}`.
    static func error(_ status: Int, id: String, message: String) -> PlannedResponse {
        LocalAPIServerState.json(status, [
            "sys": ["type": "Error", "id": .string(id)], "message": .string(message),
            "requestId": .string(UUID().uuidString.lowercased()),
        ])
    }
}
