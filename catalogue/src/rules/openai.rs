//! OpenAI's error objects (`{"error":{"message","type","param","code"}}`), the
//! Responses API's `response.failed` and `error` events, and everything that imitates
//! them (Azure, Groq, DeepSeek, Mistral, OpenRouter, vLLM, LM Studio, llama.cpp).
//! Source: <https://platform.openai.com/docs/guides/error-codes>.

use policy::SemanticCode::*;

use super::{Predicate, Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    // One request larger than the whole limit can never fit: not transient.
    rule("openai.request_exceeds_limit", InvalidRequest)
        .text(&["requested"])
        .when(Predicate::RequestedOverLimit)
        .outranks(),
    // A per-day limit is a quota, even when the message says "try again in 9m".
    rule("openai.tokens_per_day", QuotaExhausted).text(&["tokens per day"]).outranks(),
    rule("openai.requests_per_day", QuotaExhausted).text(&["requests per day"]).outranks(),
    rule("openai.maximum_context_length", ContextLengthExceeded).text(&["maximum context length"]),
    rule("openai.currently_overloaded", Overloaded).text(&["currently overloaded"]),
    rule("openai.safety_system", ContentFiltered).text(&["rejected as a result of our safety system"]),
    // Codes.
    rule("openai.insufficient_quota", InsufficientCredits).error_code("insufficient_quota"),
    rule("openai.credit_balance_exhausted", InsufficientCredits).error_code("credit_balance_exhausted"),
    rule("openai.organization_spend_limit_exceeded", InsufficientCredits).error_code("organization_spend_limit_exceeded"),
    rule("openai.project_spend_limit_exceeded", InsufficientCredits).error_code("project_spend_limit_exceeded"),
    rule("openai.billing_not_active", InsufficientCredits).error_code("billing_not_active"),
    rule("openai.organization_usage_limit_exceeded", QuotaExhausted).error_code("organization_usage_limit_exceeded"),
    rule("openai.rate_limit_exceeded", RateLimited).error_code("rate_limit_exceeded"),
    rule("openai.model_not_found", ModelUnavailable).error_code("model_not_found"),
    rule("openai.model_decommissioned", ModelUnavailable).error_code("model_decommissioned"),
    rule("openai.invalid_api_key", AuthFailed).error_code("invalid_api_key"),
    rule("openai.context_length_exceeded", ContextLengthExceeded).error_code("context_length_exceeded"),
    rule("openai.content_policy_violation", ContentFiltered).error_code("content_policy_violation"),
    rule("openai.unsupported_parameter", ProviderMisconfigured).error_code("unsupported_parameter"),
    rule("openai.unsupported_value", ProviderMisconfigured).error_code("unsupported_value"),
    rule("openai.unsupported_country_region_territory", ProviderMisconfigured).error_code("unsupported_country_region_territory"),
    rule("openai.server_is_overloaded", Overloaded).error_code("server_is_overloaded"),
    rule("openai.code.server_error", ServerError).error_code("server_error"),
    rule("openai.invalid_prompt", InvalidRequest).error_code("invalid_prompt"),
    // Types.
    rule("openai.type.insufficient_quota", InsufficientCredits).error_type("insufficient_quota"),
    rule("openai.type.requests", RateLimited).error_type("requests"),
    rule("openai.type.tokens", RateLimited).error_type("tokens"),
    rule("openai.type.rate_limit_error", RateLimited).error_type("rate_limit_error"),
    rule("openai.type.authentication_error", AuthFailed).error_type("authentication_error"),
    rule("openai.type.server_error", ServerError).error_type("server_error"),
    rule("openai.type.service_unavailable_error", Overloaded).error_type("service_unavailable_error"),
    rule("openai.type.invalid_request_error", InvalidRequest).error_type("invalid_request_error").loose(),
];
