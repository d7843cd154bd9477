//! OpenAI-compatible vendors with errors of their own: Azure OpenAI, Mistral, Groq and
//! DeepSeek. Their OpenAI-shaped errors fall through to the OpenAI table.

use policy::SemanticCode::*;

use super::{Rule, rule};

/// Azure OpenAI. Source:
/// <https://learn.microsoft.com/en-us/azure/ai-services/openai/concepts/content-filter>.
#[rustfmt::skip]
pub(crate) const AZURE: &[Rule] = &[
    rule("azure.token_rate_limit", RateLimited).text(&["token rate limit"]),
    rule("azure.call_rate_limit", RateLimited).text(&["call rate limit"]),
    rule("azure.deployment_does_not_exist", ModelUnavailable).text(&["api deployment for this resource does not exist"]),
    rule("azure.invalid_subscription_key", AuthFailed).text(&["invalid subscription key or wrong api endpoint"]),
    rule("azure.resource_not_found", ProviderMisconfigured).status(404).text(&["resource not found"]),
    rule("azure.content_management_policy", ContentFiltered).text(&["content management policy"]),
    rule("azure.deployment_not_found", ModelUnavailable).error_code("DeploymentNotFound"),
    rule("azure.content_filter", ContentFiltered).error_code("content_filter"),
    rule("azure.responsible_ai_policy_violation", ContentFiltered).error_code("ResponsibleAIPolicyViolation"),
    rule("azure.operation_not_supported", ProviderMisconfigured).error_code("OperationNotSupported"),
];

/// Mistral. Source: <https://docs.mistral.ai/>.
#[rustfmt::skip]
pub(crate) const MISTRAL: &[Rule] = &[
    rule("mistral.requests_rate_limit", RateLimited).text(&["requests rate limit exceeded"]),
    rule("mistral.service_tier_capacity", Overloaded).text(&["service tier capacity exceeded"]),
    rule("mistral.too_large_for_model", ContextLengthExceeded).text(&["too large for model with"]),
    rule("mistral.invalid_model_text", ModelUnavailable).text(&["invalid model"]),
    rule("mistral.rate_limited", RateLimited).error_type("rate_limited"),
    rule("mistral.invalid_model", ModelUnavailable).error_type("invalid_model"),
];

/// Groq. Source: <https://console.groq.com/docs/errors>.
#[rustfmt::skip]
pub(crate) const GROQ: &[Rule] = &[
    rule("groq.flex_capacity", Overloaded).text(&["capacity exceeded"]),
    rule("groq.498", Overloaded).status(498),
];

/// DeepSeek. Source: <https://api-docs.deepseek.com/quick_start/error_codes>.
#[rustfmt::skip]
pub(crate) const DEEPSEEK: &[Rule] = &[
    rule("deepseek.insufficient_balance", InsufficientCredits).text(&["insufficient balance"]),
    rule("deepseek.server_busy", Overloaded).text(&["server is busy"]),
    rule("deepseek.server_overloaded", Overloaded).text(&["server overloaded"]),
    rule("deepseek.authentication_fails", AuthFailed).text(&["authentication fails"]),
    rule("deepseek.invalid_parameters", InvalidRequest).status(422),
];
