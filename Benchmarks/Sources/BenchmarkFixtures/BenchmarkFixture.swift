import Foundation

/// A realistic optimized entry (~2.6 KB: a hero with rich text and two experiences, each with an
/// audience, a config and resolved variants) and an identified visitor's 20 selections, built in
/// code so the benchmarks need no files.
public enum BenchmarkFixture {
    /// The bench entry's JSON text at `revision` (a new revision is a new entry for the engine);
    /// `seed` other than 0 gives another baseline id.
    public static func entryJSON(revision: Int = 7, seed: Int = 0) -> String {
        let baselineId = seed == 0 ? "4ib0hsHWoSOnCVdDkizE8d" : "bench\(seed)Baseline"
        func sys(_ id: String, _ contentType: String) -> String {
            """
            {"space":{"sys":{"type":"Link","linkType":"Space","id":"spc01"}},"id":"\(id)","type":"Entry",\
            "createdAt":"2026-03-02T10:11:12.000Z","updatedAt":"2026-04-05T08:09:10.000Z",\
            "environment":{"sys":{"id":"main","type":"Link","linkType":"Environment"}},"revision":\(revision),\
            "contentType":{"sys":{"type":"Link","linkType":"ContentType","id":"\(contentType)"}},"locale":"en-US"}
            """
        }
        // Linked entries carry the short sys of a CDA include.
        func shortSys(_ id: String, _ contentType: String) -> String {
            #"{"id":"\#(id)","type":"Entry","revision":\#(revision),"contentType":{"sys":{"type":"Link","linkType":"ContentType","id":"\#(contentType)"}}}"#
        }
        func variant(_ id: String, _ headline: String) -> String {
            """
            {"metadata":{"tags":[],"concepts":[]},"sys":\(shortSys(id, "hero")),"fields":{"headline":"\(headline)",\
            "cta":{"label":"Shop now","href":"/shop"}}}
            """
        }
        func experience(_ id: String, _ audience: String, _ variantId: String, _ headline: String) -> String {
            """
            {"metadata":{"tags":[],"concepts":[]},"sys":\(shortSys(id, "nt_experience")),"fields":{"nt_name":"Hero for \(audience)",\
            "nt_type":"nt_personalization","nt_experience_id":"\(id)",\
            "nt_audience":{"metadata":{"tags":[],"concepts":[]},"sys":\(shortSys(audience, "nt_audience")),\
            "fields":{"nt_audience_id":"\(audience)","nt_name":"\(audience)"}},\
            "nt_config":{"traffic":1,"distribution":[0.5,0.5],"sticky":false,"components":[{"type":"EntryReplacement",\
            "baseline":{"id":"\(baselineId)"},"variants":[{"id":"\(variantId)","hidden":false}]}]},\
            "nt_variants":[\(variant(variantId, headline))]}}
            """
        }
        return """
            {"metadata":{"tags":[],"concepts":[]},"sys":\(sys(baselineId, "hero")),"fields":{\
            "internalTitle":"Home hero \(seed)","headline":"Welcome, everyone",\
            "body":{"nodeType":"document","data":{},"content":[{"nodeType":"paragraph","data":{},"content":[\
            {"nodeType":"text","value":"Fresh picks for the season, free delivery over 50 €.","marks":[],"data":{}}]}]},\
            "image":{"sys":{"type":"Link","linkType":"Asset","id":"heroImage01"}},\
            "nt_experiences":[\(experience("2qVK4T5lnScbswoyBuGipd", "audEurope01", "4k6ZyFQnR2POY5IJLLlJRb", "Welcome back, Europe")),\
            \(experience("6KfLDCdA75BGwr5HfSeXac", "audNorthAm01", "7Ae0ke0e3YqRLutG35d4Ve", "Hello, North America"))]}}
            """
    }

    /// 20 selections; the one for `2qVK4T5lnScbswoyBuGipd` (variant 1) matches the entry.
    public static let selectionsJSON: String = {
        var selections = (0..<19).map { index in
            #"{"experienceId":"exp\#(index)Other","variantIndex":\#(index % 3),"variants":{"base\#(index)":"var\#(index)"},"sticky":false}"#
        }
        selections.insert(
            #"{"experienceId":"2qVK4T5lnScbswoyBuGipd","variantIndex":1,"variants":{"4ib0hsHWoSOnCVdDkizE8d":"4k6ZyFQnR2POY5IJLLlJRb"},"sticky":false}"#,
            at: 7)
        return "[" + selections.joined(separator: ",") + "]"
    }()
}
