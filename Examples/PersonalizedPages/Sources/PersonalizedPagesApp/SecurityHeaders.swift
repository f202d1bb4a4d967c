import HTTPTypes

/// The security headers every HTML page of the service carries (set by `html(_:)`).
///
/// - `Content-Security-Policy`: nothing is loaded or executed (`default-src 'none'`: the pages
///   have no scripts, styles or images; `/first`'s `<script type="application/json">` is data,
///   never run), the consent form posts only to this origin, no framing, no `<base>`.
/// - `X-Content-Type-Options: nosniff`: browsers keep the declared `text/html`.
/// - `Referrer-Policy: strict-origin-when-cross-origin`: other sites see the origin only.
/// - `X-Frame-Options: DENY`: no framing, for browsers without `frame-ancestors`.
enum SecurityHeaders {
    static let contentSecurityPolicy = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

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
