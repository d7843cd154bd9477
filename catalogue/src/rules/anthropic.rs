//! Anthropic's Messages API: `{"type":"error","error":{"type","message"}}`, over HTTP
//! or as the `error` event of a stream that began with a 200.
//! Source: <https://docs.anthropic.com/en/api/errors>.

use policy::SemanticCode::*;

use super::{MessageHint, Predicate, Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    // Messages that refine the error type.
    // A Claude subscription (OAuth) window is used up: the 429 says `rate_limit_error`,
    // the `anthropic-ratelimit-unified-*-status: rejected` headers say whose limit.
    rule("anthropic.subscription_window_rejected", UsageLimited).when(Predicate::WindowRejected),
    rule("anthropic.credit_balance_too_low", InsufficientCredits).text(&["credit balance is too low"]),
    // A daily cap, whatever the `rate_limit_error` type beside it says.
    rule("anthropic.daily_rate_limit", QuotaExhausted).text(&["daily rate limit"]).outranks(),
    rule("anthropic.api_usage_limits", InsufficientCredits)
        .text(&["reached your specified api usage limits"])
        .hints(&[MessageHint::WallClock]),
    rule("anthropic.spend_limit", InsufficientCredits).text(&["spend limit"]),
    rule("anthropic.prompt_too_long", ContextLengthExceeded).text(&["prompt is too long"]),
    rule("anthropic.context_limit", ContextLengthExceeded).text(&["exceed context limit"]),
    rule("anthropic.content_filtering", ContentFiltered).text(&["content filtering policy"]),
    // Structured codes.
    rule("anthropic.enforced_spend_limit_reached", InsufficientCredits).error_code("enforced_spend_limit_reached"),
    // Error types, as documented.
    rule("anthropic.overloaded_error", Overloaded).error_type("overloaded_error"),
    rule("anthropic.rate_limit_error", RateLimited).error_type("rate_limit_error"),
    rule("anthropic.api_error", ServerError).error_type("api_error"),
    rule("anthropic.timeout_error", Timeout).error_type("timeout_error"),
    rule("anthropic.authentication_error", AuthFailed).error_type("authentication_error"),
    rule("anthropic.permission_error", AuthFailed).error_type("permission_error"),
    rule("anthropic.not_found_error", ModelUnavailable).error_type("not_found_error"),
    rule("anthropic.billing_error", InsufficientCredits).error_type("billing_error"),
    rule("anthropic.request_too_large", InvalidRequest).error_type("request_too_large"),
    rule("anthropic.invalid_request_error", InvalidRequest).error_type("invalid_request_error").loose(),
];
