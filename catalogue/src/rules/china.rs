//! Providers in China: Moonshot (Kimi), Zhipu (GLM, BigModel, Z.ai), Alibaba's
//! DashScope (Qwen, Model Studio) and SiliconFlow. Their errors keep their meaning in
//! a type or a business code while the status says little (Zhipu answers billing,
//! throttling and plan windows alike with 429; DashScope's arrears come as 400), and
//! their messages are often in Chinese, which the generic layer reads. The shapes and
//! codes, with their sources, are in `FAMILIES.md`. Reset times they print without a
//! zone are China Standard Time ([`crate::Family::default_time_zone`]).

use policy::SemanticCode::*;

use super::{MessageHint, Rule, rule};

const WALL_CLOCK: &[MessageHint] = &[MessageHint::WallClock];

/// Moonshot and Kimi Code: the type names the meaning; the daily token cap shares the
/// throttle's type. Source: <https://platform.moonshot.cn/docs/api/errors>.
#[rustfmt::skip]
pub(crate) const MOONSHOT: &[Rule] = &[
    rule("moonshot.tokens_per_day", QuotaExhausted).text(&["tpd rate limit"]).outranks(),
    rule("moonshot.suspended_insufficient_balance", InsufficientCredits).text(&["suspended due to insufficient balance"]),
    rule("moonshot.billing_cycle_usage_limit", UsageLimited).text(&["usage limit for this billing cycle"]),
    rule("moonshot.exceeded_model_token_limit", ContextLengthExceeded).text(&["exceeded model token limit"]),
    rule("moonshot.exceeded_current_quota_error", InsufficientCredits).error_type("exceeded_current_quota_error"),
    rule("moonshot.rate_limit_reached_error", RateLimited).error_type("rate_limit_reached_error"),
    rule("moonshot.engine_overloaded_error", Overloaded).error_type("engine_overloaded_error"),
    rule("moonshot.invalid_authentication_error", AuthFailed).error_type("invalid_authentication_error"),
    rule("moonshot.access_terminated_error", AuthFailed).error_type("access_terminated_error"),
    rule("moonshot.resource_not_found_error", ModelUnavailable).error_type("resource_not_found_error"),
    rule("moonshot.content_filter", ContentFiltered).error_type("content_filter"),
];

/// Zhipu (BigModel, Z.ai): the business code in `error.code` (also `[1310][...]` in
/// the message through its Anthropic endpoint). Source:
/// <https://docs.bigmodel.cn/cn/faq/api-code>.
#[rustfmt::skip]
pub(crate) const ZHIPU: &[Rule] = &[
    rule("zhipu.1002", AuthFailed).error_code("1002"),
    rule("zhipu.1113", InsufficientCredits).error_code("1113"),
    rule("zhipu.1211", ModelUnavailable).error_code("1211"),
    rule("zhipu.1261", ContextLengthExceeded).error_code("1261"),
    rule("zhipu.1301", ContentFiltered).error_code("1301"),
    rule("zhipu.1302", RateLimited).error_code("1302"),
    rule("zhipu.1304", QuotaExhausted).error_code("1304"),
    rule("zhipu.1305", Overloaded).error_code("1305"),
    // The plan's 5-hour window, and its weekly or monthly one, with the instant they
    // reset ("您的限额将在 2026-08-25 07:41:44 重置", "Your limit will reset at ...").
    rule("zhipu.1308", UsageLimited).error_code("1308").hints(WALL_CLOCK),
    rule("zhipu.1309", InsufficientCredits).error_code("1309"),
    rule("zhipu.1310", UsageLimited).error_code("1310").hints(WALL_CLOCK),
];

/// DashScope: PascalCase codes natively, copied or snake_case in compatible mode. Its
/// compatible mode sends the per-minute token throttle as `insufficient_quota`, which
/// OpenAI uses for billing: here it is throttling. Source:
/// <https://help.aliyun.com/zh/model-studio/error-code>.
#[rustfmt::skip]
pub(crate) const DASHSCOPE: &[Rule] = &[
    rule("dashscope.range_of_input_length", ContextLengthExceeded).text(&["range of input length"]),
    // The per-minute allocation ("Allocated quota exceeded, please increase your quota
    // limit"), not the free tier's ("Free allocated quota exceeded").
    rule("dashscope.allocated_quota", RateLimited).text(&["allocated quota exceeded, please increase"]).outranks(),
    rule("dashscope.arrearage", InsufficientCredits).error_code("Arrearage"),
    rule("dashscope.invalid_api_key", AuthFailed).error_code("InvalidApiKey"),
    rule("dashscope.data_inspection_failed", ContentFiltered).error_code("data_inspection_failed"),
    rule("dashscope.insufficient_quota", RateLimited).status(429).error_code("insufficient_quota"),
];

/// SiliconFlow: an integer code at the top level. Source:
/// <https://docs.siliconflow.cn/cn/api-reference/chat-completions/chat-completions>.
#[rustfmt::skip]
pub(crate) const SILICONFLOW: &[Rule] = &[
    rule("siliconflow.20012", ModelUnavailable).error_code("20012"),
    rule("siliconflow.20402", ModelUnavailable).error_code("20402"),
    rule("siliconflow.30003", ModelUnavailable).error_code("30003"),
    rule("siliconflow.30011", InsufficientCredits).error_code("30011"),
];
