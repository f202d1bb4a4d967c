import Foundation
import JavaScriptHost
import MetricsTestKit
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
import Testing

/// Selections opened from a sealed visitor state: kept as the text that was sealed (validated,
/// not rebuilt), built on demand, and equal to the ones sealed.
@Suite struct OpenedSelectionsTests {
    static let key = [UInt8](repeating: 0xC3, count: 32)

    static func codec(clock: ManualClock = ManualClock(), metrics: TestMetrics? = nil) throws -> VisitorStateCodec {
        VisitorStateCodec(keys: try VisitorStateKeys([key]), lifetime: .seconds(3600), clock: clock, metricsFactory: metrics)
    }

    /// A codec sealing any value for the visitor-state purpose with `codec`'s key.
    static func forger(clock: ManualClock) throws -> SignedValueCodec {
        SignedValueCodec(keys: try VisitorStateKeys([key]), purpose: VisitorStateCodec.purpose, lifetime: .seconds(3600), clock: clock)
    }

    /// Every selections fixture of the golden cases, plus values whose strings the writer escapes.
    static func allSelections() throws -> [SelectedOptimizations] {
        let files = Set(GoldenCase.all.compactMap(\.selections)).sorted()
        var all = try files.map { try SelectedOptimizations(jsonData: fixtureData($0)) }
        all.append(try SelectedOptimizations([
            ["experienceId": "quote\"back\\slash\nline\u{2028}sep\u{1}ctl é 😀", "variantIndex": 1, "variants": ["a": "b"], "sticky": true],
            ["experienceId": "x", "variantIndex": -0.5e3, "variants": [:], "nested": [[[["deep": .null]]]]],
            [], "not an object", 7,
        ]))
        all.append(.empty)
        return all
    }

    @Test func aStateOpenedFromItsSealedTextHasTheSelectionsThatWereSealed() throws {
        let codec = try Self.codec()
        for selections in try Self.allSelections() {
            let state = VisitorState(profileId: "visitor-1", consent: true, selections: selections)
            let opened = try #require(codec.open(codec.seal(state))?.selections)
            #expect(opened == selections, "\(selections.jsonText.prefix(80))")
            #expect(opened.jsonText == selections.jsonText)
            #expect(opened.cacheKey == selections.cacheKey, "the same content key as the selections sealed")
            #expect(opened.handle != selections.handle)
            // Element by element on demand first, then all of them.
            for index in selections.selections.indices {
                #expect(opened.selection(at: index) == selections.selections[index], "\(index)")
            }
            #expect(opened.selection(at: selections.selections.count) == nil)
            #expect(opened.selection(at: -1) == nil)
            #expect(opened.selections.count == selections.selections.count)
            for (built, given) in zip(opened.selections, selections.selections) {
                #expect(built == given)
                #expect(try built.jsonText() == given.jsonText(), "the same text, key order and number texts included")
            }
            // All of them first, on another opening.
            let again = try #require(codec.open(codec.seal(state))?.selections)
            #expect(again.selections == selections.selections)
            #expect(again.selection(at: 0) == selections.selections.first)
            // Sealed again, the opened selections give the same text.
            #expect(codec.open(codec.seal(VisitorState(selections: opened)))?.selections?.jsonText == selections.jsonText)
        }
        #expect(codec.rejectedCount == 0)
    }

    @Test func copiesShareWhatWasBuiltAcrossThreads() async throws {
        let codec = try Self.codec()
        let selections = try SelectedOptimizations(jsonData: fixtureData("selections/malformed-mix-all.json"))
        let opened = try #require(codec.open(codec.seal(VisitorState(selections: selections)))?.selections)
        let count = selections.selections.count
        try #require(count > 1)
        await withTaskGroup(of: Bool.self) { group in
            for task in 0..<16 {
                let copy = opened
                group.addTask {
                    if task % 2 == 0 { return copy.selection(at: task % count) == selections.selections[task % count] }
                    return copy.selections == selections.selections && copy.cacheKey == selections.cacheKey
                }
            }
            for await agrees in group { #expect(agrees) }
        }
    }

    @Test(arguments: GoldenCase.all.filter { $0.selections != nil })
    func resolvingWithOpenedSelectionsGivesWhatBuiltOnesGive(_ golden: GoldenCase) throws {
        let codec = try Self.codec()
        let built = try SelectedOptimizations(jsonData: fixtureData(try #require(golden.selections)))
        let entry = try ContentfulEntry(jsonData: fixtureData(golden.entry), entryId: golden.entryId)
        // Separate clients: one client's memo would answer the opened selections by their content
        // key from the built ones' resolve.
        let eager = try makeClient()
        defer { eager.destroy() }
        let lazy = try makeClient()
        defer { lazy.destroy() }
        let expected = eager.resolveOptimizedEntry(baseline: entry, selectedOptimizations: built)
        for _ in 0..<2 {
            // Each time newly opened: nothing built yet when resolving.
            let opened = try #require(codec.open(codec.seal(VisitorState(selections: built)))?.selections)
            let resolved = lazy.resolveOptimizedEntry(baseline: entry, selectedOptimizations: opened)
            #expect(resolved.entryId == expected.entryId)
            #expect(resolved.entryId == golden.expectedEntryId)
            #expect(resolved.isEmptyVariant == expected.isEmptyVariant)
            #expect(resolved.selectedOptimization == expected.selectedOptimization)
            #expect(resolved.entry == expected.entry)
            #expect((resolved.optimizationContextId != nil) == (expected.optimizationContextId != nil))
        }
    }

    /// The state that opening `text` gave before selections were kept as text: the payload
    /// parsed into values, then checked member by member (nil: refused).
    static func openedByValue(_ text: String, forger: SignedValueCodec) -> VisitorState? {
        guard let value = forger.open(text), case .object(let members) = value else { return nil }
        var state = VisitorState()
        if let member = members["p"] {
            guard case .string(let id) = member, id.utf8.count <= VisitorStateCodec.maximumProfileIdLength else { return nil }
            state.profileId = id
        }
        if let member = members["c"] {
            guard case .bool(let consent) = member else { return nil }
            state.consent = consent
        }
        if let member = members["s"] {
            guard case .array(let elements) = member, let selections = try? SelectedOptimizations(elements) else { return nil }
            state.selections = selections
        }
        return state
    }

    typealias WireFormat = SealedVisitorStateWireFormatTests

    /// Payloads signed with the key, as another writer holding it could make them: each opens
    /// exactly when it opened when the payload was parsed into values, to the same state, and
    /// each refusal is counted once, as `malformed` (or `expired`).
    @Test func aVerifiedValueOfAnotherShapeOrNotJSONIsRefusedAsBefore() throws {
        let clock = ManualClock(start: WireFormat.start)
        let metrics = TestMetrics()
        let codec = try Self.codec(clock: clock, metrics: metrics)
        let forger = try Self.forger(clock: clock)
        func sealed(_ valueJSON: String) -> String { WireFormat.referenceText(valueJSON: valueJSON, key: Self.key) }
        let deepest = String(repeating: "[", count: 510) + String(repeating: "]", count: 510)
        let tooDeep = String(repeating: "[", count: 511) + String(repeating: "]", count: 511)
        // A sealed `s` that is valid JSON but not an array, and other members of the wrong type.
        let wrongShapes = [
            #"{"s":{"experienceId":"x"}}"#, #"{"s":5}"#, #"{"s":null}"#, #"{"s":"[]"}"#, #"{"s":true}"#,
            #"{"p":"visitor","c":true,"s":{}}"#, #"{"s":[],"s":{}}"#, #"[{"s":[]}]"#, #"{"c":true,"\u0073":"x"}"#,
            #"{"p":5,"s":[]}"#, #"{"c":"true","s":[]}"#, #""text""#, "null",
            #"{"p":""# + String(repeating: "x", count: 257) + #"","s":[]}"#,
        ]
        // Verified, but not JSON (never sealed by the codec's own `seal`).
        let notJSON = [
            #"{"s":[1,]}"#, #"{"s":[1}"#, #"{"s":[01]}"#, #"{"s":["\x"]}"#, #"{"s":[tru]}"#, "{\"s\":[\"\u{1}\"]}",
            #"{"s":"# + tooDeep + "}", #"{"s":[]"#, #"{"s":[]}}"#, "{\"s\":[\"\u{FEFF}\"]}\u{FEFF}",
        ]
        // Valid JSON arrays in forms the codec's writer would not give: they open, to the same values.
        let opening = [
            #"{"s":[]}"#, #"{"s":{},"s":[1,{"a":2}]}"#, #" { "s" : [ {"experienceId" : "x", "variantIndex":1} ] } "#,
            #"{"\u0073":[{"variants":{"a":"b"}}],"p":"v\u00e9","c":false,"later":{"x":[1,2]}}"#,
            "{\"s\":[\"caf\u{e9} \u{1F600}\"],\"c\":true}",
            #"{"s":[1.50,-0,1e2,"\/\u0041\ud800"]}"#,
            #"{"s":"# + deepest + "}",
            #"{"s":[{"a":1,"a":2}],"p":"x","p":"y"}"#,
        ]
        var refusals = 0
        for valueJSON in wrongShapes + notJSON + opening {
            let text = sealed(valueJSON)
            let opened = codec.open(text)
            if let expected = Self.openedByValue(text, forger: forger) {
                let opened = try #require(opened, "\(valueJSON)")
                #expect(opened.profileId == expected.profileId)
                #expect(opened.consent == expected.consent)
                #expect(opened.selections?.selections == expected.selections?.selections, "the same values, whatever the text's form")
                for index in 0..<(expected.selections?.selections.count ?? 0) {
                    #expect(codec.open(text)?.selections?.selection(at: index) == expected.selections?.selections[index])
                }
            } else {
                #expect(opened == nil, "\(valueJSON)")
                refusals += 1
            }
            #expect(codec.rejectedCount == refusals, "\(valueJSON)")
        }
        #expect(refusals == wrongShapes.count + notJSON.count)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "malformed")]) == refusals)
        // Expired beats a wrong shape, as before: the shape is looked at only when the value opens.
        clock.advance(by: .seconds(3600))
        #expect(codec.open(sealed(#"{"s":5}"#)) == nil)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "expired")]) == 1)
        #expect(metrics.counterTotal(label: "optimization_visitor_state_rejected_total", dimensions: [("purpose", "visitor-state"), ("reason", "malformed")]) == refusals)
    }

    /// The payload around the value: an expiry and a value are needed, as before.
    @Test func aPayloadWithoutAnExpiryOrAValueIsRefusedAsBefore() throws {
        let clock = ManualClock(start: WireFormat.start)
        let codec = try Self.codec(clock: clock)
        let forger = try Self.forger(clock: clock)
        let payloads = [
            #"{"v":{"s":[]}}"#, #"{"exp":"1767229200000","v":{}}"#, #"{"exp":1767229200000}"#, "[]", "", " ",
            #"{"exp":1767229200000,"v":{"s":[]},"exp":"x"}"#, #"{"exp":1,"v":{"s":[]},"exp":1767229200000}"#,
            "\u{FEFF}{\"exp\":1767229200000,\"v\":{\"s\":[1]}}", "\u{FEFF}\u{FEFF}{\"exp\":1767229200000,\"v\":{}}",
            #"{"exp":1767229200000,"v":{"s":[2]},"v":{"s":[3]}}"#, #"{"exp":1767229200000.5e0,"v":{"s":[]}}"#,
            #"{"exp":1767225600000,"v":{"s":[]}}"#, #"{"exp":-1,"v":{}}"#, #"{ "exp" : 1767229200000 , "v" : null }"#,
        ]
        var bytes = payloads.map { Array($0.utf8) }
        bytes.append(Array(#"{"exp":1767229200000,"v":{"s":[""#.utf8) + [0xC3, 0x28] + Array(#""]}}"#.utf8))  // not UTF-8
        bytes.append(Array(#"{"exp":1767229200000,"v":{"s":[""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""]}}"#.utf8))  // a surrogate
        var refusals = 0
        for payload in bytes {
            let text = WireFormat.referenceText(payload: payload, key: Self.key)
            let expected = Self.openedByValue(text, forger: forger)
            let opened = codec.open(text)
            #expect(opened == expected, "\(String(decoding: payload, as: UTF8.self))")
            #expect(opened?.selections?.selections == expected?.selections?.selections)
            if expected == nil { refusals += 1 }
            #expect(codec.rejectedCount == refusals)
        }
        #expect(refusals > 8 && refusals < bytes.count - 3, "both outcomes are exercised")
    }
}
