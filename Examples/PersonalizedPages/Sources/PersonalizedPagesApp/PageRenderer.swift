import Optimization

/// Turns the entries a request resolved into the HTML page. Pure and thread-safe.
///
/// The page: a site header, the consent banner (``ConsentBanner``), the entries in `<main>`
/// (``EntryRenderer``), the debug panel when asked for (``DebugPanel``) and a footer, styled by
/// the inline stylesheet ``PageStyle`` (allowed by the Content-Security-Policy's hash); no
/// script, no external resource.
///
/// Every entry is one `<section>` whose `data-baseline` is the baseline's id and `data-entry` the
/// id of the entry actually rendered (the baseline, a variant, or empty for an empty variant, which
/// renders no content), so tests and people can see which variant a visitor got.
public enum PageRenderer {
    /// One entry of the page as rendered.
    public struct Section: Sendable {
        /// The page's entry this section stands in for.
        public var baseline: ContentfulEntry
        /// The entry rendered (baseline or variant); nil for an empty variant.
        public var entry: JSONValue?
        /// Why this entry is rendered; nil where nothing was resolved (the plain page).
        public var explanation: EntryExplanation?

        /// `sys.id` of ``baseline``.
        public var baselineId: String { baseline.id }

        /// The section for a baseline rendered as is (no engine).
        public init(baseline: ContentfulEntry) {
            self.baseline = baseline
            entry = baseline.baseline
            explanation = nil
        }

        /// The section for what the engine resolved.
        /// - Parameter consentWithheldSelections: see
        ///   ``EntryExplanation/init(baseline:resolved:consentWithheldSelections:)``.
        public init(baseline: ContentfulEntry, resolved: ResolvedOptimizedEntry, consentWithheldSelections: Bool) {
            self.baseline = baseline
            entry = resolved.isEmptyVariant ? nil : resolved.entry
            explanation = EntryExplanation(baseline: baseline, resolved: resolved, consentWithheldSelections: consentWithheldSelections)
        }
    }

    /// What a page shows besides its sections.
    public struct Options: Sendable {
        /// The visitor's recorded consent (nil: not asked yet), for the consent banner.
        public var consent: Bool?
        /// The route in the page's `data-mode` (`personalized`, `handoff`, `events`, `first`, `plain`).
        public var mode: String
        /// Renders rich text with the visitor's merge-tag values.
        public var richText: RichTextRenderer
        /// True when the service sends nothing before consent (the banner says so).
        public var strictConsent: Bool
        /// The debug panel's summary of the request's Experience call; nil: no debug panel.
        public var debugExperienceCall: String?

        /// Options with the given parts; by default merge tags render their fallbacks and there is no debug panel.
        public init(consent: Bool?, mode: String, richText: RichTextRenderer = .fallbacksOnly, strictConsent: Bool = false, debugExperienceCall: String? = nil) {
            self.consent = consent
            self.mode = mode
            self.richText = richText
            self.strictConsent = strictConsent
            self.debugExperienceCall = debugExperienceCall
        }
    }

    /// The whole page.
    public static func page(sections: [Section], options: Options) -> String {
        // Links to an entry of this page point at its section, labelled with its heading.
        var linkable: [String: (label: String, href: String)] = [:]
        for section in sections {
            if let entry = section.entry, let heading = EntryRenderer.heading(of: entry) {
                linkable[section.baselineId] = (heading, "#" + EntryRenderer.anchor(of: section.baselineId))
            }
        }
        var richText = options.richText
        richText.entryLink = { [linkable] id in linkable[id] }
        let renderer = EntryRenderer(richText: richText)
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Trailhead Outfitters</title>
            <style>\(PageStyle.css)</style>
            </head>
            <body data-mode="\(HTMLText.escape(options.mode))">
            <header class="site-header"><div class="inner"><a class="brand" href="/">Trail<span>head</span> Outfitters</a>\
            <nav class="site-nav" aria-label="Sections"><span>New arrivals</span><span>Hiking</span><span>Camping</span>\
            <span>Journal</span></nav></div></header>

            """
        html += ConsentBanner(strictConsent: options.strictConsent).html(consent: options.consent)
        html += "<main>\n"
        for section in sections {
            if let entry = section.entry {
                html += renderer.html(entry, baseline: section.baseline)
            } else {
                html += "<section data-baseline=\"\(HTMLText.escape(section.baselineId))\" data-entry=\"\" hidden></section>\n"
            }
        }
        if let call = options.debugExperienceCall {
            html += DebugPanel.html(.init(
                mode: options.mode, consent: options.consent, experienceCall: call, entries: sections.compactMap(\.explanation)))
        }
        html += "</main>\n"
        html += "<footer class=\"site-footer\"><p>Trailhead Outfitters · an example of personalized Contentful content served with swift-optimization-linux.</p></footer>\n"
        html += "</body></html>\n"
        return html
    }
}
