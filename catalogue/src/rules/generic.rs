//! Rules for every family: bare well-known statuses (SPEC 2.4), transport failures, and
//! causes that read the same whoever prints them: certificate failures (Node, Python,
//! Go, rustls, curl), rate limits named in words, day-long waits, credits.

use policy::SemanticCode::*;

use super::{Predicate, Rule, rule};

/// Bare statuses (rank 1: any error type, code or message outranks them) and transport
/// failures (rank 2). A certificate failure is not a network blip: `tls` is a
/// misconfiguration.
/// Words every certificate failure's wording holds, lowercase.
const CERTIFICATE: &[&str] = &["cert", "unknownissuer", "notvalidforname", "leaf_signature"];

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    rule("http.408", Timeout).status(408),
    rule("http.429", RateLimited).status(429),
    rule("http.500", ServerError).status(500),
    rule("http.502", ServerError).status(502),
    rule("http.503", Overloaded).status(503),
    rule("http.504", Timeout).status(504),
    rule("http.529", Overloaded).status(529),
    rule("http.401", AuthFailed).status(401),
    rule("http.403", AuthFailed).status(403),
    rule("http.402", InsufficientCredits).status(402),
    rule("transport.connection_refused", Network).transport("connection_refused"),
    rule("transport.connection_reset", Network).transport("connection_reset"),
    rule("transport.closed_early", Network).transport("closed_early"),
    rule("transport.dns", Network).transport("dns"),
    rule("transport.timeout", Timeout).transport("timeout"),
    rule("transport.tls", ProviderMisconfigured).transport("tls"),

    // A certificate failure, however the transport or a CLI's "Connection error" prints
    // it: a retry cannot fix a certificate. They outrank what the failure was doing
    // ("pull model manifest", "error sending request"). Only when no status came back:
    // a certificate error inside a provider's 503 is the provider's outage. The
    // searcher looks for the few words every wording holds; the wordings are checked
    // only where one of those is.
    rule("tls.self_signed", ProviderMisconfigured)
        .when(Predicate::NoResponse)
        .says(CERTIFICATE, &[
            "self signed certificate", "self-signed certificate", "self_signed_cert_in_chain", "depth_zero_self_signed_cert",
        ])
        .outranks(),
    rule("tls.unknown_issuer", ProviderMisconfigured)
        .when(Predicate::NoResponse)
        .says(CERTIFICATE, &[
            "unable to get local issuer certificate", "unable to get issuer certificate", "unable_to_get_issuer_cert",
            "unable to verify the first certificate", "unable_to_verify_leaf_signature",
            "certificate signed by unknown authority", "unknownissuer",
        ])
        .outranks(),
    rule("tls.expired", ProviderMisconfigured)
        .when(Predicate::NoResponse)
        .says(CERTIFICATE, &["certificate has expired", "cert_has_expired", "certificate is not yet valid"])
        .outranks(),
    rule("tls.hostname_mismatch", ProviderMisconfigured)
        .when(Predicate::NoResponse)
        .says(CERTIFICATE, &[
            "does not match certificate's altnames", "err_tls_cert_altname_invalid", "hostname mismatch, certificate",
            "x509: certificate is valid for", "certificate is not valid for any names", "cannot validate certificate for",
            "certificate relies on legacy common name field", "notvalidforname", "no alternative certificate subject name",
        ])
        .outranks(),
    rule("tls.verify_failed", ProviderMisconfigured)
        .when(Predicate::NoResponse)
        .says(CERTIFICATE, &[
            "certificate_verify_failed", "certificate verify failed", "invalid peer certificate",
            "ssl certificate problem", "tls: failed to verify certificate",
        ])
        .outranks(),

    // A rate limit named in words, behind whatever surfaced it ("stream disconnected
    // before completion: Rate limit reached ...").
    rule("text.rate_limit", RateLimited)
        .says(&["rate limit", "too many requests"], &["rate limit reached", "rate limit is exceeded", "rate limit exceeded", "rate limited", "too many requests"])
        .general(),
    rule("text.high_demand", Overloaded).text_any(&["experiencing high demand"]).general(),

    // Outages named in words: a proxy in front of the provider could not reach it
    // (Envoy's "upstream connect error", Cloudflare's 52x pages, whose titles name the
    // failure), or the connection dropped.
    rule("text.upstream_failure", ServerError)
        .says(&["upstream", "web server is", "origin is unreachable", "bad gateway", "internal server error"], &[
            "upstream connect error", "web server is returning an unknown error",
            "web server is down", "origin is unreachable", "bad gateway", "internal server error",
        ])
        .general(),
    rule("text.upstream_timeout", Timeout)
        .says(&["timeout", "timed out"], &["a timeout occurred", "connection timed out", "gateway timeout"])
        .general(),
    // A Rust client (reqwest) could not build the request: its URL is not one.
    rule("text.request_builder", ProviderMisconfigured).text(&["builder error"]),
    rule("text.connection_lost", Network)
        .text_any(&[
            "remote end closed connection", "connection reset by peer", "econnreset", "socket hang up",
            "connection aborted", "econnrefused",
        ])
        .general(),

    // A day-long wait with words about a quota, a tier or billing: waiting minutes will
    // not help (Azure's "retry after 86400 seconds" on a pricing tier, a per-day quota).
    rule("limit.long_wait_quota", QuotaExhausted).when(Predicate::LongWaitOnQuota).outranks(),
    rule("limit.per_day", QuotaExhausted)
        .text_any(&["day limit", "free-models-per-day", "daily limit", "daily quota"])
        .outranks(),

    // Extra paid usage or credits are needed, whatever the status (Anthropic answers a
    // 429 `rate_limit_error`): a credits problem, not throttling.
    rule("credits.required", InsufficientCredits)
        .says(&["credits", "extra usage"], &[
            "extra usage is required", "out of extra usage", "draw from your extra usage", "used all available credits",
            "credits are depleted", "requires more credits", "insufficient credits", "not enough credits",
        ]),
];
