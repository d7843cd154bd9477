//! The shapes the API answers with and the pages render: one definition for
//! the JSON API, the server functions and the browser.

mod error;
#[cfg(feature = "ssr")]
pub mod openapi;

use policy::{EscalationSettings, PolicyDocument};
use serde::{Deserialize, Serialize};

pub use error::ApiError;

/// A provider as the API shows it: the key's variable name and whether it is
/// set on the server, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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

/// A dynamic profile with its candidates in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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

/// One candidate, with its stored version-2 policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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
    #[cfg_attr(feature = "ssr", schema(value_type = openapi::EscalationSchema))]
    pub escalation: EscalationSettings,
    /// The version-2 policy document.
    #[cfg_attr(feature = "ssr", schema(value_type = openapi::PolicySchema))]
    pub policy: PolicyDocument,
}
