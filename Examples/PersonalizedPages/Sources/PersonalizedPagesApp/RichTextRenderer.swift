import Optimization

/// Renders a Contentful Rich Text document (`nodeType: "document"`) as HTML. Pure and
/// thread-safe.
///
/// - Blocks: each `paragraph` is its own `<p>`; `heading-1`…`heading-6` become `<h3>`…`<h6>`
///   (the page owns `<h1>` and `<h2>`), lists `<ul>`/`<ol>` of `<li>`, `blockquote`, `hr`,
///   tables as `<table>` rows and cells.
/// - Text: escaped; the marks `bold`, `italic`, `underline`, `code`, `superscript` and
///   `subscript` wrap it in `<strong>`, `<em>`, `<u>`, `<code>`, `<sup>`, `<sub>`.
/// - `hyperlink`: `<a>` when its URI is `http(s)`, `mailto:` or a path starting with `/`;
///   any other scheme (`javascript:`, `data:`) renders the link's text only.
/// - `embedded-entry-inline`: a merge tag (content type `nt_mergetag`) renders as the value
///   ``mergeTagValue`` gives, which is the profile's value or the tag's `nt_fallback`, inside
///   `<span class="merge-tag">`; nothing when there is neither. Another inline entry (or a link
///   to one) that ``entryLink`` knows renders as a link with its label; others render nothing.
/// - `entry-hyperlink`: a link around its text when ``entryLink`` knows the target, else the
///   text alone.
/// - `embedded-entry-block`: an entry with a rich-text `body` renders as
///   `<aside class="callout">` holding that body; others render nothing.
///
/// Nesting deeper than ``maximumDepth`` and entries embedded in themselves (a cycle) are cut
/// off, so any document renders in bounded time.
public struct RichTextRenderer: Sendable {
    /// The value of a merge tag entry for the visitor, or nil when it has none (no fallback).
    public var mergeTagValue: @Sendable (JSONValue) -> String?
    /// Where a link to entry `id` points and its label (for example the entry's place on this
    /// page); nil when the entry is not linkable.
    public var entryLink: @Sendable (_ id: String) -> (label: String, href: String)?

    /// Node levels rendered at most; deeper content is dropped.
    public static let maximumDepth = 32

    /// - Parameters:
    ///   - mergeTagValue: the value of a merge tag entry (for example
    ///     `OptimizationRequest.getMergeTagValue`).
    ///   - entryLink: where links to entries point; by default no entry is linkable.
    public init(
        mergeTagValue: @escaping @Sendable (JSONValue) -> String?,
        entryLink: @escaping @Sendable (_ id: String) -> (label: String, href: String)? = { _ in nil }
    ) {
        self.mergeTagValue = mergeTagValue
        self.entryLink = entryLink
    }

    /// A renderer without a profile: every merge tag renders its `nt_fallback`.
    public static let fallbacksOnly = RichTextRenderer(mergeTagValue: mergeTagFallback)

    /// The `nt_fallback` of a merge tag entry; nil when it has none.
    @Sendable public static func mergeTagFallback(_ entry: JSONValue) -> String? {
        entry["fields"]?["nt_fallback"]?.stringValue
    }

    /// The HTML of `document`; empty when it is not a rich-text document.
    public func html(_ document: JSONValue) -> String {
        guard document["nodeType"]?.stringValue == "document" else { return "" }
        var out = ""
        var embedding: Set<String> = []
        renderChildren(of: document, into: &out, depth: 0, embedding: &embedding)
        return out
    }

    private func renderChildren(of node: JSONValue, into out: inout String, depth: Int, embedding: inout Set<String>) {
        for child in node["content"]?.arrayValue ?? [] {
            render(child, into: &out, depth: depth + 1, embedding: &embedding)
        }
    }

    private func wrap(_ tag: String, _ node: JSONValue, into out: inout String, depth: Int, embedding: inout Set<String>) {
        out += "<\(tag)>"
        renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
        out += "</\(tag)>"
    }

    private func render(_ node: JSONValue, into out: inout String, depth: Int, embedding: inout Set<String>) {
        guard depth <= Self.maximumDepth, let type = node["nodeType"]?.stringValue else { return }
        switch type {
        case "text":
            out += markedText(node)
        case "paragraph":
            // An empty paragraph (Contentful ends many documents with one) adds no blank block.
            var inner = ""
            renderChildren(of: node, into: &inner, depth: depth, embedding: &embedding)
            if !inner.isEmpty { out += "<p>\(inner)</p>\n" }
        case "heading-1", "heading-2", "heading-3", "heading-4", "heading-5", "heading-6":
            let level = max(3, Int(type.suffix(1)) ?? 3)
            wrap("h\(level)", node, into: &out, depth: depth, embedding: &embedding)
            out += "\n"
        case "unordered-list": wrap("ul", node, into: &out, depth: depth, embedding: &embedding)
        case "ordered-list": wrap("ol", node, into: &out, depth: depth, embedding: &embedding)
        case "list-item": wrap("li", node, into: &out, depth: depth, embedding: &embedding)
        case "blockquote": wrap("blockquote", node, into: &out, depth: depth, embedding: &embedding)
        case "table": wrap("table", node, into: &out, depth: depth, embedding: &embedding)
        case "table-row": wrap("tr", node, into: &out, depth: depth, embedding: &embedding)
        case "table-header-cell": wrap("th", node, into: &out, depth: depth, embedding: &embedding)
        case "table-cell": wrap("td", node, into: &out, depth: depth, embedding: &embedding)
        case "hr":
            out += "<hr>\n"
        case "hyperlink":
            let uri = node["data"]?["uri"]?.stringValue ?? ""
            if Self.isSafeLink(uri) {
                out += "<a href=\"\(HTMLText.escape(uri))\">"
                renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
                out += "</a>"
            } else {
                renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
            }
        case "embedded-entry-inline":
            if let target = Self.resolvedEntry(node), Self.contentType(target) == "nt_mergetag" {
                guard let value = mergeTagValue(target), !value.isEmpty else { return }
                out += "<span class=\"merge-tag\">\(HTMLText.escape(value))</span>"
            } else if let id = node["data"]?["target"]?["sys"]?["id"]?.stringValue, let link = entryLink(id) {
                out += "<a href=\"\(HTMLText.escape(link.href))\">\(HTMLText.escape(link.label))</a>"
            }
        case "entry-hyperlink":
            guard let id = node["data"]?["target"]?["sys"]?["id"]?.stringValue, let link = entryLink(id) else {
                renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
                return
            }
            out += "<a href=\"\(HTMLText.escape(link.href))\">"
            renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
            out += "</a>"
        case "embedded-entry-block":
            guard let target = Self.resolvedEntry(node), let body = target["fields"]?["body"],
                  body["nodeType"]?.stringValue == "document"
            else { return }
            let id = target["sys"]?["id"]?.stringValue ?? ""
            guard embedding.insert(id).inserted else { return }
            var inner = ""
            renderChildren(of: body, into: &inner, depth: depth, embedding: &embedding)
            embedding.remove(id)
            if !inner.isEmpty { out += "<aside class=\"callout\">\n\(inner)</aside>\n" }
        default:
            // Unknown node types keep their text.
            renderChildren(of: node, into: &out, depth: depth, embedding: &embedding)
        }
    }

    private func markedText(_ node: JSONValue) -> String {
        var html = HTMLText.escape(node["value"]?.stringValue ?? "")
        guard !html.isEmpty else { return "" }
        for mark in node["marks"]?.arrayValue ?? [] {
            let tag: String? = switch mark["type"]?.stringValue {
            case "bold": "strong"
            case "italic": "em"
            case "underline": "u"
            case "code": "code"
            case "superscript": "sup"
            case "subscript": "sub"
            default: nil
            }
            if let tag { html = "<\(tag)>\(html)</\(tag)>" }
        }
        return html
    }

    /// The embedded entry of an `embedded-entry-*` node when it is in the document (a link alone
    /// is not: its content type is unknown).
    private static func resolvedEntry(_ node: JSONValue) -> JSONValue? {
        guard let target = node["data"]?["target"], target["sys"]?["type"]?.stringValue == "Entry" else { return nil }
        return target
    }

    private static func contentType(_ entry: JSONValue) -> String? {
        entry["sys"]?["contentType"]?["sys"]?["id"]?.stringValue
    }

    /// Whether `uri` may be an `href`: `http:`, `https:`, `mailto:` or a path from the root.
    static func isSafeLink(_ uri: String) -> Bool {
        let lower = uri.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("mailto:")
            || (uri.hasPrefix("/") && !uri.hasPrefix("//"))
    }
}
