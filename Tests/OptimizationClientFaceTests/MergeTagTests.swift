import Foundation
import JavaScriptHost
import Optimization
import OptimizationTestSupport
@testable import OptimizationEngine
@testable import OptimizationServiceFace
@testable import OptimizationClientFace
import Testing

@Suite("Merge tags")
struct MergeTagTests {
    /// A complete profile.
    static let profile: JSONValue = [
        "id": "", "stableId": "", "random": 0.42, "audiences": [],
        "traits": ["firstname": "John", "nested": ["foo": "bar", "baz": ["qux": "grml"], "baz_qux": "quux"], "non_nested": 123,
                   "zero": 0, "no": false, "empty": "", "nothing": .null, "list": [1, 2]],
        "location": ["continent": "EU"],
        "session": ["id": "s", "isReturningVisitor": false, "count": 1, "activeSessionLength": 0, "averageSessionLength": 0,
                    "landingPage": ["path": "/", "query": [:], "referrer": "", "search": "", "url": "https://example.test/"]],
    ]

    /// A merge-tag entry, with another id / fallback when asked.
    static func mergeTag(_ id: String = "location.continent", fallback: String? = "Nowhere") -> JSONValue {
        var fields: JSONValue = ["nt_name": "Merge tag", "nt_mergetag_id": .string(id)]
        if let fallback, case .object(var members) = fields {
            members["nt_fallback"] = .string(fallback)
            fields = .object(members)
        }
        return [
            "metadata": ["tags": []],
            "sys": ["type": "Entry", "id": "nM127uVevlpDWytfZRyum", "contentType": ["sys": ["type": "Link", "linkType": "ContentType", "id": "nt_mergetag"]]],
            "fields": fields,
        ]
    }

    @Test func nilBeforeInitialize() {
        let client = OptimizationClient(environment: .init(clock: ManualClock(), transport: UnconfiguredFetchTransport(), storage: .disabled))
        #expect(client.getMergeTagValue(Self.mergeTag()) == nil)
        #expect(client.getMergeTagValue(Self.mergeTag(), profile: Self.profile) == nil)
    }

    @Test func mergeTagValuesComeFromTheCurrentProfileOrTheFallback() throws {
        let client = try makeEventClient(defaults: StorageDefaults(profile: Self.profile))
        defer { client.destroy() }
        #expect(client.getMergeTagValue(Self.mergeTag()) == "EU")
        let cases: [(String, String?)] = [
            ("traits.firstname", "John"), ("traits_firstname", "John"), ("traits.nested.foo", "bar"),
            ("traits_nested.baz_qux", "quux"), ("traits_nested.baz.qux", "grml"), ("traits.non_nested", "123"), ("a.b.c", nil),
        ]
        for (id, expected) in cases {
            #expect(client.getMergeTagValue(Self.mergeTag(id, fallback: nil)) == expected, "\(id)")
        }
        #expect(client.getMergeTagValue([:]) == nil, "not a merge tag entry")
        #expect(client.getMergeTagValue(Self.mergeTag(), profile: [:]) == "Nowhere", "a profile failing the schema")
        var withoutContinent = Self.profile
        if case .object(var members) = withoutContinent, case .object(var location)? = members["location"] {
            location["continent"] = nil
            members["location"] = .object(location)
            withoutContinent = .object(members)
        }
        #expect(client.getMergeTagValue(Self.mergeTag(), profile: withoutContinent) == "Nowhere")
    }

    @Test func presentScalarsIncludingZeroAndFalseAreReturned() throws {
        let client = try makeEventClient(defaults: StorageDefaults(profile: Self.profile))
        defer { client.destroy() }
        #expect(client.getMergeTagValue(Self.mergeTag("traits.zero")) == "0")
        #expect(client.getMergeTagValue(Self.mergeTag("traits.no")) == "false")
        #expect(client.getMergeTagValue(Self.mergeTag("traits.empty")) == "Nowhere")
        #expect(client.getMergeTagValue(Self.mergeTag("traits.nothing")) == "Nowhere")
        #expect(client.getMergeTagValue(Self.mergeTag("traits.list")) == "Nowhere")
        #expect(client.getMergeTagValue(Self.mergeTag("traits.missing", fallback: nil)) == nil)
    }

    @Test func withoutAProfileTheFallbackIsUsed() throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        #expect(client.getMergeTagValue(Self.mergeTag()) == "Nowhere")
        #expect(client.getMergeTagValue(Self.mergeTag(fallback: nil)) == nil)
    }

    @Test func scanningFindsInlineMergeTagsInDocumentOrderOnce() throws {
        let entry = try ContentfulEntry(jsonData: fixtureData("merge-tags/article.json"))
        let scan = try MergeTags.references(in: entry)
        #expect(scan.references.map(\.id) == ["traits_firstName", "location.continent"])
        #expect(scan.references.allSatisfy { $0.field == "body" })
        #expect(scan.unresolvedLinks.isEmpty)
        let collection = try ContentfulEntry(jsonData: fixtureData("merge-tags/article-collection.json"))
        let all = try MergeTags.references(in: collection)
        #expect(all.references.map(\.id) == ["traits_firstName", "location.continent", "traits.ordersPlaced"])
        #expect(all.unresolvedLinks == ["9MissingMergeTag0000001"])
        let footer = try MergeTags.references(in: collection, field: "footer")
        #expect(footer.references.map(\.id) == ["traits_firstName"])
        #expect(throws: MergeTags.ScanError.fieldNotFound(entryId: entry.id, field: "nope")) { try MergeTags.references(in: entry, field: "nope") }
        #expect(throws: MergeTags.ScanError.notRichText(entryId: entry.id, field: "summary")) { try MergeTags.references(in: entry, field: "summary") }
    }

    @Test func aCyclicRichTextGraphIsScannedSafely() throws {
        // cda-richtext-cycle.json embeds entries that embed each other back.
        let entry = try ContentfulEntry(jsonData: fixtureData("entries/cda-richtext-cycle.json"))
        #expect(try MergeTags.references(in: entry).references.isEmpty)
    }

    @Test func renderingEveryMergeTagOfAnEntry() throws {
        let client = try makeEventClient()
        defer { client.destroy() }
        let profile = try JSONValue(jsonData: fixtureData("merge-tags/profile.json"))
        let collection = try ContentfulEntry(jsonData: fixtureData("merge-tags/article-collection.json"))
        let rendered = try client.mergeTagValues(in: collection, profile: profile)
        #expect(rendered.jsonValue == ["traits_firstName": "Ada", "location.continent": "EU", "traits.ordersPlaced": "0"])
        let incomplete = try JSONValue(jsonData: fixtureData("merge-tags/profile-incomplete.json"))
        let fallbacks = try client.mergeTagValues(in: collection, profile: incomplete)
        #expect(fallbacks.jsonValue == ["traits_firstName": "there", "location.continent": "your part of the world", "traits.ordersPlaced": .null])
        let response = try JSONValue(jsonData: fixtureData("merge-tags/profile-response.json"))
        #expect(try MergeTags.profile(in: response)["location"]?["continent"] == "NA")
        #expect(try MergeTags.profile(in: profile) == profile)
        #expect(throws: MergeTags.ProfileError.missingProfile) { try MergeTags.profile(in: ["data": ["experiences": []]]) }
        #expect(throws: MergeTags.ProfileError.notAnObject("an array")) { try MergeTags.profile(in: [1]) }
    }
}
