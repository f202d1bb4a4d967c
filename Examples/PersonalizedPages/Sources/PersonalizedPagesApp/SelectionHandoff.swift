import Foundation
import Optimization

/// The visitor's selected optimizations carried from one page to the next in a cookie, so a page
/// can render personalized variants without an Experience call (`GET /handoff`), and a
/// personalized page renders with them while its own `page()` call is slow or failing
/// (`RequestOptions.selectedOptimizations`).
///
/// Format: `v1.` followed by the base64url (no padding) of the selections' compact JSON array.
/// Only cookie-safe characters; a value that would exceed ``maximumCookieLength`` is not written.
/// Decoding never throws: anything malformed (a stale format, a tampered value) is nil, and the
/// page renders baselines.
public enum SelectionHandoff {
    /// Name of the cookie.
    public static let cookieName = "pp_selections"
    /// Browsers keep cookies up to about 4 KB, name and attributes included.
    public static let maximumCookieLength = 3800
    private static let prefix = "v1."

    /// The cookie value for `selections`, or nil when it would be too long.
    public static func encode(_ selections: SelectedOptimizations) -> String? {
        guard let text = try? JSONValue.array(selections.selections).jsonText() else { return nil }
        let value = prefix + base64URL(Data(text.utf8))
        return value.utf8.count <= maximumCookieLength ? value : nil
    }

    /// The selections in a cookie value written by ``encode(_:)``, or nil for anything else.
    ///
    /// Decoded values are kept in a small process-wide cache (``decodedCache``): visitors share a
    /// handful of selection sets, and handing the engines the SAME ``SelectedOptimizations``
    /// instance spares both the Swift parse and the transfer into each engine on every request.
    public static func decode(_ value: String) -> SelectedOptimizations? {
        if let cached = decodedCache.value(for: value) { return cached }
        guard value.hasPrefix(prefix), value.utf8.count <= maximumCookieLength,
              let data = dataFromBase64URL(value.dropFirst(prefix.count)),
              let selections = try? SelectedOptimizations(jsonData: data)
        else { return nil }
        decodedCache.insert(selections, for: value)
        return selections
    }

    /// Cookie values already decoded, at most 1,024 (the oldest goes first).
    static let decodedCache = BoundedCache<String, SelectedOptimizations>(capacity: 1_024)

    private static func base64URL(_ data: Data) -> String {
        var text = data.base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    private static func dataFromBase64URL(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = base64.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
