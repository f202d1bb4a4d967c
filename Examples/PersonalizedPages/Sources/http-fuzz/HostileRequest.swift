import Foundation

/// One hostile request, as the raw bytes written on the connection: a random method (including
/// garbage tokens), path (the service's routes, long, percent-encoded, traversal, invalid UTF-8),
/// headers (the signed `pp_state` cookie as ``SealedNoise`` makes it, duplicates, malformed
/// lines, `Accept-Language` junk, `Origin`, `Content-Type`, mismatched `Content-Length`, broken
/// chunked framing) and body (random bytes, JSON-ish junk, deep nesting, form junk, up to a few
/// MB); about a third are well-framed requests aimed at `POST /replay` and the OFREP routes
/// (``TargetedRequest``). Made from a ``SeededGenerator``, so a seed replays the same sequence
/// of request kinds (the seals of the sealed values carry their time).
struct HostileRequest {
    var bytes: [UInt8]
    /// The method token as sent (printable prefix), for the report.
    var method: String
    /// The route the path aims at (its first segment, printable), for the report.
    var route: String
    /// `generic` (the malformed-request generator), `replay` or `ofrep` (``TargetedRequest``).
    var kind: String = "generic"
    var isHead: Bool
    /// The request's framing may promise more body than it sends: the client ends its side.
    var halfClose: Bool

    static let routes = ["/", "/plain", "/handoff", "/events", "/first", "/replay", "/consent", "/healthz", "/metrics",
                         "/cms/hero-home", "/webhooks/contentful", "/favicon.ico", "/ofrep/v1/evaluate/flags",
                         "/ofrep/v1/evaluate/flags/hero-flag"]
    /// The app's one cookie (`PersonalizedPagesApp.stateCookieName`).
    static let stateCookieName = "pp_state"

    static func make(_ random: inout SeededGenerator, maxBodyBytes: Int, secrets: FuzzSecrets) -> HostileRequest {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<18: return TargetedRequest.replay(&random, secrets)
        case 18..<36: return TargetedRequest.ofrep(&random, secrets)
        default: return makeGeneric(&random, maxBodyBytes: maxBodyBytes, secrets: secrets)
        }
    }

    /// A request malformed anywhere: method, target, framing, headers, body.
    static func makeGeneric(_ random: inout SeededGenerator, maxBodyBytes: Int, secrets: FuzzSecrets) -> HostileRequest {
        let method = makeMethod(&random)
        let (path, route) = makePath(&random)
        let body = makeBody(&random, method: method, route: route, maxBytes: maxBodyBytes)
        var head = Array((method + " ").utf8) + path + Array(" \(random.pick(["HTTP/1.1", "HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 junk", "http/1.1"]))\r\n".utf8)
        var lines: [[UInt8]] = []
        if random.chance(95) { lines.append(Array("Host: \(random.pick(["127.0.0.1", "localhost", "", "evil.example:99999", String(repeating: "h", count: 300)]))".utf8)) }
        lines += makeHeaders(&random, secrets: secrets)
        var halfClose = false
        var bodyToSend = body
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<70:
            if !body.isEmpty || random.chance(30) { lines.append(Array("Content-Length: \(body.count)".utf8)) }
        case 70..<78:  // promises more than it sends
            lines.append(Array("Content-Length: \(body.count + Int.random(in: 1...5000, using: &random))".utf8))
            halfClose = true
        case 78..<84:  // sends more than it promises (the rest reads as a pipelined request)
            lines.append(Array("Content-Length: \(max(0, body.count - Int.random(in: 1...100, using: &random)))".utf8))
        case 84..<88:
            lines.append(Array("Content-Length: \(random.pick(["-1", "abc", "1e3", "99999999999999999999", " 5", "0x10", ""]))".utf8))
            halfClose = true
        case 88..<91:  // two disagreeing lengths
            lines.append(Array("Content-Length: \(body.count)".utf8))
            lines.append(Array("Content-Length: \(body.count + 1)".utf8))
            halfClose = true
        case 91..<97:  // chunked, well-formed or broken
            lines.append(Array("Transfer-Encoding: \(random.pick(["chunked", "chunked", "gzip, chunked", "identity", "chunked, chunked"]))".utf8))
            bodyToSend = chunked(body, &random)
            halfClose = true
        default:
            halfClose = true
        }
        if random.chance(90) { lines.append(Array("Connection: close".utf8)) }
        lines.shuffle(using: &random)
        for line in lines { head += line + [13, 10] }
        head += [13, 10]
        return HostileRequest(
            bytes: head + bodyToSend,
            method: String(decoding: Array(method.utf8.prefix(12)), as: UTF8.self).filter { $0.isASCII && !$0.isWhitespace && $0.isLetter },
            route: route, isHead: method == "HEAD", halfClose: halfClose)
    }

    // MARK: Request line

    static func makeMethod(_ random: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40: "GET"
        case 40..<60: "POST"
        case 60..<70: "HEAD"
        case 70..<90: random.pick(["PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT"])
        default: random.pick(["get", "G\u{1}T", "FOO", "", "GET GET", String(repeating: "X", count: 2000), "PR\u{7F}I", "\u{FF}"])
        }
    }

    /// The path's bytes and the route it aims at.
    static func makePath(_ random: inout SeededGenerator) -> ([UInt8], String) {
        var route = random.pick(routes)
        var path = Array(route.utf8)
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<45: break
        case 45..<55: path += Array("?\(junkText(&random, count: Int.random(in: 1...200, using: &random)))".utf8)
        case 55..<62: path += Array("/\(String(repeating: "a", count: Int.random(in: 1_000...20_000, using: &random)))".utf8)
        case 62..<70: path = Array(random.pick(["/%00", "/%zz", "/%ff%fe", "/%2e%2e/%2e%2e/etc/passwd", "/plain%00.html", "/%E0%A4%A", "/cms/%F0%9F%92%A9"]).utf8)
        case 70..<77: path = Array(random.pick(["/../../etc/passwd", "/./././", "//", "/cms/../metrics", "/..%2f..%2f", "/cms/" + String(repeating: "../", count: 50)]).utf8)
        case 77..<84: path = [47] + random.bytes(Int.random(in: 1...40, using: &random)).filter { $0 != 32 && $0 != 13 && $0 != 10 }
            route = "invalid-bytes"
        case 84..<90: path = Array(random.pick(["*", "", "http://127.0.0.1/", "http://evil.example/plain", "plain", "?x"]).utf8)
            route = "odd-target"
        default: path += Array("?\(random.pick(["a=%", "a=%ZZ&b", "&&&", "x=" + String(repeating: "%41", count: 3000), "q[]=1&q[0]=2"]))".utf8)
        }
        return (path, route)
    }

    // MARK: Headers

    static func makeHeaders(_ random: inout SeededGenerator, secrets: FuzzSecrets) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            lines.append(Array("Cookie: \(makeCookieHeader(&random, secrets: secrets))".utf8))
        }
        if random.chance(15) {
            lines.append(Array("Sec-Fetch-Site: \(random.pick(["same-origin", "same-site", "cross-site", "none", "", junkText(&random, count: 10)]))".utf8))
        }
        if random.chance(40) {
            lines.append(Array("Accept-Language: \(random.pick(["de-DE,de;q=0.9", "*", "", ";;;,,,", "x", String(repeating: "en-", count: 500), "de-DE\u{1}", "q=1;de", junkText(&random, count: 60)]))".utf8))
        }
        if random.chance(20) { lines.append(Array("Origin: \(random.pick(["https://evil.example", "null", "", junkText(&random, count: 30)]))".utf8)) }
        if random.chance(40) {
            lines.append(Array("Content-Type: \(random.pick(["application/json", "application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=", "application/vnd.contentful.management.v1+json", "", "a/b; charset=utf-99"]))".utf8))
        }
        if random.chance(20) { lines.append(Array("User-Agent: \(junkText(&random, count: Int.random(in: 0...4000, using: &random)))".utf8)) }
        if random.chance(10) { lines.append(Array("X-Junk: \(String(repeating: "j", count: Int.random(in: 1...60_000, using: &random)))".utf8)) }
        if random.chance(5) { lines += (0..<Int.random(in: 10...300, using: &random)).map { Array("X-Many-\($0): v".utf8) } }
        if random.chance(8) {
            lines.append(random.pick([Array("no colon here".utf8), Array(": empty name".utf8), Array(" leading-space: x".utf8),
                                      Array("Bad Name: x".utf8), Array("X-Null: a\u{0}b".utf8), [0xFF, 0xFE, 58, 32, 0xC3, 0x28]]))
        }
        if random.chance(3) { lines.append(Array("Expect: 100-continue".utf8)) }
        return lines
    }

    /// A `Cookie` header: mostly `pp_state` (``SealedNoise/stateCookie(_:_:)``), sometimes twice
    /// (which one counts?), beside junk cookies, with odd separators.
    static func makeCookieHeader(_ random: inout SeededGenerator, secrets: FuzzSecrets) -> String {
        var pairs: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let name = random.chance(80) ? stateCookieName
                : random.pick(["PP_STATE", "pp_state ", " pp_state", "pp_stat", junkText(&random, count: Int.random(in: 0...10, using: &random))])
            let value = name == stateCookieName || random.chance(50)
                ? SealedNoise.stateCookie(&random, secrets) : junkText(&random, count: Int.random(in: 0...30, using: &random))
            pairs.append(random.chance(5) ? value : "\(name)=\(random.chance(5) ? "\"\(value)\"" : value)")
        }
        return pairs.joined(separator: random.pick(["; ", ";", ";;", " ; ", ", "]))
    }

    // MARK: Bodies

    static func makeBody(_ random: inout SeededGenerator, method: String, route: String, maxBytes: Int) -> [UInt8] {
        guard method != "GET" && method != "HEAD" || random.chance(10) else { return [] }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<20: return random.bytes(Int.random(in: 0...2_000, using: &random))
        case 20..<45: return Array(jsonJunk(&random, budget: Int.random(in: 1...3_000, using: &random)).utf8)
        case 45..<55:  // deep nesting
            let depth = Int.random(in: 100...200_000, using: &random)
            let open = random.pick(["[", "{\"a\":"])
            return Array((String(repeating: open, count: depth) + random.pick(["1", "", "]"])).utf8)
        case 55..<75:
            return Array(random.pick([
                "consent=accept", "consent=decline", "consent=", "consent=%", "consent=accept&consent=decline", "=&=&=",
                "consent=" + String(repeating: "a", count: 5_000), "consent=%E0%A4%A", "a=b&c", junkText(&random, count: 100),
            ]).utf8)
        case 75..<90:  // handoff-shaped JSON with junk inside
            return Array(#"{"replay":\#(jsonJunk(&random, budget: 400)),"profileId":\#(jsonJunk(&random, budget: 40)),"cache":{"scope":"privateRequest"}}"#.utf8)
        case 90..<97: return Array(#"{"sys":{"id":\#(jsonJunk(&random, budget: 60)),"type":"Entry"}}"#.utf8)
        default:  // large
            return random.bytes(Int.random(in: 100_000...max(100_000, maxBytes), using: &random))
        }
    }

    /// Text that looks like JSON and often is not, within about `budget` characters.
    static func jsonJunk(_ random: inout SeededGenerator, budget: Int) -> String {
        guard budget > 0 else { return random.pick(["1", "null", "\"", "}"]) }
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return "{" + (0..<Int.random(in: 0...4, using: &random)).map { _ in "\"\(junkText(&random, count: 5))\":\(jsonJunk(&random, budget: budget / 4))" }.joined(separator: ",") + random.pick(["}", "", ",}"])
        case 1: return "[" + (0..<Int.random(in: 0...4, using: &random)).map { _ in jsonJunk(&random, budget: budget / 4) }.joined(separator: ",") + random.pick(["]", "", ",]"])
        case 2: return random.pick(["1e999999", "-0", "0.0000000000000000000000001", "18446744073709551616", "NaN", "-"])
        case 3: return "\"" + random.pick(["\\u0000", "\\ud800", "\\", "\u{7}", "é", "\\uZZZZ"]) + junkText(&random, count: min(budget, 20)) + "\""
        case 4: return random.pick(["true", "false", "null", "nul", "tru"])
        default: return "\"\(junkText(&random, count: min(budget, 12)))\""
        }
    }

    /// Junk of characters that matter to parsers (no space, no control character: the request
    /// line and header values stay well-formed, so the junk reaches the routes; the malformed
    /// framing is made elsewhere).
    static func junkText(_ random: inout SeededGenerator, count: Int) -> String {
        let alphabet = Array("abcXYZ019=;,%&?/\\\"'<>{}[]:+-_.~!$()*@é")
        return String((0..<count).map { _ in random.pick(alphabet) })
    }

    /// `body` in chunked framing: well-formed, or with a bad size line or without the last chunk.
    static func chunked(_ body: [UInt8], _ random: inout SeededGenerator) -> [UInt8] {
        var out: [UInt8] = []
        var rest = body[...]
        while !rest.isEmpty {
            let size = min(rest.count, Int.random(in: 1...4_096, using: &random))
            let sizeLine = random.chance(95) ? String(size, radix: 16) : random.pick(["zz", "-1", "FFFFFFFFFFFFFFFFFF", ""])
            out += Array("\(sizeLine)\r\n".utf8) + rest.prefix(size) + [13, 10]
            rest = rest.dropFirst(size)
        }
        if random.chance(85) { out += Array("0\r\n\r\n".utf8) }
        return out
    }
}
