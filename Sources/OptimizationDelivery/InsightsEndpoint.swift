/// Where Insights events are sent: `{base}/v1/organizations/{clientId}/environments/{env}/events`
/// (API v1) or `{base}/v2/spaces/{spaceId}/environments/{env}/events` (API v2), path segments
/// percent-encoded, the base joined with or without its trailing slash.
public enum InsightsEndpoint {
    /// The production base URL.
    public static let defaultBaseURL = "https://ingest.insights.ninetailed.co/"

    /// The events URL.
    /// - Parameters:
    ///   - baseURL: nil or empty uses ``defaultBaseURL``.
    ///   - apiVersion: `"v2"` for API v2; anything else is v1.
    ///   - tenantId: the client id (v1) or space id (v2).
    ///   - environment: the environment's id; empty uses the version's default (`main` for v1,
    ///     `master` for v2).
    public static func eventsURL(baseURL: String?, apiVersion: String, tenantId: String, environment: String) -> String {
        let environment = environment.isEmpty ? (apiVersion == "v2" ? "master" : "main") : environment
        var base = Substring(baseURL.flatMap { $0.isEmpty ? nil : $0 } ?? defaultBaseURL)
        while base.hasSuffix("/") { base = base.dropLast() }
        let path = apiVersion == "v2"
            ? "v2/spaces/\(encode(tenantId))/environments/\(encode(environment))/events"
            : "v1/organizations/\(encode(tenantId))/environments/\(encode(environment))/events"
        return base + "/" + path
    }

    /// `encodeURIComponent`: everything but `A–Z a–z 0–9 - _ . ! ~ * ' ( )` percent-encoded (UTF-8).
    static func encode(_ segment: String) -> String {
        var result = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "~"), UInt8(ascii: "*"),
                UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result += "%" + String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
            }
        }
        return result
    }
}
