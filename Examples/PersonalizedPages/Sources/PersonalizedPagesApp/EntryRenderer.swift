import Optimization

/// Renders one entry of the page (the baseline or the variant the visitor gets) from its visible
/// fields, never its CMS-internal `internalTitle`. Pure and thread-safe.
///
/// The layout follows the entry's content type:
/// - `hero`: `<section class="hero">` with the `headline` as the page's `<h1>`, the rich-text
///   `body`, the call to action (`ctaLabel` as a link button to `ctaUrl`) and the `image`.
/// - `promoStrip`: `<section class="promo">` with its `text`.
/// - anything else: `<section class="article">` with a `<h2>` from `headline` or `title` (an
///   `article` without either gets the page's own heading, ``articleHeading``), the image when
///   there is one, the rich-text `body` (or `text`) and the call to action.
///
/// A variant that leaves out `ctaUrl` links to the baseline's. Images: an asset resolved in the
/// document (inline, or from a collection's `includes.Asset`) whose file is on Contentful's image
/// CDN renders as `<img>` with its title or description as `alt`; an unresolved asset link (the
/// fixtures' case) renders a placeholder of the same size (`role="img"`, `aria-label`), so the
/// layout holds.
struct EntryRenderer {
    /// Renders rich text, with the visitor's merge-tag values.
    var richText: RichTextRenderer

    /// The heading of an `article` entry that has no heading field of its own.
    static let articleHeading = "From the trail journal"

    /// The `<section>` of `entry`, which stands in for `baseline` (whose id is `data-baseline`).
    func html(_ entry: JSONValue, baseline: ContentfulEntry) -> String {
        let fields = entry["fields"]
        let id = entry["sys"]?["id"]?.stringValue ?? ""
        let contentType = entry["sys"]?["contentType"]?["sys"]?["id"]?.stringValue ?? ""
        let heading = fields?["headline"]?.stringValue ?? fields?["title"]?.stringValue
        let open = """
            <section data-baseline="\(HTMLText.escape(baseline.id))" data-entry="\(HTMLText.escape(id))" \
            id="\(HTMLText.escape(Self.anchor(of: baseline.id)))"
            """
        let body = bodyHTML(fields)
        let cta = callToAction(fields, baseline: baseline)
        switch contentType {
        case "hero":
            return """
                \(open) class="hero">
                <div class="copy">
                \(heading.map { "<h1>\(HTMLText.escape($0))</h1>\n" } ?? "")\(body)\(cta)</div>
                \(image(fields, alt: heading, in: baseline))
                </section>

                """
        case "promoStrip":
            let text = fields?["text"]?.stringValue.map { "<p>\(HTMLText.escape($0))</p>" } ?? body
            return "\(open) class=\"promo\">\(text)\(cta)</section>\n"
        default:
            let title = Self.heading(of: entry)
            let media = fields?["image"] == nil ? "" : image(fields, alt: title, in: baseline) + "\n"
            return """
                \(open) class="article">
                \(title.map { "<h2>\(HTMLText.escape($0))</h2>\n" } ?? "")\(media)\(body)\(cta)</section>

                """
        }
    }

    /// The heading a reader sees for `entry`: its `headline` or `title`; for an `article`
    /// without either, ``articleHeading``.
    static func heading(of entry: JSONValue) -> String? {
        let fields = entry["fields"]
        if let heading = fields?["headline"]?.stringValue ?? fields?["title"]?.stringValue { return heading }
        return entry["sys"]?["contentType"]?["sys"]?["id"]?.stringValue == "article" ? articleHeading : nil
    }

    /// The `id` of the section standing in for the baseline `baselineId` (links to it use `#id`).
    static func anchor(of baselineId: String) -> String {
        "entry-\(baselineId)"
    }

    /// The rich-text `body` as HTML, else the plain `text` as one paragraph.
    private func bodyHTML(_ fields: JSONValue?) -> String {
        if let document = fields?["body"], document["nodeType"]?.stringValue == "document" {
            return richText.html(document)
        }
        if let text = fields?["text"]?.stringValue, !text.isEmpty { return "<p>\(HTMLText.escape(text))</p>\n" }
        return ""
    }

    private func callToAction(_ fields: JSONValue?, baseline: ContentfulEntry) -> String {
        guard let label = fields?["ctaLabel"]?.stringValue, !label.isEmpty else { return "" }
        let url = fields?["ctaUrl"]?.stringValue ?? baseline.baseline["fields"]?["ctaUrl"]?.stringValue
        guard let url, RichTextRenderer.isSafeLink(url) else {
            return "<a class=\"button\">\(HTMLText.escape(label))</a>\n"
        }
        return "<a class=\"button\" href=\"\(HTMLText.escape(url))\">\(HTMLText.escape(label))</a>\n"
    }

    /// The entry's image, or its placeholder; empty when the entry has no `image` field.
    func image(_ fields: JSONValue?, alt fallbackAlt: String?, in baseline: ContentfulEntry) -> String {
        guard let field = fields?["image"], let assetId = field["sys"]?["id"]?.stringValue else { return "" }
        var asset = field
        if field["sys"]?["type"]?.stringValue == "Link" {
            asset = (baseline.document["includes"]?["Asset"]?.arrayValue ?? []).first { $0["sys"]?["id"]?.stringValue == assetId } ?? field
        }
        let assetFields = asset["fields"]
        let alt = assetFields?["description"]?.stringValue ?? assetFields?["title"]?.stringValue ?? fallbackAlt ?? ""
        if let url = Self.imageURL(assetFields) {
            return """
                <figure class="media"><img src="\(HTMLText.escape(url))" alt="\(HTMLText.escape(alt))" width="800" height="600"></figure>
                """
        }
        return """
            <div class="media placeholder" role="img" aria-label="\(HTMLText.escape(alt))" data-asset="\(HTMLText.escape(assetId))">\
            <span>Image: \(HTMLText.escape(alt))</span></div>
            """
    }

    /// The asset file's URL when it is an image on Contentful's image CDN (the only image
    /// origin the pages' Content-Security-Policy allows), made absolute (`https:`).
    static func imageURL(_ assetFields: JSONValue?) -> String? {
        guard let file = assetFields?["file"], var url = file["url"]?.stringValue,
              file["contentType"]?.stringValue?.hasPrefix("image/") ?? true
        else { return nil }
        if url.hasPrefix("//") { url = "https:" + url }
        guard url.hasPrefix(SecurityHeaders.imageOrigin + "/") else { return nil }
        return url
    }
}
