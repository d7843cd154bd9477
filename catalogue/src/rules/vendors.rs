//! Vendors with errors of their own. Azure OpenAI, Mistral, Groq and DeepSeek: their
//! OpenAI-shaped errors fall through to the OpenAI table. Nvidia NIM, Hugging Face,
//! Perplexity, Cerebras and Cloudflare: their own tables only, and the generic layer
//! for the rest.

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
    rule("deepseek.content_exists_risk", ContentFiltered).text(&["content exists risk"]),
    rule("deepseek.server_busy", Overloaded).text(&["server is busy"]),
    rule("deepseek.server_overloaded", Overloaded).text(&["server overloaded"]),
    rule("deepseek.authentication_fails", AuthFailed).text(&["authentication fails"]),
    rule("deepseek.invalid_parameters", InvalidRequest).status(422),
];

/// Nvidia NIM: RFC 7807 problem objects (`title`, `detail`). Source:
/// <https://docs.api.nvidia.com/nim/reference/>.
#[rustfmt::skip]
pub(crate) const NVIDIA_NIM: &[Rule] = &[
    rule("nvidia_nim.end_of_life", ModelUnavailable).text(&["has reached its end of life"]),
    // A function (model) the account cannot use, or one pulled: the model is never named.
    rule("nvidia_nim.not_found_for_account", ModelUnavailable).text(&["not found for account"]),
    rule("nvidia_nim.authorization_failed", AuthFailed).status(403).text(&["authorization failed"]),
];

/// Hugging Face Inference Providers (the router). Source:
/// <https://huggingface.co/docs/inference-providers/>.
#[rustfmt::skip]
pub(crate) const HUGGINGFACE: &[Rule] = &[
    rule("huggingface.no_provider_enabled", ModelUnavailable).text(&["not supported by any provider you have enabled"]),
    rule("huggingface.monthly_included_credits", QuotaExhausted).text(&["monthly included credits"]),
    rule("huggingface.currently_loading", Overloaded).text(&["is currently loading"]),
];

/// Perplexity. Source: <https://docs.perplexity.ai/>.
#[rustfmt::skip]
pub(crate) const PERPLEXITY: &[Rule] = &[
    rule("perplexity.permitted_models", ModelUnavailable).text(&["permitted models can be found"]),
];

/// Cerebras: a flat object whose `code` names the meaning; its per-minute and
/// per-second limits are `request_quota_exceeded`, throttling whatever "quota" says.
/// Source: <https://inference-docs.cerebras.ai/support/error>.
#[rustfmt::skip]
pub(crate) const CEREBRAS: &[Rule] = &[
    rule("cerebras.request_quota_exceeded", RateLimited).status(429).error_code("request_quota_exceeded"),
    rule("cerebras.payment_required", InsufficientCredits).error_code("payment_required"),
    rule("cerebras.model_not_found", ModelUnavailable).error_code("model_not_found"),
];

/// Cloudflare Workers AI and AI Gateway: numeric codes in the v4 envelope's `errors`,
/// or `<code>: <message>` from the Workers binding. Source:
/// <https://developers.cloudflare.com/workers-ai/platform/errors/>.
#[rustfmt::skip]
pub(crate) const CLOUDFLARE: &[Rule] = &[
    rule("cloudflare.daily_free_allocation", QuotaExhausted).text(&["daily free allocation"]),
    rule("cloudflare.3040", Overloaded).text(&["3040: "]),
    rule("cloudflare.3007", Timeout).error_code("3007"),
    rule("cloudflare.3023", AuthFailed).error_code("3023"),
    rule("cloudflare.10000", AuthFailed).error_code("10000"),
];
