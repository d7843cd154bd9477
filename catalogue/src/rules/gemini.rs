//! Google's Gemini API and Vertex AI: `{"error":{"code","message","status","details"}}`
//! with `RetryInfo`, `QuotaFailure` and `ErrorInfo` details.
//! Source: <https://ai.google.dev/gemini-api/docs/troubleshooting>.

use policy::SemanticCode::*;

use super::{Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    // A per-day quota is hard even with a short RetryInfo, and even when a per-minute
    // quota is exceeded too; per-minute alone stays transient.
    rule("gemini.quota_per_day", QuotaExhausted).quota("perday").outranks(),
    // The same quota ids quoted in text (SDK and CLI logs that print the error).
    rule("gemini.quota_per_day_text", QuotaExhausted).text(&["perday"]).outranks(),
    rule("gemini.quota_limit_zero", QuotaExhausted).text(&["limit: 0,"]).outranks(),
    // An ErrorInfo reason naming a credits balance (`INSUFFICIENT_G1_CREDITS_BALANCE`,
    // behind a 429 `RESOURCE_EXHAUSTED`): the balance is spent, a wait refills nothing.
    rule("gemini.credits_balance", InsufficientCredits).text(&["credits_balance"]).outranks(),
    rule("gemini.input_token_count", ContextLengthExceeded).text(&["exceeds the maximum number of tokens allowed"]),
    rule("gemini.user_location", ProviderMisconfigured).text(&["user location is not supported"]),
    rule("gemini.free_tier_country", ProviderMisconfigured).text(&["free tier is not available in your country"]),
    rule("gemini.api_key_not_valid", AuthFailed).text(&["api key not valid"]),
    rule("gemini.resource_exhausted_text", RateLimited).text(&["resource has been exhausted"]),
    rule("gemini.resource_exhausted_vertex_text", RateLimited).text(&["resource exhausted. please try again later"]),
    // ErrorInfo reasons and blockReason.
    rule("gemini.api_key_invalid", AuthFailed).error_code("API_KEY_INVALID"),
    rule("gemini.api_key_service_blocked", AuthFailed).error_code("API_KEY_SERVICE_BLOCKED"),
    rule("gemini.service_disabled", ProviderMisconfigured).error_code("SERVICE_DISABLED"),
    rule("gemini.billing_disabled", InsufficientCredits).error_code("BILLING_DISABLED"),
    rule("gemini.rate_limit_exceeded", RateLimited).error_code("RATE_LIMIT_EXCEEDED"),
    rule("gemini.block_reason_safety", ContentFiltered).error_code("SAFETY"),
    rule("gemini.block_reason_prohibited", ContentFiltered).error_code("PROHIBITED_CONTENT"),
    rule("gemini.block_reason_blocklist", ContentFiltered).error_code("BLOCKLIST"),
    // Canonical statuses.
    rule("gemini.resource_exhausted", RateLimited).error_type("RESOURCE_EXHAUSTED"),
    rule("gemini.unavailable", Overloaded).error_type("UNAVAILABLE"),
    rule("gemini.internal", ServerError).error_type("INTERNAL"),
    rule("gemini.deadline_exceeded", Timeout).error_type("DEADLINE_EXCEEDED"),
    rule("gemini.permission_denied", AuthFailed).error_type("PERMISSION_DENIED"),
    rule("gemini.unauthenticated", AuthFailed).error_type("UNAUTHENTICATED"),
    rule("gemini.not_found", ModelUnavailable).error_type("NOT_FOUND"),
    rule("gemini.failed_precondition", ProviderMisconfigured).error_type("FAILED_PRECONDITION"),
    rule("gemini.invalid_argument", InvalidRequest).error_type("INVALID_ARGUMENT"),
    rule("gemini.cancelled", Cancelled).error_type("CANCELLED"),
    // Cloud Code (Gemini CLI, Code Assist): "You have exhausted your capacity on this
    // model. Your quota will reset after 51s." A day-long wait makes it a quota.
    rule("gemini.capacity_exhausted", RateLimited).text(&["exhausted your capacity"]),
    // Statuses printed by SDKs and CLIs outside any JSON (`503 UNAVAILABLE. {'error':
    // ...}` in a Python dict, `got status: INTERNAL.`), when no parsed status decided.
    rule("gemini.unavailable_text", Overloaded).text_any(&["503 unavailable", "status: unavailable", "'status': 'unavailable'"]).general(),
    rule("gemini.deadline_exceeded_text", Timeout).text_any(&["deadline exceeded", "deadline_exceeded"]).general(),
    rule("gemini.internal_text", ServerError).text_any(&["500 internal", "status: internal", "'status': 'internal'"]).general(),
    rule("gemini.resource_exhausted_status_text", RateLimited)
        .says(&["resource_exhausted"], &["429 resource_exhausted", "'status': 'resource_exhausted'"])
        .general(),
];
