//! What the API answers: wire shapes, converted from domain types here.

use policy::{EscalationSettings, PolicyDocument};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::clock::rfc3339;
use crate::domain::{Candidate, Profile, Provider};

/// A provider as the API shows it: the key's variable name and whether it is
/// set on the server, never the key.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProviderView {
    /// Stable id.
    pub id: String,
    /// Name, unique regardless of case.
    pub name: String,
    /// `anthropic`, `openai`, `openai_compatible` or `simulated`.
    pub kind: String,
    /// Whose errors to expect: `anthropic`, `openai`, `azure_openai`, `gemini`, ...
    pub family: String,
    /// Base URL (empty for `simulated`).
    pub base_url: String,
    /// The environment variable that holds the key.
    pub api_key_env: Option<String>,
    /// Whether that variable is set (and not empty) on the server.
    pub api_key_env_set: bool,
    /// Send this back with an update.
    pub revision: i64,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

impl From<Provider> for ProviderView {
    fn from(provider: Provider) -> Self {
        let api_key_env_set = provider
            .api_key_env
            .as_deref()
            .and_then(std::env::var_os)
            .is_some_and(|value| !value.is_empty());
        Self {
            id: provider.id,
            name: provider.name,
            kind: provider.kind.as_str().to_owned(),
            family: provider.family.as_str().to_owned(),
            base_url: provider.base_url,
            api_key_env: provider.api_key_env,
            api_key_env_set,
            revision: provider.revision,
            created_at: rfc3339(provider.created_at_ms),
            updated_at: rfc3339(provider.updated_at_ms),
        }
    }
}

/// A dynamic profile with its candidates in order.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ProfileView {
    /// Stable id.
    pub id: String,
    /// Name, unique regardless of case.
    pub name: String,
    /// Send this back with an update.
    pub revision: i64,
    /// The candidates in the user's order.
    pub candidates: Vec<CandidateView>,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
}

impl From<Profile> for ProfileView {
    fn from(profile: Profile) -> Self {
        Self {
            id: profile.id,
            name: profile.name,
            revision: profile.revision,
            candidates: profile
                .candidates
                .into_iter()
                .map(CandidateView::from)
                .collect(),
            created_at: rfc3339(profile.created_at_ms),
            updated_at: rfc3339(profile.updated_at_ms),
        }
    }
}

/// One candidate, with its stored version-2 policy.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CandidateView {
    /// Stable id: send it back to keep the candidate.
    pub id: String,
    /// The provider it dispatches to.
    pub provider_id: String,
    /// The model name.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// Token budget of one answer, 1..=1000000.
    pub max_tokens: u32,
    /// `{"max_escalations", "ceiling_tokens"}`.
    #[schema(value_type = EscalationSchema)]
    pub escalation: EscalationSettings,
    /// The version-2 policy document.
    #[schema(value_type = PolicySchema)]
    pub policy: PolicyDocument,
}

impl From<Candidate> for CandidateView {
    fn from(candidate: Candidate) -> Self {
        Self {
            id: candidate.id,
            provider_id: candidate.provider_id,
            model: candidate.model,
            enabled: candidate.enabled,
            max_tokens: candidate.max_tokens,
            escalation: candidate.escalation,
            policy: candidate.policy,
        }
    }
}

/// Token escalation after a `max_tokens` stop.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct EscalationSchema {
    /// 0..=3, default 1.
    max_escalations: u32,
    /// 1..=1000000, default 32768.
    ceiling_tokens: u32,
}

/// A version-2 policy document.
#[derive(ToSchema)]
#[allow(dead_code)]
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
#[allow(dead_code)]
pub struct SectionSchema {
    retry: RetrySchema,
    reset_wait: ResetWaitSchema,
    /// `skip` or `stop`.
    on_exhausted: String,
}

/// Exponential retries.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct RetrySchema {
    enabled: bool,
    /// 1..=10.
    max_retries: u32,
    /// 100..=600000.
    initial_interval_ms: u64,
}

/// Waiting for a provider's reset time.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ResetWaitSchema {
    enabled: bool,
    /// 1..=604800.
    max_wait_s: u64,
}

/// A provider to create or update. `api_key_env` names an environment
/// variable (ending in `_API_KEY`, or allowed with `--allow-key-env`).
#[derive(ToSchema)]
#[allow(dead_code)]
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
#[allow(dead_code)]
pub struct ProfileRequest {
    name: String,
    /// Required on update: the revision you read.
    revision: Option<i64>,
    /// At least one.
    candidates: Vec<CandidateRequest>,
}

/// A candidate to create (no `id`) or keep (its `id`).
#[derive(ToSchema)]
#[allow(dead_code)]
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
#[allow(dead_code)]
pub struct FieldErrorsBody {
    /// `invalid`.
    error: String,
    errors: Vec<FieldErrorSchema>,
}

/// One field error.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct FieldErrorSchema {
    /// E.g. `candidates[1].policy.hard.retry.max_retries`.
    field: String,
    /// `required`, `range`, `type`, `unknown_field`, `enum`, `version`, `conflict`, `unique`, `not_found`.
    code: String,
    message: String,
}

/// Any other error.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ErrorBody {
    /// `not_found`, `stale_revision`, `in_use`, `malformed_json`, ...
    error: String,
    message: String,
}
