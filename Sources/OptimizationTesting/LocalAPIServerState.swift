import Foundation

/// A planned standard answer.
struct PlannedResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: String
}

/// Everything the server remembers, behind one lock. Shared by the NIO handlers (event-loop
/// threads) and the test's tasks.
final class LocalAPIServerState: Sendable {
    private struct ProfileRecord {
        var identified: Bool
        var traits: JSONValue = .object([:])
    }

    private struct ScriptEntry {
        var matcher: RequestMatcher
        var response: ScriptedResponse
    }

    private struct Inner {
        var requests: [RecordedRequest] = []
        var acceptedConnections = 0
        var openConnections = 0
        var peakOpenConnections = 0
        var connections: [ServerConnection] = []
        var scripts: [ScriptEntry] = []
        var profiles: [String: ProfileRecord] = [:]
        var insightsBatches: [JSONValue] = []
        var newVisitorData = LocalOptimizationAPIServer.defaultNewVisitorData
        var identifiedVisitorData = LocalOptimizationAPIServer.defaultIdentifiedVisitorData
        var dataProvider: (@Sendable (String) -> JSONValue?)?
        /// Experience requests for a profile id received and not answered yet, and the most
        /// there ever were at once, by profile id.
        var profileRequestsInFlight: [String: Int] = [:]
        var peakProfileRequests: [String: Int] = [:]

        var snapshot: LocalAPIServerSnapshot {
            LocalAPIServerSnapshot(
                requests: requests, acceptedConnectionCount: acceptedConnections, openConnectionCount: openConnections,
                peakOpenConnectionCount: peakOpenConnections, connections: connections)
        }

        mutating func resetProfiles() {
            profiles = [LocalOptimizationAPIServer.fixtureProfileID: ProfileRecord(identified: false)]
        }
    }

    /// Everything the server remembers; waits see it as a ``LocalAPIServerSnapshot``.
    private let inner: ObservedState<Inner, LocalAPIServerSnapshot>
    /// Answers ``ScriptedResponse/standard`` instead of the Experience/Insights contract (used by
    /// servers with another contract, such as ``LocalContentfulDeliveryServer``).
    private let responder: (@Sendable (RecordedRequest) -> PlannedResponse)?

    init(responder: (@Sendable (RecordedRequest) -> PlannedResponse)? = nil) {
        var initial = Inner()
        initial.resetProfiles()
        inner = ObservedState(initial) { $0.snapshot }
        self.responder = responder
    }

    // MARK: Connections and requests

    /// Returns the new connection's id.
    func connectionOpened() -> Int {
        let now = ContinuousClock.now
        return inner.update { inner in
            inner.acceptedConnections += 1
            inner.openConnections += 1
            inner.peakOpenConnections = max(inner.peakOpenConnections, inner.openConnections)
            inner.connections.append(ServerConnection(id: inner.acceptedConnections, openedAt: now, closedAt: nil))
            return inner.acceptedConnections
        }
    }

    /// Records that connection `id` (from ``connectionOpened()``) closed.
    func connectionClosed(id: Int) {
        let now = ContinuousClock.now
        inner.update { inner in
            inner.openConnections -= 1
            // Ids are 1-based and dense: connection `id` is at index `id - 1`.
            if inner.connections.indices.contains(id - 1) { inner.connections[id - 1].closedAt = now }
        }
    }

    /// Records a request and takes the script entry that answers it (``ScriptedResponse/standard``
    /// when none matches), atomically, so scripts are consumed in arrival order.
    func receive(
        connectionID: Int, method: String, uri: String, headers: [(String, String)], body: String
    ) -> (RecordedRequest, ScriptedResponse) {
        let (path, queryItems) = Self.split(uri: uri)
        var headerMap: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            headerMap[key] = headerMap[key].map { $0 + ", " + value } ?? value
        }
        return inner.update { inner -> (RecordedRequest, ScriptedResponse) in
            let request = RecordedRequest(
                sequence: inner.requests.count + 1, connectionID: connectionID, method: method.uppercased(),
                path: path, queryItems: queryItems, headers: headerMap, body: body)
            inner.requests.append(request)
            if let profileID = Self.profileID(of: request) {
                let inFlight = inner.profileRequestsInFlight[profileID, default: 0] + 1
                inner.profileRequestsInFlight[profileID] = inFlight
                inner.peakProfileRequests[profileID] = max(inner.peakProfileRequests[profileID] ?? 0, inFlight)
            }
            var script = ScriptedResponse.standard
            if let index = inner.scripts.firstIndex(where: { $0.matcher.matches(request) }) {
                script = inner.scripts.remove(at: index).response
            }
            return (request, script)
        }
    }

    var snapshot: LocalAPIServerSnapshot { inner.current }

    /// Marks `request` answered (its response was written, or its connection dropped).
    func answered(_ request: RecordedRequest) {
        guard let profileID = Self.profileID(of: request) else { return }
        inner.withLock { inner in
            inner.profileRequestsInFlight[profileID] = max(0, (inner.profileRequestsInFlight[profileID] ?? 0) - 1)
        }
    }

    /// The most Experience requests for one profile id the server was answering at the same
    /// time, by profile id.
    var peakConcurrentProfileRequests: [String: Int] { inner.withLock { $0.peakProfileRequests } }

    /// The profile id of an Experience request that names one (`…/profiles/<id>` of either API
    /// version).
    private static func profileID(of request: RecordedRequest) -> String? {
        let segments = request.path.split(separator: "/")
        guard segments.count == 8, segments[0] == "experience", segments[6] == "profiles" else { return nil }
        return String(segments[7])
    }

    func clearRequests() {
        inner.withLock { $0.requests.removeAll() }
    }

    // MARK: Scripts and data

    func enqueue(_ responses: [ScriptedResponse], for matcher: RequestMatcher) {
        inner.withLock { inner in
            inner.scripts.append(contentsOf: responses.map { ScriptEntry(matcher: matcher, response: $0) })
        }
    }

    var pendingScriptCount: Int { inner.withLock { $0.scripts.count } }

    func clearScripts() {
        inner.withLock { $0.scripts.removeAll() }
    }

    func setData(newVisitor: JSONValue?, identifiedVisitor: JSONValue?) {
        inner.withLock { inner in
            if let newVisitor { inner.newVisitorData = newVisitor }
            if let identifiedVisitor { inner.identifiedVisitorData = identifiedVisitor }
        }
    }

    func setDataProvider(_ provider: (@Sendable (String) -> JSONValue?)?) {
        inner.withLock { $0.dataProvider = provider }
    }

    var insightsBatches: [JSONValue] { inner.withLock { $0.insightsBatches } }

    func isIdentified(profileID: String) -> Bool? {
        inner.withLock { $0.profiles[profileID]?.identified }
    }

    var knownProfileIDs: Set<String> { inner.withLock { Set($0.profiles.keys) } }

    func resetState() {
        inner.withLock { inner in
            inner.resetProfiles()
            inner.insightsBatches.removeAll()
        }
    }

    // MARK: Waiting

    func wait(
        timeout: Duration, description: String, condition: @escaping @Sendable (LocalAPIServerSnapshot) -> Bool
    ) async throws -> LocalAPIServerSnapshot {
        try await inner.wait(timeout: timeout, condition: condition) { seen in
            "\(description) not reached within \(timeout); \(seen.requests.count) request(s), "
                + "\(seen.acceptedConnectionCount) connection(s) seen"
        }
    }

    // MARK: The contract

    /// The standard answer to `request`. Creates/updates remembered profiles and stores Insights
    /// batches as a side effect.
    func standardResponse(for request: RecordedRequest) -> PlannedResponse {
        if let responder { return responder(request) }
        let segments = request.path.split(separator: "/").map(String.init)
        if request.method == "OPTIONS" {
            return PlannedResponse(status: 204, headers: Self.corsPreflightHeaders, body: "")
        }
        if request.method == "GET", segments.last == "health" {
            return PlannedResponse(status: 200, headers: [("content-type", "text/plain; charset=utf-8")], body: "ok")
        }
        if request.method == "POST", segments.last == "reset-state" {
            resetState()
            return PlannedResponse(status: 200, headers: [("content-type", "text/plain; charset=utf-8")], body: "ok")
        }
        // <mount>/<version>/<tenant kind>/<tenant>/environments/<env>/<resource>[/<id>]: API v1
        // (organizations: Experience v2, Insights v1) and API v2 (spaces: Experience v3, Insights v2).
        guard segments.count >= 7, segments.count <= 8, segments[4] == "environments",
              let api = Self.apiRoute(mount: segments[0], version: segments[1], tenantKind: segments[2])
        else {
            return Self.json(404, ["error": "Not Found"])
        }
        let resource = segments[6]
        let id = segments.count == 8 ? segments[7] : nil
        switch (api, request.method, resource, id) {
        case (.experience, "POST", "profiles", let id):
            return upsertProfile(id: id, body: request.json)
        case (.experience, "GET", "profiles", .some(let id)):
            return getProfile(id: id)
        case (.experience, "POST", "events", nil):
            return batchUpsert(body: request.json)
        case (.insights, "POST", "events", nil):
            return storeInsights(body: request.json)
        case (.insights, "GET", "profiles", .some(let id)):
            let batches = insightsBatches.filter { batch in
                batch["profile"]?["id"]?.stringValue == id || batch["profile"]?["stableId"]?.stringValue == id
            }
            return Self.json(200, ["data": .array(batches)])
        default:
            return Self.json(404, ["error": "Not Found"])
        }
    }

    private enum APIRoute { case experience, insights }

    /// Which API a route prefix belongs to: `experience/v2/organizations` and
    /// `insights/v1/organizations` (API v1), `experience/v3/spaces` and `insights/v2/spaces`
    /// (API v2); nil for anything else.
    private static func apiRoute(mount: String, version: String, tenantKind: String) -> APIRoute? {
        switch (mount, version, tenantKind) {
        case ("experience", "v2", "organizations"), ("experience", "v3", "spaces"): return .experience
        case ("insights", "v1", "organizations"), ("insights", "v2", "spaces"): return .insights
        default: return nil
        }
    }

    private func upsertProfile(id requestedID: String?, body: JSONValue?) -> PlannedResponse {
        guard let events = Self.validEvents(body) else { return Self.json(400, ["error": "Invalid Event Array"]) }
        let id = requestedID ?? UUID().uuidString.lowercased()
        let envelope = inner.withLock { inner -> JSONValue in
            var record = inner.profiles[id] ?? ProfileRecord(identified: false)
            Self.apply(events: events, to: &record)
            inner.profiles[id] = record
            return Self.envelope(id: id, record: record, inner: inner)
        }
        return Self.json(200, envelope)
    }

    private func getProfile(id: String) -> PlannedResponse {
        let envelope = inner.withLock { inner -> JSONValue? in
            inner.profiles[id].map { Self.envelope(id: id, record: $0, inner: inner) }
        }
        guard let envelope else {
            return Self.json(
                404, ["message": "Profile not found", "data": .object([:]), "error": ["code": "ERR_PROFILE_NOT_FOUND"]])
        }
        return Self.json(200, envelope)
    }

    /// `POST v2/…/events`: one profile per distinct `anonymousId`, in first-seen order. Answers the
    /// documented shape `{data:{profiles:[Profile]}, message, error}`, not the reference
    /// mock's envelope-in-profiles quirk.
    private func batchUpsert(body: JSONValue?) -> PlannedResponse {
        guard let events = Self.validEvents(body), events.allSatisfy({ $0["anonymousId"]?.stringValue?.isEmpty == false })
        else { return Self.json(400, ["error": "Invalid Batch Event Array"]) }
        var order: [String] = []
        var grouped: [String: [JSONValue]] = [:]
        for event in events {
            let id = event["anonymousId"]?.stringValue ?? ""
            if grouped[id] == nil { order.append(id) }
            grouped[id, default: []].append(event)
        }
        let profiles = inner.withLock { inner -> [JSONValue] in
            order.map { id in
                var record = inner.profiles[id] ?? ProfileRecord(identified: false)
                Self.apply(events: grouped[id] ?? [], to: &record)
                inner.profiles[id] = record
                return Self.envelope(id: id, record: record, inner: inner)["data"]?["profile"] ?? .null
            }
        }
        return Self.json(200, ["data": ["profiles": .array(profiles)], "message": "", "error": .null])
    }

    private func storeInsights(body: JSONValue?) -> PlannedResponse {
        guard let batches = body?.arrayValue else {
            return Self.json(400, ["error": "Invalid Batch Insights Event Array"])
        }
        inner.withLock { $0.insightsBatches.append(contentsOf: batches) }
        return PlannedResponse(status: 204, headers: [], body: "")
    }

    // MARK: Helpers

    private static func validEvents(_ body: JSONValue?) -> [JSONValue]? {
        guard let events = body?["events"]?.arrayValue, !events.isEmpty else { return nil }
        for event in events {
            guard case .object = event, event["type"]?.stringValue != nil else { return nil }
        }
        return events
    }

    private static func apply(events: [JSONValue], to record: inout ProfileRecord) {
        for event in events where event["type"]?.stringValue == "identify" {
            record.identified = true
            if case .object(let traits) = event["traits"] {
                for (key, value) in traits { record.traits = record.traits.setting(key, value) }
            }
        }
    }

    private static func envelope(id: String, record: ProfileRecord, inner: Inner) -> JSONValue {
        let data = inner.dataProvider?(id) ?? (record.identified ? inner.identifiedVisitorData : inner.newVisitorData)
        var profile = (data["profile"] ?? .object([:])).setting("id", .string(id)).setting("stableId", .string(id))
        if case .object(let traits) = record.traits, !traits.isEmpty {
            var merged = profile["traits"] ?? .object([:])
            for (key, value) in traits { merged = merged.setting(key, value) }
            profile = profile.setting("traits", merged)
        }
        return ["data": data.setting("profile", profile), "message": "", "error": .null]
    }

    static func json(_ status: Int, _ body: JSONValue) -> PlannedResponse {
        let text = (try? body.jsonText()) ?? "{}"
        return PlannedResponse(status: status, headers: [("content-type", "application/json; charset=utf-8")], body: text)
    }

    private static let corsPreflightHeaders: [(String, String)] = [
        ("access-control-allow-methods", "GET, POST, OPTIONS"),
        ("access-control-allow-headers", "*"),
    ]

    private static func split(uri: String) -> (String, [URLQueryItem]) {
        guard let mark = uri.firstIndex(of: "?") else { return (uri, []) }
        let path = String(uri[..<mark])
        let query = uri[uri.index(after: mark)...]
        let items = query.split(separator: "&", omittingEmptySubsequences: true).map { pair -> URLQueryItem in
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            guard let equals = pair.firstIndex(of: "=") else { return URLQueryItem(name: decode(pair), value: nil) }
            return URLQueryItem(name: decode(pair[..<equals]), value: decode(pair[pair.index(after: equals)...]))
        }
        return (path, items)
    }
}

extension JSONValue {
    /// This object with `key` set to `value` (appended when new); non-objects are returned as is.
    func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }
}
