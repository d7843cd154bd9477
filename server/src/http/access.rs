//! Who may use the server. Without an admin token (the default, allowed
//! only on a loopback address) everything is open, as on a developer's
//! machine. With one, every API call and server function needs
//! `Authorization: Bearer TOKEN` or a session, and every page a session from
//! `/login`:
//!
//! - **Tokens** are compared as SHA-256 digests in constant time, so neither
//!   the time taken nor the length tells a guesser anything.
//! - **Sessions** are a cookie holding an expiry and an HMAC of it under a
//!   key derived from the token: any replica with the same token checks any
//!   session without a shared table, and changing the token ends them all.
//!   The cookie is `HttpOnly` and `SameSite=Strict`, and `Secure` when the
//!   request came over TLS (a proxy says so with `X-Forwarded-Proto: https`).
//! - **Failed attempts** (a wrong token at `/login` or in a bearer header)
//!   are counted per client address; past [`FAILURES_PER_WINDOW`] in
//!   [`FAILURE_WINDOW_MS`], the client is refused with 429 before its next
//!   guess is even compared.
//! - `/healthz`, the login page and the static files (styles, the bundle,
//!   which hold no data) stay open; `/metrics` too when the operator says so
//!   (`--open-metrics`, for a scraper without the token).

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use api::{ApiError, Timestamp};
use axum::Form;
use axum::extract::{ConnectInfo, FromRequest as _, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::clock::Clock;
use crate::error::AppError;

type HmacSha256 = hmac::Hmac<Sha256>;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "switchback_session";
/// How long a session lasts: a working day.
pub const SESSION_MS: i64 = 12 * 60 * 60 * 1000;
/// The shortest admin token the server accepts.
pub const MIN_TOKEN_CHARS: usize = 16;
/// Failed attempts a client may make per window before it is refused.
pub const FAILURES_PER_WINDOW: u32 = 10;
/// The window failed attempts are counted over.
pub const FAILURE_WINDOW_MS: i64 = 60_000;

/// Why an admin token cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    /// Shorter than [`MIN_TOKEN_CHARS`] once trimmed.
    #[error(
        "the admin token is {0} characters long; use at least {MIN_TOKEN_CHARS} (for example `openssl rand -hex 32`)"
    )]
    TooShort(usize),
}

/// The server's access rule: open, or guarded by an admin token.
#[derive(Clone)]
pub struct AccessControl {
    keys: Option<Arc<Keys>>,
    open_metrics: bool,
    failures: Arc<Mutex<Failures>>,
    clock: Arc<dyn Clock>,
}

struct Keys {
    token_digest: [u8; 32],
    session_key: [u8; 32],
}

/// Failed attempts by client address: the window's start and its count.
#[derive(Default)]
struct Failures {
    by_client: HashMap<IpAddr, (i64, u32)>,
}

impl std::fmt::Debug for AccessControl {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token or anything derived from it.
        formatter
            .debug_struct("AccessControl")
            .field("guarded", &self.is_guarded())
            .field("open_metrics", &self.open_metrics)
            .finish_non_exhaustive()
    }
}

impl AccessControl {
    /// Everything open (a server on loopback without a token).
    pub fn open(clock: Arc<dyn Clock>) -> Self {
        Self {
            keys: None,
            open_metrics: true,
            failures: Arc::default(),
            clock,
        }
    }

    /// Guarded by `token` (trimmed); `/metrics` readable without it when
    /// `open_metrics`.
    pub fn with_token(
        token: &str,
        open_metrics: bool,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, TokenError> {
        let token = token.trim();
        let length = token.chars().count();
        if length < MIN_TOKEN_CHARS {
            return Err(TokenError::TooShort(length));
        }
        let mut mac = HmacSha256::new_from_slice(token.as_bytes()).expect("HMAC takes any key");
        mac.update(b"switchback session key v1");
        Ok(Self {
            keys: Some(Arc::new(Keys {
                token_digest: Sha256::digest(token.as_bytes()).into(),
                session_key: mac.finalize().into_bytes().into(),
            })),
            open_metrics,
            failures: Arc::default(),
            clock,
        })
    }

    /// Whether a token guards the server.
    pub fn is_guarded(&self) -> bool {
        self.keys.is_some()
    }

    /// Whether `presented` is the admin token (constant time).
    fn is_token(&self, presented: &str) -> bool {
        self.keys.as_ref().is_some_and(|keys| {
            let digest: [u8; 32] = Sha256::digest(presented.trim().as_bytes()).into();
            bool::from(digest.ct_eq(&keys.token_digest))
        })
    }

    /// A session cookie's value, valid until `expires`.
    fn session_value(&self, expires: Timestamp) -> Option<String> {
        let keys = self.keys.as_ref()?;
        let expires_ms = expires.as_millis();
        let tag = session_tag(&keys.session_key, expires_ms)
            .finalize()
            .into_bytes();
        Some(format!("{expires_ms}.{}", URL_SAFE_NO_PAD.encode(tag)))
    }

    /// Whether `value` is a session this server signed that has not expired.
    fn is_session(&self, value: &str) -> bool {
        let Some(keys) = self.keys.as_ref() else {
            return false;
        };
        let Some((expires, tag)) = value.split_once('.') else {
            return false;
        };
        let (Ok(expires_ms), Ok(tag)) = (expires.parse::<i64>(), URL_SAFE_NO_PAD.decode(tag))
        else {
            return false;
        };
        // `verify_slice` compares in constant time.
        expires_ms > self.clock.now().as_millis()
            && session_tag(&keys.session_key, expires_ms)
                .verify_slice(&tag)
                .is_ok()
    }

    /// Whether the request carries the token or a live session.
    fn admits(&self, headers: &HeaderMap) -> Credential {
        if let Some(session) = cookie(headers, SESSION_COOKIE)
            && self.is_session(session)
        {
            return Credential::Valid;
        }
        match bearer(headers) {
            Some(token) if self.is_token(token) => Credential::Valid,
            Some(_) => Credential::Wrong,
            None => Credential::Missing,
        }
    }

    /// Seconds until `client` may try again, when it has failed too often.
    fn refused_for(&self, client: IpAddr) -> Option<u64> {
        let now = self.clock.now().as_millis();
        let failures = self
            .failures
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let (since, count) = *failures.by_client.get(&client)?;
        let ends = since.saturating_add(FAILURE_WINDOW_MS);
        (count >= FAILURES_PER_WINDOW && now < ends)
            .then(|| u64::try_from((ends - now + 999) / 1000).unwrap_or(1).max(1))
    }

    /// Count a failed attempt by `client`.
    fn failed(&self, client: IpAddr) {
        let now = self.clock.now().as_millis();
        let mut failures = self
            .failures
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // Forget finished windows now and then, so the map stays small.
        if failures.by_client.len() > 10_000 {
            failures
                .by_client
                .retain(|_, (since, _)| now < since.saturating_add(FAILURE_WINDOW_MS));
        }
        let entry = failures.by_client.entry(client).or_insert((now, 0));
        if now >= entry.0.saturating_add(FAILURE_WINDOW_MS) {
            *entry = (now, 0);
        }
        entry.1 = entry.1.saturating_add(1);
    }
}

fn session_tag(key: &[u8; 32], expires_ms: i64) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key");
    mac.update(b"session v1 ");
    mac.update(expires_ms.to_string().as_bytes());
    mac
}

enum Credential {
    Valid,
    Wrong,
    Missing,
}

/// `Authorization: Bearer TOKEN` -> `TOKEN`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token)
}

/// The value of cookie `name`, from any `Cookie` header.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(key, value)| (key == name).then_some(value))
}

/// The client's address (the socket's peer), or the unspecified address when
/// the request did not come over a socket (a router test).
pub fn client_address(request: &Request) -> IpAddr {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| info.0.ip())
}

/// Paths open to anyone: the health check, the login and logout, the static files.
fn is_open_path(path: &str) -> bool {
    matches!(path, "/healthz" | "/login" | "/logout" | "/favicon.svg") || path.starts_with("/pkg/")
}

/// The middleware: pass what the rule admits; refuse an API call or server
/// function with 401, and send a person to the login page.
pub async fn require_access(
    State(access): State<AccessControl>,
    request: Request,
    next: Next,
) -> Response {
    if !access.is_guarded() {
        return next.run(request).await;
    }
    let path = request.uri().path();
    if is_open_path(path) || (path == "/metrics" && access.open_metrics) {
        return next.run(request).await;
    }
    let client = client_address(&request);
    // A client that has guessed wrong too often is refused before its next
    // bearer token is even compared: a right guess must not get through.
    if bearer(request.headers()).is_some()
        && let Some(retry_after_s) = access.refused_for(client)
    {
        return AppError::from(ApiError::rate_limited("wrong tokens", retry_after_s))
            .into_response();
    }
    match access.admits(request.headers()) {
        Credential::Valid => return next.run(request).await,
        Credential::Wrong => access.failed(client),
        Credential::Missing => {}
    }
    let is_call = path == "/api" || path.starts_with("/api/") || path.starts_with("/fn/");
    if is_call || path == "/metrics" {
        return AppError::from(ApiError::unauthorized()).into_response();
    }
    let next_path = request
        .uri()
        .path_and_query()
        .map_or("/", |path| path.as_str());
    let query = serde_urlencoded::to_string([("next", next_path)]).unwrap_or_default();
    Redirect::to(&format!("/login?{query}")).into_response()
}

/// `/login?next=PATH`.
#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

/// The login form's fields (a missing token reads as an empty one).
#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    token: String,
    next: Option<String>,
}

/// `GET /login`: the sign-in page (or, on an open server, the page asked for).
pub async fn login_page(
    State(access): State<AccessControl>,
    Query(query): Query<LoginQuery>,
) -> Response {
    let next = local_path(query.next.as_deref());
    if !access.is_guarded() {
        return Redirect::to(next).into_response();
    }
    login_html(StatusCode::OK, next, None)
}

/// `POST /login`: a session cookie and the page asked for, or the form again
/// with why not.
pub async fn login(
    State(access): State<AccessControl>,
    request: Request,
) -> Result<Response, AppError> {
    let client = client_address(&request);
    let secure = came_over_tls(request.headers());
    let Form(form) = Form::<LoginForm>::from_request(request, &()).await?;
    let next = local_path(form.next.as_deref());
    if !access.is_guarded() {
        return Ok(Redirect::to(next).into_response());
    }
    if let Some(retry_after_s) = access.refused_for(client) {
        let message =
            format!("Too many wrong tokens from this address. Try again in {retry_after_s} s.");
        let mut response = login_html(StatusCode::TOO_MANY_REQUESTS, next, Some(&message));
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_s));
        return Ok(response);
    }
    if form.token.trim().is_empty() {
        return Ok(login_html(
            StatusCode::UNPROCESSABLE_ENTITY,
            next,
            Some("Enter the admin token."),
        ));
    }
    if !access.is_token(&form.token) {
        access.failed(client);
        return Ok(login_html(
            StatusCode::UNAUTHORIZED,
            next,
            Some("That is not this server's admin token."),
        ));
    }
    let expires = access.clock.now().plus_millis(SESSION_MS);
    let value = access
        .session_value(expires)
        .expect("a guarded server signs sessions");
    let cookie = format!(
        "{SESSION_COOKIE}={value}; Path=/; Max-Age={}; HttpOnly; SameSite=Strict{}",
        SESSION_MS / 1000,
        if secure { "; Secure" } else { "" }
    );
    let mut response = Redirect::to(next).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("a cookie of visible ASCII"),
    );
    Ok(response)
}

/// `POST /logout`: the session cookie cleared, then the login page.
pub async fn logout(request: Request) -> Response {
    let secure = came_over_tls(request.headers());
    let cookie = format!(
        "{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    );
    let mut response = Redirect::to("/login").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).expect("a cookie of visible ASCII"),
    );
    response
}

/// Whether the request reached us over TLS: a proxy in front says so.
fn came_over_tls(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
}

/// `next` when it is a path on this server, else `/`: the login page never
/// sends anyone to another site (`//evil.example` is another site).
fn local_path(next: Option<&str>) -> &str {
    match next {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.starts_with("/\\")
                && !path.chars().any(char::is_control) =>
        {
            path
        }
        _ => "/",
    }
}

/// The sign-in page: plain HTML with the app's styles, no script, so it
/// works before any bundle loads and holds nothing a visitor may not see.
fn login_html(status: StatusCode, next: &str, problem: Option<&str>) -> Response {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let notice = problem.map_or_else(String::new, |problem| {
        format!(
            r#"<p class="notice error" role="alert" id="token-error">{}</p>"#,
            escape(problem)
        )
    });
    let described_by = if problem.is_some() {
        r#" aria-invalid="true" aria-describedby="token-error""#
    } else {
        ""
    };
    let css = format!("/{}/{}.css", crate::site::pkg_dir(), app::OUTPUT_NAME);
    let body = format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="{css}">
<title>Sign in · Switchback</title>
</head>
<body>
<header class="top-bar"><span class="brand">Switchback</span></header>
<main id="main" class="page">
<div class="page-heading"><h1>Sign in</h1></div>
<form class="provider-form" method="post" action="/login">
{notice}
<input type="hidden" name="next" value="{next}">
<div class="field">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus{described_by}>
<p class="hint">The token this server was started with (SWITCHBACK_ADMIN_TOKEN).</p>
</div>
<button class="button primary" type="submit">Sign in</button>
</form>
</main>
</body>
</html>
"#,
        next = escape(next),
    );
    let mut response = (status, Html(body)).into_response();
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn guarded() -> (AccessControl, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::at_millis(1_000_000));
        let access =
            AccessControl::with_token("  correct-horse-battery-staple  ", false, clock.clone())
                .unwrap();
        (access, clock)
    }

    #[test]
    fn a_short_token_is_refused_with_its_length() {
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::at_millis(0));
        for (token, outcome) in [
            ("", Err(TokenError::TooShort(0))),
            ("   short   ", Err(TokenError::TooShort(5))),
            ("fifteen-chars-x", Err(TokenError::TooShort(15))),
            ("sixteen-chars-xx", Ok(())),
        ] {
            assert_eq!(
                AccessControl::with_token(token, false, clock.clone()).map(|_| ()),
                outcome,
                "{token:?}"
            );
        }
    }

    #[test]
    fn the_token_is_matched_whole_and_trimmed() {
        let (access, _) = guarded();
        for (presented, matches) in [
            ("correct-horse-battery-staple", true),
            (" correct-horse-battery-staple ", true),
            ("correct-horse-battery-stapl", false),
            ("correct-horse-battery-staple-", false),
            ("CORRECT-HORSE-BATTERY-STAPLE", false),
            ("", false),
        ] {
            assert_eq!(access.is_token(presented), matches, "{presented:?}");
        }
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::at_millis(0));
        assert!(!AccessControl::open(clock).is_token("anything-at-all-really"));
    }

    #[test]
    fn a_session_lasts_until_it_expires_and_cannot_be_forged() {
        let (access, clock) = guarded();
        let expires = clock.now().plus_millis(SESSION_MS);
        let value = access.session_value(expires).unwrap();
        assert!(access.is_session(&value));
        // Another token's session, a changed expiry, a cut tag: refused.
        let other = AccessControl::with_token("another-token-entirely", false, clock.clone())
            .unwrap()
            .session_value(expires)
            .unwrap();
        let (_, tag) = value.split_once('.').unwrap();
        let later = format!("{}.{tag}", expires.as_millis() + SESSION_MS);
        for forged in [
            other.as_str(),
            later.as_str(),
            &value[..value.len() - 2],
            "",
            ".",
            "1.2",
        ] {
            assert!(!access.is_session(forged), "{forged:?}");
        }
        clock.set(expires.plus_millis(-1));
        assert!(access.is_session(&value));
        clock.set(expires);
        assert!(!access.is_session(&value), "expired");
    }

    #[test]
    fn failures_are_refused_past_the_limit_until_the_window_ends() {
        let (access, clock) = guarded();
        let client = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));
        let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 10));
        for _ in 0..FAILURES_PER_WINDOW - 1 {
            access.failed(client);
        }
        assert_eq!(access.refused_for(client), None);
        access.failed(client);
        assert_eq!(access.refused_for(client), Some(60));
        assert_eq!(access.refused_for(other), None, "per client");
        clock.set(clock.now().plus_millis(FAILURE_WINDOW_MS - 1_500));
        assert_eq!(access.refused_for(client), Some(2));
        clock.set(clock.now().plus_millis(1_500));
        assert_eq!(access.refused_for(client), None, "the window ended");
        access.failed(client);
        assert_eq!(access.refused_for(client), None, "a new window");
    }

    #[test]
    fn headers_are_read_as_browsers_and_clients_send_them() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer abc def".parse().unwrap());
        headers.append(
            header::COOKIE,
            "a=1; switchback_session=xyz".parse().unwrap(),
        );
        headers.append(header::COOKIE, "b=2".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc def"));
        assert_eq!(cookie(&headers, SESSION_COOKIE), Some("xyz"));
        assert_eq!(cookie(&headers, "b"), Some("2"));
        assert_eq!(cookie(&headers, "switchback"), None);
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn login_sends_people_only_to_this_server() {
        for (next, to) in [
            (Some("/tasks?state=held"), "/tasks?state=held"),
            (Some("//evil.example/"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("https://evil.example"), "/"),
            (Some("/tasks\n"), "/"),
            (None, "/"),
        ] {
            assert_eq!(local_path(next), to, "{next:?}");
        }
    }
}
