import Foundation
import Optimization
import OptimizationTesting

/// Values for the app's signed surfaces, as an attacker (or an insider holding the key) makes
/// them: the `pp_state` cookie (``stateCookie(_:_:)``), the replay ticket of `POST /replay`
/// (``ticket(_:_:)``) and the OFREP `targetingKey` (``targetingKey(_:_:)``). Each mixes genuine
/// values, junk `v1.` texts, truncated values and values with extra segments, tampered and
/// foreign-key seals, seals of another purpose, expired seals, valid MACs over wrong shapes and
/// over malformed payloads, and huge values.
enum SealedNoise {
    /// A profile id: mostly plausible, sometimes odd.
    static func profileId(_ random: inout SeededGenerator) -> String {
        random.chance(85)
            ? "fuzz-visitor-\(Int.random(in: 0..<500, using: &random))"
            : random.pick(["..", ".", "a/b", "a?b#c", "%2e%2e", "", String(repeating: "p", count: 300), "é", "x\u{0}y", "-"])
    }

    /// A state the app could have sealed.
    static func genuineState(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> String {
        secrets.stateCodec.seal(VisitorState(
            profileId: random.chance(80) ? profileId(&random) : nil, consent: random.pick([true, false, nil])))
    }

    // MARK: pp_state

    /// One `pp_state` cookie value.
    static func stateCookie(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> String {
        switch Int.random(in: 0..<15, using: &random) {
        case 0:  // junk around the version prefix
            return random.pick(["v1.", "v1..", "v1...", "v2.", "v1", "", ".", "V1."]) + base64Noise(&random, count: Int.random(in: 0...400, using: &random))
        case 1, 2:
            return genuineState(&random, secrets)
        case 3:  // truncated
            let sealed = genuineState(&random, secrets)
            return String(sealed.prefix(Int.random(in: 0..<sealed.count, using: &random)))
        case 4:  // extra segments
            let sealed = genuineState(&random, secrets)
            let parts = sealed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            return random.pick([
                sealed + ".", sealed + ".x", sealed + "." + (parts.last ?? ""), sealed + "." + sealed,
                parts.count == 3 ? "\(parts[0]).\(parts[1]).\(parts[1]).\(parts[2])" : sealed, "v1." + sealed,
            ])
        case 5:  // a valid MAC over a wrong shape (the library's codec)
            return seal(wrongStateShape(&random), with: secrets.statePurposeCodec, secrets, purpose: VisitorStateCodec.purpose)
        case 6:  // a valid MAC over a malformed payload
            return secrets.macOver(payload: malformedPayload(&random), purpose: VisitorStateCodec.purpose)
        case 7:  // another purpose's seal: a replay ticket or an OFREP targeting token as state
            return random.pick([
                (try? secrets.ticketCodec.seal(["p": .string(profileId(&random)), "c": true])) ?? "v1.",
                (try? secrets.targetingCodec.seal(["profile": .string(profileId(&random))])) ?? "v1.",
            ])
        case 8:  // another key
            return VisitorStateForgery.foreignCodec.seal(VisitorState(profileId: profileId(&random), consent: true))
        case 9:  // the MAC of a genuine value over another payload
            return VisitorStateForgery.withPayload(genuineState(&random, secrets), #"{"exp":99999999999999,"v":{"p":"\#(profileId(&random))","c":true}}"#)
        case 10:  // one character changed
            var characters = Array(genuineState(&random, secrets))
            let index = Int.random(in: 0..<characters.count, using: &random)
            characters[index] = characters[index] == "A" ? "B" : "A"
            return String(characters)
        case 11:  // expired
            return secrets.expiredStateCodec.seal(VisitorState(profileId: profileId(&random), consent: true))
        case 12:  // huge
            return "v1." + String(repeating: random.pick(["A", "_", "-"]), count: Int.random(in: 4_000...70_000, using: &random))
                + "." + String(repeating: "m", count: 43)
        case 13:  // huge but signed: selections near the codec's 16 KiB bound, and beyond it
            let count = Int.random(in: 50...400, using: &random)
            let selections = (0..<count).map { #"{"experienceId":"exp-\#($0)","variantIndex":1,"variants":{"a":"b"}}"# }
            return seal(#"{"p":"\#(profileId(&random))","c":true,"s":[\#(selections.joined(separator: ","))]}"#,
                        with: secrets.statePurposeCodec, secrets, purpose: VisitorStateCodec.purpose)
        default:
            return HostileRequest.junkText(&random, count: Int.random(in: 0...200, using: &random))
        }
    }

    /// JSON texts a visitor-state payload never holds.
    static func wrongStateShape(_ random: inout SeededGenerator) -> String {
        let depth = Int.random(in: 50...400, using: &random)
        return random.pick([
            "1", "\"p\"", "[]", "null", "true", "{}", #"{"p":5}"#, #"{"p":""}"#, #"{"p":"\#(String(repeating: "x", count: 300))"}"#,
            #"{"p":"..","c":true}"#, #"{"p":"../../x","c":true}"#, #"{"c":"yes"}"#, #"{"c":1}"#, #"{"s":"x"}"#, #"{"s":{}}"#,
            #"{"s":[1,"x",{},null]}"#, #"{"s":[{"experienceId":1,"variantIndex":"x"}]}"#,
            #"{"s":[{"experienceId":"e","variantIndex":1e300,"variants":{"a":"b"}}]}"#,
            #"{"s":[{"experienceId":"e","variantIndex":-1,"variants":[]}]}"#,
            #"{"p":"a","c":true,"s":\#(String(repeating: "[", count: depth) + String(repeating: "]", count: depth))}"#,
            #"{"p":"a","p":"b","c":true,"c":false}"#, #"{"p":"a","z":{"y":[1,2,3]}}"#, #"{"p":"\u0000","c":true}"#,
        ])
    }

    /// Payload bytes that are not `{"exp":<number>,"v":<value>}`.
    static func malformedPayload(_ random: inout SeededGenerator) -> [UInt8] {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return random.bytes(Int.random(in: 0...300, using: &random))
        case 1: return Array(#"{"exp":99999999999999,"v":"#.utf8) + Array(HostileRequest.jsonJunk(&random, budget: 200).utf8)
        case 2: return [0x7B, 0x22, 0x65, 0x78, 0x70, 0x22, 0x3A, 0x31, 0x2C, 0x22, 0x76, 0x22, 0x3A, 0x22, 0xFF, 0xFE, 0x22, 0x7D]  // {"exp":1,"v":"\xff\xfe"}
        default:
            return Array(random.pick([
                #"{"v":{"p":"x","c":true}}"#, #"{"exp":"soon","v":{}}"#, #"{"exp":-1,"v":{}}"#, #"{"exp":1e400,"v":{}}"#,
                #"{"exp":99999999999999,"v":{"p":"x"},"exp":1}"#, "[]", "null", "", "{", #"{"exp":99999999999999}"#,
                #"{"exp":99999999999999,"v":{"s":["# + String(repeating: "[", count: 5_000),
                #"{"exp":99999999999999.5,"v":{"p":"x"}}"#, #"{"exp":99999999999999,"v":{"p":"\#(String(repeating: "x", count: 15_000))"}}"#,
            ]).utf8)
        }
    }

    // MARK: Replay tickets

    /// A replay ticket text and the nonce of the visitor it names (for a matching cookie), when
    /// it is shaped as the app issues them. Its issuer (the app's per-process nonce, unknown here)
    /// is a guess or missing, so the app refuses even a well-shaped one, after every other check.
    static func ticket(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> (text: String, visitorNonce: String?) {
        let hex = Array("0123456789abcdef")
        let id = String((0..<32).map { _ in random.pick(hex) })
        let issuer = String((0..<32).map { _ in random.pick(hex) })
        let nonce = String((0..<VisitorNonce.length).map { _ in random.pick(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")) })
        let routeKey = random.pick(["/", "/first", "/plain"])
        let replay: JSONValue = ["routeKey": .string(routeKey), "events": []]
        let genuine = ReplayTicket(
            id: id, visitorNonce: nonce, issuer: random.chance(70) ? issuer : nil,
            replay: .init(routeKey: routeKey, events: [])
        ).sealed(with: secrets.ticketCodec) ?? "v1."
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1: return (genuine, nonce)
        case 2: return (String(genuine.prefix(Int.random(in: 0..<genuine.count, using: &random))), nonce)
        case 3: return (genuine + random.pick([".", ".x", "." + genuine]), nonce)
        case 4:  // a valid MAC over a wrong shape
            let text = random.pick([
                "{}", #"{"id":"","profile":null,"replay":{"routeKey":"/","events":[]}}"#, #"{"id":5,"profile":null,"replay":{}}"#,
                #"{"id":"x","profile":5,"replay":{"routeKey":"/","events":[]}}"#, #"{"id":"x","profile":null}"#,
                #"{"id":"x","profile":null,"replay":{"routeKey":7,"events":[]}}"#, #"{"id":"x","profile":null,"replay":{"routeKey":"/","events":{}}}"#,
                #"{"id":"x","profile":null,"replay":"r"}"#, "[]", "\"ticket\"",
                #"{"id":"\#(String(repeating: "i", count: 20_000))","profile":null,"replay":{"routeKey":"/","events":[]}}"#,
            ])
            return (seal(text, with: secrets.ticketCodec, secrets, purpose: ReplayTicket.purpose), nil)
        case 5: return (secrets.macOver(payload: malformedPayload(&random), purpose: ReplayTicket.purpose), nil)
        case 6:  // expired
            return ((try? secrets.expiredTicketCodec.seal(["id": .string(id), "profile": .null, "replay": replay])) ?? "v1.", nil)
        case 7: return (genuineState(&random, secrets), nonce)  // a state cookie as a ticket
        case 8:  // another key
            let foreign = SignedValueCodec(keys: .random(), purpose: ReplayTicket.purpose, lifetime: .seconds(600))
            return ((try? foreign.seal(["id": .string(id), "profile": .null, "replay": replay])) ?? "v1.", nil)
        case 9: return (VisitorStateForgery.withPayload(genuine, #"{"exp":99999999999999,"v":{"id":"x","profile":null,"replay":{"routeKey":"/","events":[]}}}"#), nil)
        case 10: return ("v1." + base64Noise(&random, count: Int.random(in: 0...2_000, using: &random)) + "." + base64Noise(&random, count: 43), nil)
        default: return (HostileRequest.junkText(&random, count: Int.random(in: 0...100, using: &random)), nil)
        }
    }

    // MARK: OFREP targeting keys

    /// The JSON text of a `context.targetingKey` value.
    static func targetingKey(_ random: inout SeededGenerator, _ secrets: FuzzSecrets) -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1, 2:  // a token the app could have issued
            return quoted((try? secrets.targetingCodec.seal(["profile": .string("fuzz-visitor-\(Int.random(in: 0..<500, using: &random))")])) ?? "")
        case 3:  // a valid token over a wrong shape
            let shapes: [JSONValue] = [["profile": ".."], ["profile": 5], ["profile": "a/b"], ["profile": .string(String(repeating: "p", count: 300))], [:], "x"]
            return quoted((try? secrets.targetingCodec.seal(random.pick(shapes))) ?? "")
        case 4: return quoted(secrets.macOver(payload: malformedPayload(&random), purpose: FuzzSecrets.targetingPurpose))
        case 5: return quoted(genuineState(&random, secrets))  // a state cookie as a token
        case 6: return quoted(profileId(&random))  // a bare profile id
        case 7: return random.pick(["5", "null", "{}", "[]", "true", quoted(""), quoted(String(repeating: "t", count: 5_000))])
        case 8: return quoted(stateCookie(&random, secrets))
        default: return quoted(HostileRequest.junkText(&random, count: Int.random(in: 0...60, using: &random)))
        }
    }

    // MARK: Helpers

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        (try? JSONValue.string(text).jsonText()) ?? "\"\""
    }

    /// `text` (JSON) sealed by `codec`; text the library cannot parse is MACed by hand instead.
    static func seal(_ text: String, with codec: SignedValueCodec, _ secrets: FuzzSecrets, purpose: String) -> String {
        if let value = try? JSONValue(jsonText: text), let sealed = try? codec.seal(value) { return sealed }
        return secrets.macOver(payload: Array(#"{"exp":99999999999999,"v":\#(text)}"#.utf8), purpose: purpose)
    }

    /// `count` characters of base64url, sometimes with a stray character.
    static func base64Noise(_ random: inout SeededGenerator, count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var text = String((0..<count).map { _ in random.pick(alphabet) })
        if count > 0, random.chance(20) { text += random.pick(["=", "+", "/", "%", " ", "é"]) }
        return text
    }
}
