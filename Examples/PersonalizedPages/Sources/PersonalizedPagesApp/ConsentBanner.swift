/// The consent banner and, once the visitor chose, the consent status bar. Pure and thread-safe.
///
/// Both are one `<form method="post" action="/consent" data-consent="…">` (`not asked`,
/// `accepted`, `declined`) whose buttons post `consent=accept` or `consent=decline` to the
/// consent route. The text says what each choice does, as the service is configured:
/// accepting sends events about the visit (page views, the entries seen) to Contentful's
/// Experience and Insights APIs to personalize the pages and keeps the profile in a cookie;
/// declining sends nothing when nothing is allowed before consent (``strictConsent``), and
/// otherwise only an anonymous page-view count, with no profile kept and no views.
struct ConsentBanner {
    /// True when the service sends nothing before consent (an empty pre-consent allow-list).
    var strictConsent: Bool

    /// What declining (or not deciding) sends, in words.
    var declineText: String {
        strictConsent
            ? "Declining sends nothing: only your choice is stored."
            : "Declining sends no views and keeps no profile: only your choice is stored, and each page view is counted anonymously."
    }

    func html(consent: Bool?) -> String {
        switch consent {
        case nil:
            return """
                <form class="consent" method="post" action="/consent" data-consent="not asked" aria-labelledby="consent-title">
                <div class="inner"><div>
                <h2 id="consent-title">Personalize your visit?</h2>
                <p>Accepting sends events about this visit (the pages you view and the content shown to you) to \
                Contentful's Experience and Insights APIs to personalize this site for you, and keeps your profile in a cookie \
                for your next visit. \(declineText)</p>
                </div>
                <div class="actions"><button name="consent" value="accept">Accept</button>\
                <button name="consent" value="decline">Decline</button></div></div>
                </form>

                """
        case true?:
            return """
                <form class="consent-status" method="post" action="/consent" data-consent="accepted">
                <div class="inner"><p>Personalization is on: events about your visits are sent to Contentful's Experience and \
                Insights APIs.</p><button name="consent" value="decline">Turn off</button></div>
                </form>

                """
        case false?:
            return """
                <form class="consent-status" method="post" action="/consent" data-consent="declined">
                <div class="inner"><p>Personalization is off. \(declineText)</p>\
                <button name="consent" value="accept">Turn on</button></div>
                </form>

                """
        }
    }
}
