import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

@Suite("Preview overrides through OptimizationClient")
struct PreviewTests {
    static let hero = heroExperienceId
    static let europe = "7MdKq3XcVb0NwRf5TyJh8G"
    static let otherExperience = "3YtMb8QwRn5JcLx1VkHd0S"

    static func indices(_ selections: JSONValue?) -> [String: Int] {
        var result: [String: Int] = [:]
        for selection in selections?.arrayValue ?? [] {
            if let id = selection["experienceId"]?.stringValue, let index = selection["variantIndex"]?.intValue { result[id] = index }
        }
        return result
    }

    /// Resolves with the client's current selections.
    static func resolveWithCurrentSelections(_ client: OptimizationClient, _ entry: ContentfulEntry) throws -> ResolvedOptimizedEntry {
        let selections = try SelectedOptimizations(client.state.selectedOptimizations?.arrayValue ?? [])
        return client.resolveOptimizedEntry(baseline: entry, selectedOptimizations: selections)
    }

    @Test func beforeInitializeOverridesAreNoOpsAndThereIsNoPreviewState() {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        client.overrideVariant(experienceId: Self.hero, variantIndex: 1)
        client.overrideAudience(id: Self.europe, qualified: true, experienceIds: [Self.hero])
        client.resetAllOverrides()
        #expect(client.previewState == nil)
        #expect(throws: OptimizationError.notInitialized) { try client.loadDefinitions(audiences: ["items": []], experiences: ["items": []]) }
    }

    @Test func activatingAnAudienceSelectsVariant1AndAppendsUnknownExperiences() throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        let natural = Self.indices(client.state.selectedOptimizations)
        client.overrideAudience(id: Self.europe, qualified: true, experienceIds: ["6NvXe1KsBq4TzHm7WcRy2F", "9AbC1DeF3GhI5JkL7MnOpQ"])
        var expected = natural
        expected["6NvXe1KsBq4TzHm7WcRy2F"] = 1
        expected["9AbC1DeF3GhI5JkL7MnOpQ"] = 1
        #expect(Self.indices(client.state.selectedOptimizations) == expected)
        #expect(client.state.selectedOptimizations?.arrayValue?.last == ["experienceId": "9AbC1DeF3GhI5JkL7MnOpQ", "variantIndex": 1, "variants": [:]])
        let preview = try #require(client.previewState)
        #expect(preview.audienceOverrides == [Self.europe: true])
        #expect(preview.defaultAudienceQualifications == [Self.europe: true], "the new visitor is in Europe")
        #expect(preview.variantOverrides == ["6NvXe1KsBq4TzHm7WcRy2F": 1, "9AbC1DeF3GhI5JkL7MnOpQ": 1])
        #expect(preview.defaultVariantIndices == ["6NvXe1KsBq4TzHm7WcRy2F": 0, "9AbC1DeF3GhI5JkL7MnOpQ": 0])
        client.overrideAudience(id: Self.europe, qualified: false, experienceIds: [Self.hero])
        #expect(Self.indices(client.state.selectedOptimizations)[Self.hero] == 0)
        client.resetAudienceOverride(id: Self.europe)
        #expect(client.previewState?.audienceOverrides == [:])
        #expect(Self.indices(client.state.selectedOptimizations)[Self.hero] == 1)
        client.resetAllOverrides()
        #expect(Self.indices(client.state.selectedOptimizations) == natural)
    }

    @Test func aVariantOverrideChangesSelectionsResolutionAndFlags() throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        let hero = try ContentfulEntry(jsonData: fixtureData("entries/hero-optimized.json"))
        let natural = try Self.resolveWithCurrentSelections(client, hero)
        #expect(natural.entryId == "5pNs7JcXq2LmRb9VtKw1Hz")
        #expect(client.getFlag("hero-cta-color") == "#d73a49")

        client.overrideVariant(experienceId: Self.hero, variantIndex: 2)
        #expect(Self.indices(client.state.selectedOptimizations)[Self.hero] == 2)
        #expect(Self.indices(client.state.selectedOptimizations)[Self.otherExperience] == 1, "others keep their natural index")
        #expect(try Self.resolveWithCurrentSelections(client, hero).isEmptyVariant)
        #expect(client.resolveOptimizedEntry(baseline: hero).isEmptyVariant, "nil selections: the current, overridden ones")
        #expect(client.getFlag("hero-cta-color") == "#2da44e")
        #expect(client.getFlag("free-shipping-threshold") == 50, "flags of other experiences unchanged")

        client.overrideVariant(experienceId: Self.hero, variantIndex: 0)
        #expect(try Self.resolveWithCurrentSelections(client, hero).entryId == "3kPfV7sQy1ZcN0aRbW4xLm")
        #expect(client.resolveOptimizedEntry(baseline: hero).entryId == "3kPfV7sQy1ZcN0aRbW4xLm")
        #expect(client.getFlag("hero-cta-color") == "#1f6feb")
        let preview = try #require(client.previewState)
        #expect(preview.variantOverrides == [Self.hero: 0])
        #expect(preview.defaultVariantIndices == [Self.hero: 1])
        #expect(preview.changes == client.state.changes)
        #expect(preview.selectedOptimizations == client.state.selectedOptimizations)
        #expect(preview.previewModel == nil)

        client.overrideVariant(experienceId: Self.hero, variantIndex: 99)
        #expect(client.getFlag("hero-cta-color") == "#1f6feb", "out of range: the baseline value")
        client.overrideVariant(experienceId: Self.hero, variantIndex: -1)
        #expect(client.previewState?.variantOverrides == [Self.hero: 99], "a negative index is ignored")

        client.resetVariantOverride(experienceId: Self.hero)
        #expect(client.getFlag("hero-cta-color") == "#d73a49")
        #expect(try Self.resolveWithCurrentSelections(client, hero).entryId == "5pNs7JcXq2LmRb9VtKw1Hz")
        #expect(client.resolveOptimizedEntry(baseline: hero).entryId == "5pNs7JcXq2LmRb9VtKw1Hz")
        #expect(client.previewState?.variantOverrides == [:])
    }

    @Test func loadDefinitionsBuildsThePreviewModel() throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        let hero = try JSONValue(jsonData: fixtureData("entries/hero-optimized.json"))
        let experiences = hero["fields"]?["nt_experiences"]?.arrayValue ?? []
        let audiences = experiences.compactMap { $0["fields"]?["nt_audience"] }
        let loaded = try client.loadDefinitions(audiences: ["items": .array(audiences)], experiences: ["items": .array(experiences)])
        #expect(loaded.audiences == 2 && loaded.experiences == 2)
        client.setPreviewPanelOpen(true)
        client.overrideVariant(experienceId: Self.hero, variantIndex: 2)
        let preview = try #require(client.previewState)
        #expect(preview.previewPanelOpen)
        #expect(preview.audienceNameMap.count == 2)
        #expect(preview.experienceNameMap[Self.hero] != nil)
        let groups = preview.previewModel?["audiencesWithExperiences"]?.arrayValue ?? []
        let heroRow = groups.flatMap { $0["experiences"]?.arrayValue ?? [] }.first { $0["id"] == .string(Self.hero) }
        #expect(heroRow?["isOverridden"] == true)
        #expect(heroRow?["currentVariantIndex"] == 2)
        #expect(heroRow?["naturalVariantIndex"] == 1)
        #expect(throws: OptimizationError.self) { try client.loadDefinitions(audiences: [1], experiences: ["items": []]) }
    }

    @Test func resetClearsEveryOverride() throws {
        let client = try makeEventClient(defaults: try newVisitorDefaults())
        defer { client.destroy() }
        client.overrideVariant(experienceId: Self.hero, variantIndex: 2)
        client.reset()
        let preview = try #require(client.previewState)
        #expect(preview.variantOverrides.isEmpty)
        #expect(preview.selectedOptimizations == nil)
        #expect(client.state.selectedOptimizations == nil)
        client.overrideVariant(experienceId: Self.hero, variantIndex: 1)
        #expect(client.state.selectedOptimizations == [["experienceId": .string(Self.hero), "variantIndex": 1, "variants": [:]]],
                "no stale baseline after reset")
    }
}
