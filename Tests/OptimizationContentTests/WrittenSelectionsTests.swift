import Foundation
import Optimization
import OptimizationTestSupport
@testable import OptimizationContent
@testable import OptimizationJSON
import Testing

/// Selections kept as the text an earlier `SelectedOptimizations` wrote: the same text, values,
/// content key and elements as the selections that wrote it, built only when read.
@Suite struct WrittenSelectionsTests {
    static func written(_ selections: SelectedOptimizations) throws -> SelectedOptimizations {
        // As a visitor state's payload holds them: a member of an object, one level down.
        let tape = try #require(JSONTape.scan(#"{"v":{"s":"# + selections.jsonText + "}}", recordedDepth: 2))
        let value = try #require(tape.member("v", of: JSONTape.rootNode))
        let member = try #require(tape.member("s", of: value))
        return try #require(SelectedOptimizations(writtenArrayAt: member, of: tape))
    }

    @Test func writtenSelectionsAreTheSelectionsThatWroteThem() throws {
        let files = ["selections/new-visitor.json", "selections/malformed-mix-all.json", "selections/empty.json", "selections/roundtrip.json"]
        for file in files {
            let built = try SelectedOptimizations(jsonData: fixtureData(file))
            let kept = try Self.written(built)
            #expect(kept == built)
            #expect(kept.jsonText == built.jsonText)
            #expect(kept.cacheKey == built.cacheKey)
            #expect(kept.cacheKey == ContentKey.make(for: built.jsonText), "the key of the text, as before")
            for index in -1...built.selections.count {
                #expect(kept.selection(at: index) == built.selection(at: index), "\(file) \(index)")
                #expect(built.selection(at: index) == (built.selections.indices.contains(index) ? built.selections[index] : nil))
            }
            #expect(kept.selections == built.selections)
            #expect(kept.selection(at: 0) == built.selections.first, "after all were built too")
        }
    }

    @Test func onlyAnArrayIsKept() throws {
        let tape = try #require(JSONTape.scan(#"{"a":{},"b":"[]","c":5,"d":null,"e":[],"f":[[1]]}"#, recordedDepth: 1))
        for key in ["a", "b", "c", "d"] {
            let member = try #require(tape.member(key, of: JSONTape.rootNode))
            #expect(SelectedOptimizations(writtenArrayAt: member, of: tape) == nil, "\(key)")
        }
        #expect(SelectedOptimizations(writtenArrayAt: JSONTape.rootNode, of: tape) == nil, "an object")
        let emptyMember = try #require(tape.member("e", of: JSONTape.rootNode))
        let empty = try #require(SelectedOptimizations(writtenArrayAt: emptyMember, of: tape))
        #expect(empty == .empty && empty.selections.isEmpty && empty.selection(at: 0) == nil)
        let nestedMember = try #require(tape.member("f", of: JSONTape.rootNode))
        let nested = try #require(SelectedOptimizations(writtenArrayAt: nestedMember, of: tape))
        #expect(nested.selections == [[1]])
        #expect(nested.jsonText == "[[1]]")
    }

    @Test func theContentKeyIsMadeOnFirstUseAndIsTheSameForBuiltSelections() throws {
        let built = try SelectedOptimizations([["experienceId": "e", "variantIndex": 1]])
        let copy = built
        #expect(copy.cacheKey == built.cacheKey)
        #expect(built.cacheKey == ContentKey.make(for: #"[{"experienceId":"e","variantIndex":1}]"#))
        #expect(SelectedOptimizations.empty.cacheKey == ContentKey.make(for: "[]"))
    }
}
