import Crypto
import Foundation

/// The pages' one stylesheet, inlined in a `<style>` element, and the Content-Security-Policy
/// source that allows exactly it.
///
/// The pages load nothing: no external stylesheet, font or script. The policy names the
/// stylesheet by its SHA-256 hash (``cspSource``), so a `<style>` element or `style` attribute
/// injected into a page would not apply. Changing ``css`` changes the hash; both are computed
/// from the same text, once.
enum PageStyle {
    /// The stylesheet, exactly as it appears between `<style>` and `</style>`.
    static let css = """
        :root{--ink:#1d2a24;--muted:#5b6b63;--paper:#f6f3ec;--card:#fffdf8;--brand:#1f5f45;--brand-dark:#123a2a;\
        --accent:#e0813a;--line:#e2ddd2;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
        *{box-sizing:border-box}
        body{margin:0;background:var(--paper);color:var(--ink);line-height:1.55;font-size:17px}
        a{color:var(--brand)}
        .site-header{background:var(--card);border-bottom:1px solid var(--line)}
        .site-header .inner,.consent .inner,.consent-status .inner,main,.site-footer{max-width:1120px;margin:0 auto;padding:0 32px}
        .site-header .inner{display:flex;align-items:center;justify-content:space-between;height:68px}
        .brand{font-weight:800;font-size:22px;letter-spacing:-.02em;color:var(--brand-dark);text-decoration:none}
        .brand span{color:var(--accent)}
        .site-nav{display:flex;gap:28px;font-size:15px;color:var(--muted)}
        .consent{background:var(--brand-dark);color:#f4f1ea}
        .consent .inner{display:flex;gap:32px;align-items:center;justify-content:space-between;padding-top:20px;padding-bottom:20px}
        .consent h2{margin:0 0 4px;font-size:18px}
        .consent p{margin:0;font-size:15px;color:#d6e2da;max-width:720px}
        .consent .actions{display:flex;gap:12px;flex-shrink:0}
        .consent button{font:inherit;font-weight:700;font-size:15px;border-radius:999px;padding:10px 22px;cursor:pointer;border:2px solid #f4f1ea}
        .consent button[value=accept]{background:#f4f1ea;color:var(--brand-dark)}
        .consent button[value=decline]{background:transparent;color:#f4f1ea}
        .consent-status{background:#e8efe9;color:var(--brand-dark);font-size:14px}
        .consent-status .inner{display:flex;gap:16px;align-items:center;justify-content:space-between;padding-top:8px;padding-bottom:8px}
        .consent-status p{margin:0}
        .consent-status button{font:inherit;background:none;border:0;color:var(--brand);text-decoration:underline;cursor:pointer;padding:0}
        main{padding-top:40px;padding-bottom:48px;display:grid;gap:36px}
        .hero{display:grid;grid-template-columns:1.05fr 1fr;gap:48px;align-items:center;background:var(--card);border:1px solid var(--line);border-radius:20px;padding:48px}
        .eyebrow{text-transform:uppercase;letter-spacing:.12em;font-size:13px;font-weight:700;color:var(--accent);margin:0 0 12px}
        .hero h1{font-size:52px;line-height:1.05;letter-spacing:-.03em;margin:0 0 20px}
        .hero .copy p{margin:0 0 12px;font-size:19px;color:#34443c}
        .button{display:inline-block;margin-top:16px;background:var(--brand);color:#fff;text-decoration:none;font-weight:700;padding:14px 28px;border-radius:999px}
        .media{margin:0;aspect-ratio:4/3;width:100%;border-radius:14px;overflow:hidden;background:linear-gradient(135deg,#cfe0d2,#9cbfa6 55%,#6f9b7d)}
        .media img{display:block;width:100%;height:100%;object-fit:cover}
        .media.placeholder{display:flex;align-items:flex-end;padding:18px}
        .media.placeholder span{background:rgba(255,253,248,.85);color:var(--muted);font-size:13px;padding:6px 10px;border-radius:8px}
        .promo{background:var(--accent);color:#fff;border-radius:14px;padding:18px 28px;display:flex;align-items:center;gap:16px;font-weight:600;font-size:18px}
        .promo p{margin:0}
        .promo .tag{background:rgba(255,255,255,.22);border-radius:999px;padding:4px 12px;font-size:13px;text-transform:uppercase;letter-spacing:.08em}
        .article{background:var(--card);border:1px solid var(--line);border-radius:20px;padding:40px 48px}
        .article h2{margin:0 0 16px;font-size:30px;letter-spacing:-.02em}
        .article p{margin:0 0 14px;max-width:70ch}
        .callout{border-left:4px solid var(--brand);background:#eef4ef;padding:12px 18px;margin:0 0 14px;border-radius:0 10px 10px 0;max-width:70ch}
        .callout p{margin:0}
        .entry h2{margin:0 0 12px}
        .debug{background:#14181f;color:#e6e9ef;border-radius:16px;padding:28px 32px;font-size:14px}
        .debug h2{margin:0 0 6px;font-size:18px;color:#fff}
        .debug .summary{margin:0 0 16px;color:#aab3c2}
        .debug table{width:100%;border-collapse:collapse}
        .debug th{text-align:left;color:#aab3c2;font-weight:600;border-bottom:1px solid #2c3340;padding:8px 10px}
        .debug td{border-bottom:1px solid #2c3340;padding:10px;vertical-align:top}
        .debug code{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px;color:#9fd3b5}
        .reason{display:inline-block;border-radius:999px;padding:2px 10px;font-weight:700;font-size:12px;text-transform:uppercase;letter-spacing:.05em}
        .reason-selected{background:#2da44e;color:#fff}
        .reason-baseline{background:#3b6fd8;color:#fff}
        .reason-no-selection{background:#5b6472;color:#fff}
        .reason-consent{background:#d4a72c;color:#1d1d1d}
        .site-footer{color:var(--muted);font-size:14px;padding-bottom:40px}
        """

    /// `'sha256-…'`: the Content-Security-Policy source expression of ``css``.
    static let cspSource = "'sha256-\(Data(SHA256.hash(data: Data(css.utf8))).base64EncodedString())'"
}
