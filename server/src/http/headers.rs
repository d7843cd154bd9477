//! Headers every answer carries, so a browser treats the server's pages as
//! strictly as it can: no framing, no type sniffing, no referrer sent to
//! other sites, and a Content-Security-Policy. An HTML page's policy allows
//! scripts only from this server and the page's own inline hydration script,
//! by the nonce the renderer gives it ([`page_policy`]); any other answer
//! (JSON, files) gets a policy that allows nothing at all.

use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// The policy of an HTML page whose inline scripts carry `nonce`. WebAssembly
/// needs `'wasm-unsafe-eval'` to compile; `style` attributes are allowed
/// (the schedule preview places its marks with them) but style sheets come
/// only from this server.
pub fn page_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; \
         connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    )
}

/// The policy of anything that is not a rendered page.
/// It names no `form-action`: a form post's redirect is such an answer, and a
/// browser without scripts that met `form-action 'none'` on it would not
/// follow it to the page it leads to.
const NOTHING_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/// The middleware: add the headers an answer lacks (a page's own policy stays).
pub async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    let defaults: [(HeaderName, &'static str); 4] = [
        (header::CONTENT_SECURITY_POLICY, NOTHING_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ];
    for (name, value) in defaults {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    }
    response
}
