/// The opt-in debug panel (`?debug=1` on the personalized routes): for each entry of the page,
/// its experience, the variant shown and why (``EntryExplanation``), plus what the request's
/// Experience call did and the visitor's consent. Pure and thread-safe.
///
/// Each row is a `<tr data-debug-entry="<baseline id>" data-reason="<reason>">`; the panel is
/// `<section class="debug" id="optimization-debug">`. It shows no profile data.
enum DebugPanel {
    /// What the panel shows for one page.
    struct Report: Sendable, Equatable {
        /// The route's mode (`personalized`, `handoff`, `events`, `first`).
        var mode: String
        /// The visitor's recorded consent (nil: not asked).
        var consent: Bool?
        /// What the request's Experience call did, in words (for example `delivered`,
        /// `blocked (consent)`, or that there was none).
        var experienceCall: String
        var entries: [EntryExplanation]
    }

    static func html(_ report: Report) -> String {
        let consent = switch report.consent {
        case true?: "accepted"
        case false?: "declined"
        case nil: "not asked"
        }
        var html = """
            <section class="debug" id="optimization-debug" aria-labelledby="debug-title">
            <h2 id="debug-title">Personalization debug</h2>
            <p class="summary">Route: <code>\(HTMLText.escape(report.mode))</code> · Consent: \(consent) · \
            Experience call: \(HTMLText.escape(report.experienceCall))</p>
            <table>
            <thead><tr><th>Entry</th><th>Experience</th><th>Variant shown</th><th>Reason</th></tr></thead>
            <tbody>

            """
        for entry in report.entries {
            html += row(entry)
        }
        html += "</tbody>\n</table>\n</section>\n"
        return html
    }

    static func row(_ entry: EntryExplanation) -> String {
        let experiences = entry.experiences.isEmpty
            ? "none"
            : entry.experiences.map { experience in
                (experience.name.map { HTMLText.escape($0) + "<br>" } ?? "") + "<code>\(HTMLText.escape(experience.id))</code>"
            }.joined(separator: "<br>")
        return """
            <tr data-debug-entry="\(HTMLText.escape(entry.baselineId))" data-reason="\(entry.reason.rawValue)">\
            <td><code>\(HTMLText.escape(entry.baselineId))</code></td>\
            <td>\(experiences)</td>\
            <td>\(variant(entry))</td>\
            <td><span class="reason reason-\(entry.reason.rawValue.replacingOccurrences(of: " ", with: "-"))">\(entry.reason.rawValue)</span><br>\(sentence(entry))</td></tr>

            """
    }

    /// "Baseline", "Variant N" or "Variant N (empty)", with the rendered entry's id.
    static func variant(_ entry: EntryExplanation) -> String {
        guard let rendered = entry.renderedEntryId else {
            return "Variant \(entry.variantIndex ?? 0) (empty: nothing rendered)"
        }
        let name = entry.reason == .selected ? "Variant \(entry.variantIndex ?? 0)" : "Baseline"
        return "\(name)<br><code>\(HTMLText.escape(rendered))</code>"
    }

    static func sentence(_ entry: EntryExplanation) -> String {
        switch entry.reason {
        case .selected:
            return "The visitor's profile selected this variant."
        case .baseline:
            if let index = entry.variantIndex, index > 0 {
                return "The profile selected variant \(index), which this entry does not have: the baseline is shown."
            }
            return "The visitor's profile selected the baseline."
        case .noSelection:
            return "The profile has no selection for this entry's experiences."
        case .consent:
            return "Not personalized: consent is missing or declined, so the request has no selections."
        }
    }
}
