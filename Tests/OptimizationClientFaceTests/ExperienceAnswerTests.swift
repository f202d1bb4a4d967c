import Foundation
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationClientFace
@testable import OptimizationServiceFace
import Testing

/// ``OptimizationClient/parseExperienceAnswer(_:apiVersion:)``: the shared core's reading of an
/// Experience answer, for answers the host holds.
@Suite("Experience answers read by the core")
struct ExperienceAnswerTests {
    @Test func anAnswerIsReadAsTheDeliveryPathReadsIt() throws {
        let client = try makeClient()
        defer { client.destroy() }
        let text = String(decoding: try fixtureData("selections/new-visitor.json"), as: UTF8.self)
        let answer = try client.parseExperienceAnswer(text)
        let raw = try JSONValue(jsonText: text)
        #expect(answer.profileId == raw["data"]?["profile"]?["id"]?.stringValue)
        let rawSelections = try #require(raw["data"]?["experiences"]?.arrayValue)
        #expect(answer.selectedOptimizations.selections.count == rawSelections.count)
        for (parsed, given) in zip(answer.selectedOptimizations.selections, rawSelections) {
            #expect(parsed["experienceId"] == given["experienceId"])
            // The core's reading: `sticky` always present, a boolean.
            #expect(parsed["sticky"] == .bool(given["sticky"]?.boolValue == true))
        }
    }

    @Test func anInvalidAnswerIsATypedErrorNamingTheProblem() throws {
        let client = try makeClient()
        defer { client.destroy() }
        #expect(throws: ExperienceAnswerError.invalid("Experience API response is invalid: data.experiences is not an array.")) {
            try client.parseExperienceAnswer(#"{"data":{"profile":{"id":"p"},"experiences":{},"changes":[]}}"#)
        }
        #expect(throws: ExperienceAnswerError.self) { try client.parseExperienceAnswer("[") }
        // v1 allows a boolean `error`, v2 does not.
        let v1 = #"{"data":{"profile":{"id":"p"},"experiences":[],"changes":[]},"error":false}"#
        #expect(try client.parseExperienceAnswer(v1, apiVersion: .v1).profileId == "p")
        #expect(throws: ExperienceAnswerError.self) { try client.parseExperienceAnswer(v1, apiVersion: .v2) }
    }

    @Test func withoutAnEngineItThrowsNotInitialized() throws {
        let client = try makeClient()
        client.destroy()
        #expect(throws: ExperienceAnswerError.notInitialized) { try client.parseExperienceAnswer("{}") }
    }
}
