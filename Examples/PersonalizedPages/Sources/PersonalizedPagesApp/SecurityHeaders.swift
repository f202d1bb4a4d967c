import HTTPTypes

/// The security headers every HTML page of the service carries (set by `html(_:)`).
///
/// - `Content-Security-Policy`: nothing is executed and almost nothing loaded
///   (`default-src 'none'`: no scripts; `/first`'s `<script type="application/json">` is data,
///   never run). The one exception for styles is the page's own inline stylesheet, named by its
///   SHA-256 hash (``PageStyle/cspSource``): any other `<style>` element or `style` attribute is
///   not applied. Images load only from Contentful's image CDN (`images.ctfassets.net`, where
///   entries' assets live). The consent form posts only to this origin, no framing, no `<base>`.
/// - `X-Content-Type-Options: nosniff`: browsers keep the declared `text/html`.
/// - `Referrer-Policy: strict-origin-when-cross-origin`: other sites see the origin only.
/// - `X-Frame-Options: DENY`: no framing, for browsers without `frame-ancestors`.
enum SecurityHeaders {
    static let contentSecurityPolicy =
        "default-src 'none'; style-src \(PageStyle.cspSource); img-src \(imageOrigin); form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// Where entries' images are served from: Contentful's image CDN.
    static let imageOrigin = "https://images.ctfassets.net"

    /// The four headers, as they are added to a response.
    static let fields: HTTPFields = [
        .contentSecurityPolicy: contentSecurityPolicy,
        .xContentTypeOptions: "nosniff",
        .referrerPolicy: "strict-origin-when-cross-origin",
        .xFrameOptions: "DENY",
    ]
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let xFrameOptions = Self("X-Frame-Options")!
}
