//! The refusals every request passes before anything else sees it: a body
//! declared larger than the server reads (413, the same answer on every
//! route), and two against hostile pages:
//!
//! - **DNS rebinding**: a page on an attacker's domain can make its name
//!   resolve to this server and then read and write it as its own origin.
//!   Its requests still carry the attacker's name in `Host`, so a request is
//!   served only when `Host` names an IP address (no rebinding attack can
//!   produce one), `localhost`, or a public name the operator configured.
//! - **Cross-site writes**: a form on another site can post to this one
//!   (a forged provider would receive the user's key). A write (any method
//!   but GET, HEAD and OPTIONS) is refused when the browser says it comes
//!   from another site (`Sec-Fetch-Site`), or, from browsers that do not
//!   send that, when its `Origin` is not this server's. Requests without
//!   either header come from programs, not browsers, and pass.

use std::net::IpAddr;
use std::sync::Arc;

use api::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::api::MAX_BODY_BYTES;
use crate::error::AppError;

/// The host names this server answers to besides IP addresses and `localhost`.
#[derive(Debug, Clone, Default)]
pub struct HostGuard {
    public_names: Arc<[String]>,
}

impl HostGuard {
    /// A guard that also accepts these names (`--public-name`), compared
    /// without case.
    pub fn new(public_names: &[String]) -> Self {
        Self {
            public_names: public_names
                .iter()
                .map(|name| name.trim().trim_end_matches('.').to_ascii_lowercase())
                .collect(),
        }
    }

    /// Why a request is refused, if it is. `authority` is the request
    /// target's (HTTP/2 sends the host there rather than in `Host`).
    pub fn refusal(
        &self,
        method: &Method,
        authority: Option<&str>,
        headers: &HeaderMap,
    ) -> Option<ApiError> {
        let host = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .or(authority)
            .unwrap_or("");
        if !self.accepts_host(host) {
            return Some(ApiError::foreign_host(host));
        }
        let reads_only = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if !reads_only && self.is_cross_site(headers, host) {
            return Some(ApiError::cross_site());
        }
        None
    }

    /// Whether `host` (`name[:port]`) is an IP address, `localhost` or a public name.
    fn accepts_host(&self, host: &str) -> bool {
        let name = host_name(host).trim_end_matches('.').to_ascii_lowercase();
        if name.is_empty() {
            return false;
        }
        name.parse::<IpAddr>().is_ok() || name == "localhost" || self.public_names.contains(&name)
    }

    /// Whether `name` is one of the public names (`--public-name`).
    fn is_public_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        self.public_names.contains(&name)
    }

    /// Whether a browser says this request comes from another site. Without
    /// `Sec-Fetch-Site` (browsers send it only to HTTPS and loopback
    /// origins), the `Origin` must be this server: the `Host` the request
    /// names, or a public name (a proxy may rewrite `Host` to the address it
    /// forwards to).
    fn is_cross_site(&self, headers: &HeaderMap, host: &str) -> bool {
        let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
        if let Some(site) = header("sec-fetch-site") {
            // `none`: typed into the address bar or a bookmark; `same-origin`: this server's pages.
            return !matches!(site, "same-origin" | "none");
        }
        match header("origin") {
            None => false,
            Some(origin) => {
                let authority = origin
                    .strip_prefix("http://")
                    .or_else(|| origin.strip_prefix("https://"));
                !authority.is_some_and(|authority| {
                    authority.eq_ignore_ascii_case(host)
                        || self.is_public_name(host_name(authority))
                })
            }
        }
    }
}

/// `example.com:8080` -> `example.com`; `[::1]:3000` -> `::1`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    host.rsplit_once(':')
        .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(name, _)| name)
}

/// The middleware: refuse before routing. A body is read here, up to the
/// limit, so every route (the JSON API, a form post, a server function)
/// answers an oversized one the same way.
pub async fn guard(State(guard): State<HostGuard>, request: Request, next: Next) -> Response {
    let authority = request
        .uri()
        .authority()
        .map(|authority| authority.as_str());
    if let Some(refusal) = guard.refusal(request.method(), authority, request.headers()) {
        return AppError::from(refusal).into_response();
    }
    match within_limit(request).await {
        Ok(request) => with_error_status(next.run(request).await).await,
        Err(refusal) => AppError::from(refusal).into_response(),
    }
}

/// A server function's refusal, answered with [`ApiError::status`] like the
/// JSON API's (server functions otherwise answer every error with 500). Its
/// body is the `ApiError` itself; any other answer passes unchanged.
async fn with_error_status(response: Response) -> Response {
    if !response.headers().contains_key(SERVER_FN_ERROR_HEADER) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await else {
        return AppError::from(ApiError::internal()).into_response();
    };
    let bytes = collected.to_bytes();
    if let Ok(error) = serde_json::from_slice::<ApiError>(&bytes) {
        parts.status = crate::error::status_of(&error);
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// The header that marks a server function's error answer.
const SERVER_FN_ERROR_HEADER: &str = "serverfnerror";

/// The request with its body read, or a 413 when the body (declared or
/// sent) is larger than [`MAX_BODY_BYTES`].
async fn within_limit(request: Request) -> Result<Request, ApiError> {
    let too_large = || ApiError::payload_too_large(MAX_BODY_BYTES);
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    let (parts, body) = request.into_parts();
    let bytes = match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return Err(too_large()),
        Err(_) => {
            return Err(ApiError::malformed_json(
                "the body could not be read to its end",
            ));
        }
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn hosts() {
        let guard = HostGuard::new(&["Switchback.Example.com".to_owned()]);
        for (host, accepted) in [
            ("127.0.0.1:3000", true),
            ("localhost:3000", true),
            ("LOCALHOST", true),
            ("[::1]:3000", true),
            ("10.0.0.7", true),
            ("switchback.example.com", true),
            ("switchback.example.com.:443", true),
            ("evil.example", false),
            ("localhost.evil.example:3000", false),
            ("127.0.0.1.nip.io", false),
            ("", false),
        ] {
            assert_eq!(guard.accepts_host(host), accepted, "{host}");
        }
    }

    /// Header pairs, the method, and whether the request is refused.
    type Row<'a> = (&'a [(&'static str, &'static str)], Method, bool);

    #[test]
    fn writes_from_other_sites_are_refused() {
        let guard = HostGuard::new(&["switchback.example.com".to_owned()]);
        let host = ("host", "127.0.0.1:3000");
        let table: [Row<'_>; 11] = [
            (
                &[host, ("sec-fetch-site", "cross-site")],
                Method::POST,
                true,
            ),
            (&[host, ("sec-fetch-site", "same-site")], Method::PUT, true),
            (
                &[host, ("sec-fetch-site", "same-origin")],
                Method::POST,
                false,
            ),
            (
                &[host, ("sec-fetch-site", "cross-site")],
                Method::GET,
                false,
            ),
            (
                &[host, ("origin", "http://evil.example")],
                Method::POST,
                true,
            ),
            (&[host, ("origin", "null")], Method::DELETE, true),
            (
                &[host, ("origin", "http://127.0.0.1:3000")],
                Method::POST,
                false,
            ),
            // Behind a proxy that rewrites Host, a public name is this server.
            (
                &[host, ("origin", "https://Switchback.example.com")],
                Method::POST,
                false,
            ),
            (
                &[host, ("origin", "http://10.0.0.9:3000")],
                Method::POST,
                true,
            ),
            (&[host], Method::POST, false),
            (&[("host", "evil.example")], Method::GET, true),
        ];
        for (pairs, method, refused) in table {
            assert_eq!(
                guard.refusal(&method, None, &headers(pairs)).is_some(),
                refused,
                "{method} {pairs:?}"
            );
        }
    }
}
