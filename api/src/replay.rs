//! The stored calls of a candidate's provider and model, for the editor's dry run
//! (`GET /api/replay`): the last tasks that failed there, each with its calls on
//! that candidate, in order, as the draft policy is played against them.

use policy::{Confidence, SemanticCode};
use serde::{Deserialize, Serialize};

use crate::checks::{ID_MAX, MODEL_MAX};
use crate::ids::{ProviderId, TaskId};
use crate::time::Timestamp;

/// How many tasks a dry run reads when it is not told.
pub const REPLAY_TASKS_DEFAULT: u32 = 10;

/// The most tasks a dry run reads.
pub const REPLAY_TASKS_MAX: u32 = 50;

/// Which calls to read: the last `limit` tasks whose calls to `model` of
/// `provider_id` failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, validator::Validate)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
#[serde(deny_unknown_fields)]
pub struct ReplayQuery {
    /// The candidate's provider.
    #[validate(length(min = 1, max = ID_MAX, message = "names the candidate's provider"))]
    #[cfg_attr(
        feature = "openapi",
        param(value_type = String, min_length = 1, max_length = 100)
    )]
    pub provider_id: ProviderId,
    /// The candidate's model.
    #[validate(length(min = 1, max = MODEL_MAX, message = "names the candidate's model"))]
    #[cfg_attr(feature = "openapi", param(min_length = 1, max_length = 200))]
    pub model: String,
    /// How many tasks, 1 to 50 (default 10).
    #[serde(default)]
    #[validate(range(min = 1, max = REPLAY_TASKS_MAX))]
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 50))]
    pub limit: Option<u32>,
}

impl ReplayQuery {
    /// Every error at once, or the query as sent. Only what the document
    /// states is refused: a provider or model that names nothing stored
    /// (white space, say) has no calls to read.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        crate::checks::checked(self.clone())
    }
}

/// The tasks to play a draft against, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayView {
    /// Each task's calls on the candidate.
    pub tasks: Vec<ReplayTaskView>,
}

/// One task's calls on a candidate of that provider and model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayTaskView {
    /// The task.
    pub task_id: TaskId,
    /// Its profile's name when it started.
    pub profile_name: String,
    /// Its first prompt, cut to 200 characters.
    pub prompt: String,
    /// When it started.
    pub created_at: Timestamp,
    /// The candidate's place in the task's snapshot.
    pub candidate_index: u32,
    /// Whether the task had an enabled candidate after it (somewhere to skip to).
    pub has_next_candidate: bool,
    /// A gateway call's deadline: no wait that would end after it is taken.
    pub respond_by: Option<Timestamp>,
    /// Its first turn's calls on that candidate, in order, up to the one after
    /// which the route left it.
    pub calls: Vec<ReplayCallView>,
}

/// One stored call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReplayCallView {
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended.
    pub finished_at: Timestamp,
    /// `answered`, `truncated` or `failed` (a call sent again with a larger
    /// token budget is left out).
    pub outcome: String,
    /// The failure's code.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::SemanticCodeSchema>))]
    pub code: Option<SemanticCode>,
    /// How sure the catalogue was.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::ConfidenceSchema>))]
    pub confidence: Option<Confidence>,
    /// The reset the failure stated.
    pub reset_at: Option<Timestamp>,
    /// Output or a tool effect came before the failure (the route was held).
    pub unsafe_effect: bool,
    /// The decision taken then.
    pub decision: Option<String>,
    /// Where that decision sent the route next (its retry or reset time).
    pub next_at: Option<Timestamp>,
}
