//! Tasks and their routes on the wire (SPEC 6): what a client sends to start a
//! task, add a turn or act on a route, and what it gets back. The route view is
//! also the data of every live `route` event.

use policy::route::{ManualAction, RouteCause, RouteState};
use policy::{Class, Confidence, OnExhausted, SemanticCode};
use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::checks::ID_MAX;
use crate::ids::{AttemptId, CandidateId, Generation, ID_MAX_CHARS, ProfileId, ProviderId, TaskId};
use crate::time::Timestamp;

/// The longest prompt a turn may carry, in characters.
pub const PROMPT_MAX_CHARS: usize = 100_000;

// The bound in the type `validator` compares with.
const PROMPT_MAX: u64 = PROMPT_MAX_CHARS as u64;

/// A task to start: a prompt routed through a dynamic profile's candidates.
///
/// ```
/// use api::read::Read;
/// let body = serde_json::json!({"profile_id": "", "prompt": " "});
/// let errors = Read::<api::TaskRequest>::from_json(&body).check(api::TaskRequest::check).unwrap_err();
/// let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
/// assert_eq!(fields, ["profile_id", "prompt"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskRequest {
    /// The profile whose candidates (as they are now) the task uses.
    #[validate(length(min = 1, max = ID_MAX))]
    pub profile_id: ProfileId,
    /// The first turn's prompt; not blank.
    #[validate(length(min = 1, max = PROMPT_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100_000))]
    pub prompt: String,
}

impl crate::read::Request for TaskRequest {}

impl TaskRequest {
    /// Every error at once, or the request as sent.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        let mut request = self.clone();
        request.prompt = request.prompt.trim().to_owned();
        checked(request, self.validate())
    }
}

/// A follow-up turn on a completed task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TurnRequest {
    /// The turn's prompt; not blank.
    #[validate(length(min = 1, max = PROMPT_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100_000))]
    pub prompt: String,
}

impl crate::read::Request for TurnRequest {}

impl TurnRequest {
    /// Every error at once, or the request as sent.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        let mut request = self.clone();
        request.prompt = request.prompt.trim().to_owned();
        checked(request, self.validate())
    }
}

/// A person's action on a route, naming the generation they saw.
///
/// ```
/// use api::read::Read;
/// let body = serde_json::json!({"action": "retry_now", "generation": 4});
/// let action = Read::<api::ActionRequest>::from_json(&body).check(api::ActionRequest::check).unwrap();
/// assert_eq!(action.action, policy::route::ManualAction::RetryNow);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActionRequest {
    /// `retry_now`, `skip_now`, `cancel_wait` or `stop`.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ManualActionSchema))]
    pub action: ManualAction,
    /// The route's generation as the client saw it; another one is a 409.
    #[validate(range(min = 0))]
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub generation: i64,
}

impl crate::read::Request for ActionRequest {}

impl ActionRequest {
    /// Every error at once, or the request as sent.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        checked(*self, self.validate())
    }
}

/// `value` when `result` holds no error, every error otherwise.
fn checked<T>(
    value: T,
    result: Result<(), validator::ValidationErrors>,
) -> Result<T, Vec<policy::FieldError>> {
    let errors = crate::checks::field_errors(result, &policy::FieldPath::root());
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors)
    }
}

/// A route as clients see it: on a task, in a 409, and as the data of a live
/// `route` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RouteView {
    /// The task the route belongs to.
    pub task_id: TaskId,
    /// Where the route is (SPEC 5).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::RouteStateSchema))]
    pub state: RouteState,
    /// Bumped by every transition; actions must name it.
    pub generation: Generation,
    /// The current candidate's position in the task's snapshot, from 0.
    pub candidate_index: u32,
    /// The current candidate's id.
    pub candidate_id: CandidateId,
    /// The current candidate's model.
    pub model: String,
    /// When the pending wait ends (`retry_wait`, `waiting_for_reset`).
    pub deadline: Option<Timestamp>,
    /// Whether the pending wait is a shared circuit's rather than the route's own.
    pub circuit_wait: bool,
    /// The class of the last failure.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::ClassSchema>))]
    pub class: Option<Class>,
    /// The semantic code of the last failure.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::SemanticCodeSchema>))]
    pub code: Option<SemanticCode>,
    /// The catalogue version that classified it.
    pub catalogue: Option<String>,
    /// The provider's message with secrets removed.
    pub safe_cause: Option<String>,
    /// The pending (or dispatching) retry's ordinal.
    pub retry_ordinal: Option<u32>,
    /// The most retries the section of the last failure allows.
    pub max_retries: Option<u32>,
    /// What happens when the policy is exhausted for the last failure: `skip` or `stop`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub pending_outcome: Option<OnExhausted>,
    /// The last decision: `wait_for_reset`, `retry`, `skip`, `stop` or `hold`.
    pub decision: Option<String>,
    /// Why the route is `held` or `stopped`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::RouteCauseSchema>))]
    pub cause: Option<RouteCause>,
    /// The turn in progress (or the last one completed), from 1.
    pub turn: u32,
    /// The actions valid now, as the route machine accepts them.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<crate::openapi::ManualActionSchema>))]
    pub actions: Vec<ManualAction>,
    /// When the route last changed.
    pub updated_at: Timestamp,
}

/// One attempt: a call to one candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AttemptView {
    /// Stable id.
    pub id: AttemptId,
    /// The turn it served, from 1.
    pub turn: u32,
    /// The candidate's position in the task's snapshot.
    pub candidate_index: u32,
    /// The candidate's id.
    pub candidate_id: CandidateId,
    /// The model called.
    pub model: String,
    /// The retry it dispatched, if it was one.
    pub ordinal: Option<u32>,
    /// The token budget it asked for.
    pub max_tokens: u32,
    /// Whether it probed a half-open circuit.
    pub probe: bool,
    /// Whether its route waited on an open circuit (its provider's or its model's)
    /// since the attempt before it: the time between them was, at least in part,
    /// that circuit's wait.
    pub after_circuit_wait: bool,
    /// When it was recorded as started (before the request was sent).
    pub started_at: Timestamp,
    /// When it finished; absent while in flight.
    pub finished_at: Option<Timestamp>,
    /// `answered`, `truncated`, `escalated`, `failed`, `cancelled`, `interrupted` or
    /// `superseded`; absent while in flight.
    pub outcome: Option<String>,
    /// The failure's class.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::ClassSchema>))]
    pub class: Option<Class>,
    /// The failure's semantic code.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::SemanticCodeSchema>))]
    pub code: Option<SemanticCode>,
    /// How sure the catalogue was: `high`, `medium` (only words any provider may
    /// use decided) or `low` (its rules disagreed).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::ConfidenceSchema>))]
    pub confidence: Option<Confidence>,
    /// The catalogue version that classified it.
    pub catalogue: Option<String>,
    /// The provider's message with secrets removed.
    pub safe_cause: Option<String>,
    /// When the provider said its limit resets.
    pub reset_at: Option<Timestamp>,
    /// The decision taken on it.
    pub decision: Option<String>,
}

/// A candidate the route passed over without calling it: its circuit was open past
/// the candidate's own wait (or a gateway caller's deadline), or it could not carry a
/// gateway client's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PassedOverView {
    /// The turn the route was on, from 1.
    pub turn: u32,
    /// The candidate's position in the task's snapshot.
    pub candidate_index: u32,
    /// The candidate's id.
    pub candidate_id: CandidateId,
    /// Its model.
    pub model: String,
    /// When the route passed it over.
    pub at: Timestamp,
    /// The code of what stood in the way (the open circuit's).
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::SemanticCodeSchema))]
    pub code: SemanticCode,
    /// Why, in a sentence: "Not sent: Claude Code's usage window reopens in 3 h …".
    pub safe_cause: String,
    /// What the route did instead: `skip`, `stop` or `hold`.
    pub decision: String,
}

/// One turn: a prompt, and the answer with the candidate that produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TurnView {
    /// From 1.
    pub number: u32,
    /// What was asked.
    pub prompt: String,
    /// The answer; absent until the turn completes.
    pub answer: Option<String>,
    /// Whether the answer stopped at its token budget.
    pub truncated: bool,
    /// The tool calls the answer made (a gateway call that offered tools), in
    /// order; absent when it made none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallView>,
    /// The position of the candidate that produced the answer.
    pub candidate_index: Option<u32>,
    /// The id of the candidate that produced the answer.
    pub candidate_id: Option<CandidateId>,
    /// The model that produced the answer.
    pub model: Option<String>,
    /// When the turn was asked.
    pub created_at: Timestamp,
    /// When its answer was stored.
    pub completed_at: Option<Timestamp>,
}

/// A tool call in an answer: the model asked its client to run `name` with
/// `arguments`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ToolCallView {
    /// The provider's id for the call.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, JSON text as the model wrote it.
    pub arguments: String,
}

/// One candidate of a task's snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskCandidateView {
    /// Its id in the profile.
    pub id: CandidateId,
    /// The provider it dispatches to.
    pub provider_id: ProviderId,
    /// That provider's name when the task was read (its id, should the
    /// provider be gone).
    pub provider: String,
    /// For an agent-CLI provider, the time zone its printed resets ("resets
    /// 3pm") are read in: its own setting, else the server's. The route view
    /// shows a usage window's reset in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The model.
    pub model: String,
    /// Whether the route may use it.
    pub enabled: bool,
}

/// How a task was started: on the task API (`task`), or as one call of the
/// OpenAI- or Anthropic-compatible gateway (`gateway`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum TaskKind {
    /// Started on `POST /api/tasks` (or the page).
    Task,
    /// A call to `/v1/chat/completions` or `/v1/messages`.
    Gateway,
}

/// A task with its route, attempts (oldest first) and turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskView {
    /// Stable id.
    pub id: TaskId,
    /// How it was started.
    pub kind: TaskKind,
    /// The profile it was started from.
    pub profile_id: ProfileId,
    /// That profile's name when the task started.
    pub profile_name: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// The snapshot of the profile's candidates, in order.
    pub candidates: Vec<TaskCandidateView>,
    /// The route.
    pub route: RouteView,
    /// Every attempt, oldest first.
    pub attempts: Vec<AttemptView>,
    /// Every candidate passed over without a call, oldest first.
    #[serde(default)]
    pub passed_over: Vec<PassedOverView>,
    /// Every turn, first first.
    pub turns: Vec<TurnView>,
}

/// A task in a list: its route, without its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskSummary {
    /// Stable id.
    pub id: TaskId,
    /// How it was started.
    pub kind: TaskKind,
    /// The profile it was started from.
    pub profile_id: ProfileId,
    /// That profile's name when the task started.
    pub profile_name: String,
    /// When it was created.
    pub created_at: Timestamp,
    /// The first turn's prompt, cut to 200 characters.
    pub prompt: String,
    /// The route.
    pub route: RouteView,
}

/// One page of tasks, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TaskPage {
    /// The tasks.
    pub tasks: Vec<TaskSummary>,
    /// Pass as `cursor` for the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// The most tasks one page holds, and the default.
pub const TASK_PAGE_MAX: u32 = 200;
/// The tasks a page holds when `limit` is left out.
pub const TASK_PAGE_DEFAULT: u32 = 50;

/// `GET /api/tasks` query: filter by state, page through, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct TaskQuery {
    /// Only tasks whose route is in this state.
    #[cfg_attr(feature = "openapi", param(value_type = Option<crate::openapi::RouteStateSchema>))]
    pub state: Option<RouteState>,
    /// How many tasks, 1..=200 (default 50).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 200))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// What a cursor names: the last task of the previous page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCursor {
    /// Its creation time, unix milliseconds.
    pub created_at_ms: i64,
    /// Its id (ties on the time are ordered by id, descending).
    pub id: TaskId,
}

impl TaskCursor {
    /// The cursor as text: `MILLIS.ID`.
    ///
    /// ```
    /// let cursor = api::TaskCursor { created_at_ms: 12, id: api::TaskId::new("t-1") };
    /// assert_eq!(api::TaskCursor::parse(&cursor.encode()), Some(cursor));
    /// assert_eq!(api::TaskCursor::parse("nonsense"), None);
    /// ```
    pub fn encode(&self) -> String {
        format!("{}.{}", self.created_at_ms, self.id)
    }

    /// A cursor from its text, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        let (millis, id) = text.split_once('.')?;
        let created_at_ms = millis.parse().ok()?;
        (!id.is_empty() && id.len() <= ID_MAX_CHARS).then(|| Self {
            created_at_ms,
            id: TaskId::new(id),
        })
    }
}

impl TaskQuery {
    /// The page size and cursor, or the errors of `limit` and `cursor`.
    pub fn check(&self) -> Result<(u32, Option<TaskCursor>), Vec<policy::FieldError>> {
        let mut errors = Vec::new();
        let limit = self.limit.unwrap_or(TASK_PAGE_DEFAULT);
        if !(1..=TASK_PAGE_MAX).contains(&limit) {
            errors.push(policy::FieldError::new(
                &policy::FieldPath::root().field("limit"),
                policy::ErrorCode::Range,
                format!("must be between 1 and {TASK_PAGE_MAX}"),
            ));
        }
        let cursor = match &self.cursor {
            None => None,
            Some(text) => match TaskCursor::parse(text) {
                Some(cursor) => Some(cursor),
                None => {
                    errors.push(policy::FieldError::new(
                        &policy::FieldPath::root().field("cursor"),
                        policy::ErrorCode::NotFound,
                        "names no page: pass a next_cursor this server gave",
                    ));
                    None
                }
            },
        };
        if errors.is_empty() {
            Ok((limit, cursor))
        } else {
            Err(errors)
        }
    }
}
