//! Rules for every family: bare well-known statuses (SPEC 2.4) and transport failures.

use policy::SemanticCode::*;

use super::{Rule, rule};

/// Bare statuses (rank 1: any error type, code or message outranks them) and transport
/// failures (rank 2). A certificate failure is not a network blip: `tls` is a
/// misconfiguration.
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
];
