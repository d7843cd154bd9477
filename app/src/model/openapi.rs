//! Shapes that exist only to describe the API in its OpenAPI document: the
//! request bodies (read as JSON values so every field error can be reported)
//! and the policy documents (validated by the policy crate).

#![allow(dead_code)]

use utoipa::ToSchema;

/// Token escalation after a `max_tokens` stop.
#[derive(ToSchema)]
pub struct EscalationSchema {
    /// 0..=3, default 1.
    max_escalations: u32,
    /// 1..=1000000, default 32768.
    ceiling_tokens: u32,
}

/// A version-2 policy document.
#[derive(ToSchema)]
pub struct PolicySchema {
    /// Always 2.
    version: u32,
    /// Overloads, throttling, outages, network failures and timeouts.
    transient: SectionSchema,
    /// Usage windows, quotas, credits, auth, missing models, misconfiguration.
    hard: SectionSchema,
}

/// One class's section of a policy.
#[derive(ToSchema)]
pub struct SectionSchema {
    retry: RetrySchema,
    reset_wait: ResetWaitSchema,
    /// `skip` or `stop`.
    on_exhausted: String,
}

/// Exponential retries.
#[derive(ToSchema)]
pub struct RetrySchema {
    enabled: bool,
    /// 1..=10.
    max_retries: u32,
    /// 100..=600000.
    initial_interval_ms: u64,
}

/// Waiting for a provider's reset time.
#[derive(ToSchema)]
pub struct ResetWaitSchema {
    enabled: bool,
    /// 1..=604800.
    max_wait_s: u64,
}

/// A provider to create or update. `api_key_env` names an environment
/// variable (ending in `_API_KEY`, or allowed with `--allow-key-env`).
#[derive(ToSchema)]
pub struct ProviderRequest {
    name: String,
    /// `anthropic`, `openai`, `openai_compatible` or `simulated`.
    kind: String,
    /// Defaults from the kind.
    family: Option<String>,
    /// Required except for `simulated`.
    base_url: Option<String>,
    /// Required for `anthropic` and `openai`.
    api_key_env: Option<String>,
    /// Required on update: the revision you read.
    revision: Option<i64>,
}

/// A profile to create or update.
#[derive(ToSchema)]
pub struct ProfileRequest {
    name: String,
    /// Required on update: the revision you read.
    revision: Option<i64>,
    /// At least one.
    candidates: Vec<CandidateRequest>,
}

/// A candidate to create (no `id`) or keep (its `id`).
#[derive(ToSchema)]
pub struct CandidateRequest {
    id: Option<String>,
    provider_id: String,
    model: String,
    enabled: bool,
    /// 1..=1000000.
    max_tokens: u32,
    escalation: Option<EscalationSchema>,
    /// Version 2, a version-1 rule map (no `version`), or absent for the defaults.
    #[schema(value_type = Option<Object>)]
    policy: Option<serde_json::Value>,
}

/// A refused body: every field error at once.
#[derive(ToSchema)]
pub struct FieldErrorsBody {
    /// `invalid`.
    error: String,
    errors: Vec<FieldErrorSchema>,
}

/// One field error.
#[derive(ToSchema)]
pub struct FieldErrorSchema {
    /// E.g. `candidates[1].policy.hard.retry.max_retries`.
    field: String,
    /// `required`, `range`, `type`, `unknown_field`, `enum`, `version`, `conflict`, `unique`, `not_found`.
    code: String,
    message: String,
}

/// Any other error.
#[derive(ToSchema)]
pub struct ErrorBody {
    /// `not_found`, `stale_revision`, `in_use`, `malformed_json`, ...
    error: String,
    message: String,
}
