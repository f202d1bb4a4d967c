import Optimization

/// Turns the entries a request resolved into the HTML page. Pure and thread-safe.
///
/// Every entry is one `<section>` whose `data-baseline` is the baseline's id and `data-entry` the
/// id of the entry actually rendered (the baseline, a variant, or empty for an empty variant, which
/// renders no content), so tests and people can see which variant a visitor got.
public enum PageRenderer {
    /// One entry of the page as rendered.
    public struct Section: Sendable, Equatable {
        public var baselineId: String
        /// The entry rendered (baseline or variant); nil for an empty variant.
        public var entry: JSONValue?

        public init(baselineId: String, entry: JSONValue?) {
            self.baselineId = baselineId
            self.entry = entry
        }

        /// The section for a baseline rendered as is (no engine).
        public init(baseline: ContentfulEntry) {
            self.init(baselineId: baseline.id, entry: baseline.baseline)
        }

        /// The section for what the engine resolved.
        public init(baseline: ContentfulEntry, resolved: ResolvedOptimizedEntry) {
            self.init(baselineId: baseline.id, entry: resolved.isEmptyVariant ? nil : resolved.entry)
        }
    }

    /// The whole page. `consent` is the visitor's recorded choice (nil: not asked yet), shown with
    /// the consent form. `mode` names the route in the page (`personalized`, `handoff`, `plain`).
    public static func page(sections: [Section], consent: Bool?, mode: String) -> String {
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Personalized pages</title></head>
            <body data-mode="\(mode)">
            <main>

            """
        for section in sections {
            html += render(section)
        }
        html += "</main>\n"
        html += consentForm(consent: consent)
        html += "</body></html>\n"
        return html
    }

    static func render(_ section: Section) -> String {
        guard let entry = section.entry else {
            return "<section data-baseline=\"\(escape(section.baselineId))\" data-entry=\"\" hidden></section>\n"
        }
        let id = entry["sys"]?["id"]?.stringValue ?? ""
        let fields = entry["fields"]
        let title = fields?["headline"]?.stringValue ?? fields?["title"]?.stringValue ?? fields?["internalTitle"]?.stringValue ?? ""
        var body = fields?["text"]?.stringValue ?? ""
        if body.isEmpty, let richText = fields?["body"] { body = plainText(richText) }
        return """
            <section data-baseline="\(escape(section.baselineId))" data-entry="\(escape(id))">\
            <h2>\(escape(title))</h2><p>\(escape(body))</p></section>

            """
    }

    /// The text of a rich-text document (its `text` nodes in order); embedded entries are skipped.
    static func plainText(_ node: JSONValue) -> String {
        var out = ""
        collectText(node, into: &out, depth: 0)
        return out
    }

    private static func collectText(_ node: JSONValue, into out: inout String, depth: Int) {
        guard depth < 64 else { return }
        if node["nodeType"]?.stringValue == "text", let value = node["value"]?.stringValue {
            out += value
            return
        }
        for child in node["content"]?.arrayValue ?? [] {
            collectText(child, into: &out, depth: depth + 1)
        }
    }

    static func consentForm(consent: Bool?) -> String {
        let state = switch consent {
        case true?: "accepted"
        case false?: "declined"
        case nil: "not asked"
        }
        return """
            <form method="post" action="/consent" data-consent="\(state)">\
            <p>Personalization and analytics cookies: \(state).</p>\
            <button name="consent" value="accept">Accept</button> \
            <button name="consent" value="decline">Decline</button></form>

            """
    }

    /// HTML-escapes text for element content and double-quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
