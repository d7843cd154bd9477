//! The catalogue's inbox on the wire: the failures it was unsure of, grouped so a
//! person reads each kind once, and what the current catalogue would now read
//! differently in the evidence stored with past attempts.

use policy::{Class, Confidence, SemanticCode};
use serde::{Deserialize, Serialize};

use crate::ids::{AttemptId, ProviderId, TaskId};
use crate::time::Timestamp;

/// `GET /api/catalogue/inbox`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InboxView {
    /// One per provider and message (its numbers and ids left out), the most
    /// frequent first.
    pub groups: Vec<InboxGroup>,
    /// How many of the latest unsure attempts were read to make them.
    pub attempts_read: u32,
}

/// Attempts of one provider whose messages differ only in numbers and ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InboxGroup {
    /// The provider the attempts went to.
    pub provider_id: ProviderId,
    /// Its name now (its id, should it be gone).
    pub provider: String,
    /// The family its errors were read as.
    pub family: String,
    /// The latest attempt's message, secrets removed.
    pub message: String,
    /// The message as grouped: lowercase, numbers and ids as `#`.
    pub key: String,
    /// How many attempts.
    pub count: u32,
    /// What the catalogue said of the latest.
    pub verdict: VerdictView,
    /// When the latest finished.
    pub last_seen: Timestamp,
    /// The tasks they belong to, the latest first (at most ten).
    pub task_ids: Vec<TaskId>,
    /// The latest attempt as a fixture file for the catalogue's tests: its
    /// evidence, secrets removed, with `source` and `expected` for a person to
    /// fill in.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub fixture: serde_json::Value,
}

/// What the catalogue said of one failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VerdictView {
    /// The semantic code.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::SemanticCodeSchema))]
    pub code: SemanticCode,
    /// Its class.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ClassSchema))]
    pub class: Class,
    /// `high`, `medium` or `low`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ConfidenceSchema))]
    pub confidence: Confidence,
    /// The rule that decided (`unknown` when none did).
    pub rule: String,
    /// The catalogue version.
    pub catalogue: String,
}

/// `GET /api/catalogue/reclassify`: stored evidence read again by the current
/// catalogue. Nothing is changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReclassifyView {
    /// The version that read them again.
    pub catalogue: String,
    /// How many attempts with evidence were read, the latest first.
    pub checked: u32,
    /// Those it now reads differently (another code, confidence or rule).
    pub changes: Vec<Reclassified>,
}

/// One attempt the current catalogue reads differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Reclassified {
    /// The attempt.
    pub attempt_id: AttemptId,
    /// Its task.
    pub task_id: TaskId,
    /// The provider it went to.
    pub provider_id: ProviderId,
    /// What was stored.
    pub before: VerdictView,
    /// What the current catalogue says.
    pub after: VerdictView,
}
