import Foundation
import Optimization

/// Well-framed hostile requests aimed at one handler, so the junk reaches it rather than the
/// HTTP parser: `POST /replay` with junk, forged and insider-sealed tickets (``replay(_:_:)``), and
/// the OFREP routes with junk bodies, targeting keys and credentials (``ofrep(_:_:)``). Framing
/// is correct (`Content-Length`, `Connection: close`); the headers and the body are the attack.
enum TargetedRequest {
    /// `POST /replay`: mostly `{"ticket": <ticket>}` with a `pp_state` cookie carrying the ticket's
    /// visitor nonce, another visitor's state or none; the site headers are mostly same-origin, so the
    /// cross-site check lets most through to the ticket.
    static func replay(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> HostileRequest {
        let (ticket, nonce) = SealedNoise.ticket(&random, secrets)
        let quoted = SealedNoise.quoted(ticket)
        let body: String = switch Int.random(in: 0..<12, using: &random) {
        case 0..<8: #"{"ticket":\#(quoted)}"#
        case 8: random.pick([#"{"ticket":5}"#, #"{"ticket":null}"#, "{}", #"{"ticket":["x"]}"#, "", "[]"])
        case 9: #"{"ticket":\#(quoted),"ticket":"v1.x.y"}"#
        case 10: "ticket=" + ticket
        default: HostileRequest.jsonJunk(&random, budget: 300)
        }
        var headers: [String] = []
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<7: headers.append("Sec-Fetch-Site: same-origin")
        case 7: headers.append("Origin: http://127.0.0.1")
        case 8: headers.append("Sec-Fetch-Site: cross-site")
        default: break
        }
        var cookie: String?
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6:  // the ticket's visitor
            cookie = secrets.stateCodec.seal(VisitorState(profileId: SealedNoise.profileId(&random), consent: true, nonce: nonce))
        case 6..<8: cookie = SealedNoise.stateCookie(&random, secrets)
        default: cookie = nil
        }
        if let cookie { headers.append("Cookie: pp_state=\(cookie)") }
        headers.append("Content-Type: \(random.pick(["application/json", "application/json", "text/plain", "application/x-www-form-urlencoded"]))")
        var bodyBytes = Array(body.utf8)
        if random.chance(2) { bodyBytes += Array(repeating: 0x20, count: (1 << 20) + 10) }  // over the 1 MB limit
        return framed("POST", "/replay", headers: headers, body: bodyBytes, kind: "replay")
    }

    /// `POST /ofrep/v1/evaluate/flags[/{key}]` with junk or real credentials and bodies.
    static func ofrep(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> HostileRequest {
        let path = random.chance(50)
            ? "/ofrep/v1/evaluate/flags"
            : "/ofrep/v1/evaluate/flags/" + random.pick([
                "hero-flag", "unknown-flag", "..", "%2e%2e", "%00", "a%2Fb", String(repeating: "k", count: Int.random(in: 300...5_000, using: &random)),
                "%F0%9F%92%A9", HostileRequest.junkText(&random, count: 12).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "x",
            ])
        var headers = credentialHeaders(&random, secrets)
        if random.chance(10) { headers.append("If-None-Match: \(random.pick(["\"x\"", "*", "", "W/\"1\"", HostileRequest.junkText(&random, count: 40)]))") }
        headers.append("Content-Type: \(random.pick(["application/json", "application/json", "text/plain", ""]))")
        let consent = random.pick(["", #","consent":true"#, #","consent":false"#, #","consent":"yes""#, #","consent":null"#])
        let body: [UInt8]
        switch Int.random(in: 0..<12, using: &random) {
        case 0..<7: body = Array(#"{"context":{"targetingKey":\#(SealedNoise.targetingKey(&random, secrets))\#(consent)}}"#.utf8)
        case 7: body = Array(random.pick([#"{"context":[]}"#, "{}", #"{"context":null}"#, "", "[]", #"{"context":{}}"#]).utf8)
        case 8: body = Array(HostileRequest.jsonJunk(&random, budget: 400).utf8)
        case 9: body = Array((#"{"context":"# + String(repeating: "{\"a\":", count: Int.random(in: 100...50_000, using: &random))).utf8)
        case 10: body = random.bytes(Int.random(in: 0...2_000, using: &random))
        default: body = Array(#"{"context":{"targetingKey":"x","pad":"\#(String(repeating: "p", count: Int.random(in: 10_000...300_000, using: &random)))"}}"#.utf8)
        }
        return framed("POST", path, headers: headers, body: body, kind: "ofrep")
    }

    /// The credential fields of an OFREP request: the right token, wrong ones, malformed ones,
    /// several fields (one right among many wrong), or none.
    static func credentialHeaders(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> [String] {
        let right = secrets.ofrepToken ?? "no-token-given-to-the-fuzzer-0123456789"
        let wrong = { (random: inout SeededGenerator) in "wrong-\(HostileRequest.junkText(&random, count: Int.random(in: 1...60, using: &random)))" }
        switch Int.random(in: 0..<12, using: &random) {
        case 0..<4: return ["Authorization: Bearer \(right)"]
        case 4: return ["Authorization: Bearer \(wrong(&random))"]
        case 5: return [random.pick(["Authorization: Bearer", "Authorization: Basic \(right)", "Authorization: bearer \(right)",
                                     "Authorization: Bearer  \(right)", "Authorization: Bearer \(right)x", "Authorization: \(right)",
                                     "Authorization: Bearer \(right.dropLast())", "Authorization: Bearer \(String(repeating: "t", count: 10_000))"])]
        case 6: return ["X-API-Key: \(random.chance(50) ? right : wrong(&random))"]
        case 7:  // many API keys, the right one among them
            var fields = (0..<Int.random(in: 2...900, using: &random)).map { "X-API-Key: guess-\($0)-\(right.prefix(4))" }
            fields.insert("X-API-Key: \(right)", at: Int.random(in: 0...fields.count, using: &random))
            return fields
        case 8: return ["Authorization: Bearer \(wrong(&random))", "Authorization: Bearer \(right)"]
        case 9: return ["Authorization: Bearer \(right)", "X-API-Key: \(wrong(&random))"]
        case 10: return ["X-API-Key: ", "Authorization: "]
        default: return []
        }
    }

    /// The request as bytes: request line, `Host`, the headers, a correct `Content-Length` and
    /// `Connection: close`.
    static func framed(_ method: String, _ path: String, headers: [String], body: [UInt8], kind: String) -> HostileRequest {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { head += header + "\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let route = path.hasPrefix("/ofrep/v1/evaluate/flags/") ? "/ofrep/v1/evaluate/flags/{key}" : path
        return HostileRequest(bytes: Array(head.utf8) + body, method: method, route: route, kind: kind, isHead: false, halfClose: false)
    }
}
