//! Agent CLIs: what Claude Code, Codex and the Gemini CLI print. Their embedded API
//! errors fall through to the Anthropic, OpenAI and Gemini tables.

use policy::SemanticCode::*;

use super::{MessageHint, Rule, rule};

const WALL_CLOCK: &[MessageHint] = &[MessageHint::WallClock];

// A CLI's own words for its plan's usage window outrank everything but other rank-7
// rules: they say whose limit it is (a day-long wait with "daily" is still the plan's
// window, not a quota).

/// Claude Code.
#[rustfmt::skip]
pub(crate) const CLAUDE_CODE: &[Rule] = &[
    rule("claude_code.usage_limit_reached", UsageLimited)
        .text(&["usage limit reached"])
        .hints(&[MessageHint::EpochAfterPipe, MessageHint::WallClock]).outranks(),
    rule("claude_code.hit_your_limit", UsageLimited)
        .text_any(&["hit your limit", "hit your weekly limit", "hit your session limit", "hit your opus limit", "hit your sonnet limit"])
        .hints(WALL_CLOCK).outranks(),
    rule("claude_code.five_hour_limit", UsageLimited).text(&["5-hour limit reached"]).hints(WALL_CLOCK).outranks(),
    rule("claude_code.weekly_limit", UsageLimited).text(&["weekly limit reached"]).hints(WALL_CLOCK).outranks(),
    rule("claude_code.invalid_api_key", AuthFailed).text(&["invalid api key"]),
    rule("claude_code.missing_api_key", CredentialsMissing).text(&["missing api key"]),
    rule("claude_code.not_logged_in", CredentialsMissing).text(&["not logged in"]),
    rule("claude_code.credit_balance_too_low", InsufficientCredits).text(&["credit balance too low"]),
    rule("claude_code.oauth_token_expired", AuthFailed).text(&["oauth token has expired"]),
    rule("claude_code.request_timed_out", Timeout).text(&["request timed out"]),
    rule("claude_code.connection_error", Network).text(&["connection error"]).broad(),
];

/// Codex.
#[rustfmt::skip]
pub(crate) const CODEX: &[Rule] = &[
    rule("codex.exceeds_context_window", ContextLengthExceeded).text(&["exceeds the context window"]).outranks(),
    rule("codex.usage_limit", UsageLimited)
        .text(&["hit your usage limit"])
        .hints(WALL_CLOCK).outranks(),
    rule("codex.quota_exceeded", InsufficientCredits).text(&["quota exceeded. check your plan and billing details"]),
    rule("codex.stream_disconnected", Network).text(&["stream disconnected before completion"]).broad(),
    rule("codex.error_sending_request", Network).text(&["error sending request for url"]).broad(),
    rule("codex.usage_limit_reached", UsageLimited).error_type("usage_limit_reached"),
];

/// The Gemini CLI.
#[rustfmt::skip]
pub(crate) const GEMINI_CLI: &[Rule] = &[
    // "Usage limit reached for gemini-2.5-pro. Access resets at 3:45 PM PST."
    rule("gemini_cli.usage_limit_reached", UsageLimited).text(&["usage limit reached for"]).hints(WALL_CLOCK).outranks(),
    rule("gemini_cli.daily_quota", QuotaExhausted).text(&["reached your daily"]),
    rule("gemini_cli.quota_per_day", QuotaExhausted).text(&["quota exceeded for quota metric", "per day"]),
    rule("gemini_cli.resource_exhausted_text", RateLimited).text(&["resource_exhausted"]),
    // Google words its free tier's per-minute 429 as OpenAI words a spent balance:
    // from Google, it is throttling.
    rule("gemini_cli.exceeded_current_quota", RateLimited).text(&["you exceeded your current quota"]),
];

/// GitHub Copilot (VS Code chat, the Copilot CLI): `Server Error: ... Error Code:
/// <code>`, or the model call's JSON. Source:
/// <https://docs.github.com/en/copilot/concepts/rate-limits>.
#[rustfmt::skip]
pub(crate) const GITHUB_COPILOT: &[Rule] = &[
    // The weekly window also says "Please wait 2 minutes": the code says whose limit.
    rule("github_copilot.user_weekly_rate_limited", UsageLimited).text(&["user_weekly_rate_limited"]).outranks(),
    rule("github_copilot.rate_limited", RateLimited).text(&["error code: rate_limited"]),
    rule("github_copilot.no_authentication_information", CredentialsMissing).text(&["no authentication information found"]),
    rule("github_copilot.model_not_supported", ModelUnavailable).error_code("model_not_supported"),
];

/// Cursor (the editor and `cursor-agent`): a title and a detail, or `ERROR_*` codes.
/// Source: <https://docs.cursor.com/troubleshooting/common-issues>.
#[rustfmt::skip]
pub(crate) const CURSOR: &[Rule] = &[
    rule("cursor.hit_your_usage_limit", UsageLimited).text(&["hit your usage limit"]),
    rule("cursor.bad_model_name", ModelUnavailable).text(&["error_bad_model_name"]),
    rule("cursor.not_with_your_plan", ModelUnavailable).text(&["does not work with your current plan"]),
    rule("cursor.not_in_your_region", ModelUnavailable).text(&["doesn't serve your region"]),
];

/// opencode: the Vercel AI SDK's errors, and its own (`ProviderModelNotFoundError`,
/// Zen's `CreditsError`). Source: <https://opencode.ai/docs/troubleshooting/>.
#[rustfmt::skip]
pub(crate) const OPENCODE: &[Rule] = &[
    rule("opencode.provider_model_not_found", ModelUnavailable).text(&["providermodelnotfounderror"]),
    rule("opencode.insufficient_balance", InsufficientCredits).text(&["insufficient balance"]),
    rule("opencode.credits_error", InsufficientCredits).error_type("CreditsError"),
];

/// Goose: `Ran into this error: <ProviderError>`, and its retry and truncation logs.
/// Source: <https://github.com/block/goose/blob/main/crates/goose/src/providers/errors.rs>.
#[rustfmt::skip]
pub(crate) const GOOSE: &[Rule] = &[
    // Goose labels every 429 it passes on so, a spent balance too: its label is loose.
    rule("goose.rate_limit_exceeded", RateLimited).text_any(&["ratelimitexceeded(", "rate limit exceeded:"]).loose(),
    rule("goose.context_length_exceeded", ContextLengthExceeded).text(&["context length exceeded. truncation attempt"]),
    rule("goose.authentication_failed", AuthFailed).text(&["authentication error: authentication failed"]),
    rule("goose.error_sending_request", Network).text(&["execution error: error sending request"]),
];
