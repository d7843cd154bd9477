//! Switchback's HTTP contract, written once: the request and response types
//! of the JSON API, which the server's handlers, its server functions, its
//! plain-form posts and the browser all use.
//!
//! Code map:
//!
//! - `ids`, `time`: one type per id, [`Revision`], [`Generation`] and [`Timestamp`],
//!   from the store to the browser.
//! - `providers`, `profiles`, `classify`, `tasks`, `overview`: each request type with its checks
//!   (`validator` derives for lengths, ranges and shapes; the policy crate's
//!   readers for policy documents) and each response ("view") type.
//! - [`read`]: a body read into its request type with every error at once.
//! - `error`: [`ApiError`], the one error of the contract, and its HTTP status.
//! - `openapi` (feature `openapi`): schemas written by hand, and the rules a
//!   derive cannot state.
//!
//! Nothing here does I/O or reads a clock; it builds for the browser.
//!
//! ```
//! use api::read::Read;
//! use api::{KeyEnvRules, ProviderRequest};
//! let body = serde_json::json!({"name": "", "kind": "openai", "base_url": "ftp://x", "api_key_env": "OPENAI_API_KEY"});
//! let errors = Read::<ProviderRequest>::from_json(&body)
//!     .check(|request| request.check(&KeyEnvRules::default()))
//!     .unwrap_err();
//! let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
//! assert_eq!(fields, ["name", "base_url"]);
//! ```

mod checks;
mod circuits;
mod classify;
mod cli;
mod client_keys;
mod error;
mod ids;
mod inbox;
#[cfg(feature = "server-fn")]
mod json_text;
#[cfg(feature = "openapi")]
pub mod openapi;
mod overview;
mod pauses;
mod profiles;
mod providers;
pub mod read;
mod replay;
mod tasks;
mod time;

pub use circuits::{
    CIRCUIT_HISTORY_MS, CIRCUIT_WAITING_LISTED, CircuitClosedView, CircuitHistoryView,
    CircuitsView, CloseCircuitRequest, OpenCircuitView, ProviderHistoryView,
};
pub use classify::{Classification, DroppedHint, EvidenceRequest, HintDropReason, Sent};
pub use cli::{
    COMMAND_MAX_WORDS, CliRequest, ENV_MAX_NAMES, TIME_ZONE_MAX_CHARS, WORD_MAX_CHARS,
    check as check_cli,
};
pub use client_keys::{
    CLIENT_KEY_NAME_MAX, CLIENT_KEY_PROFILES_MAX, ClientKeyCreated, ClientKeyRequest, ClientKeyView,
};
pub use error::{ApiError, refusals};
pub use ids::{
    AttemptId, CandidateId, ClientKeyId, Generation, ID_MAX_CHARS, ProfileId, ProviderId, Revision,
    RouteId, TaskId,
};
pub use inbox::{InboxGroup, InboxView, Reclassified, ReclassifyView, VerdictView};
#[cfg(feature = "server-fn")]
pub use json_text::{JsonAnswer, JsonText};
// The readers of evidence's fields and of RFC 3339 times are the policy crate's,
// which the catalogue reads evidence with too.
pub use overview::{
    CircuitView, InboxCount, OVERVIEW_RECENT_MS, OVERVIEW_TASKS_MAX, OverviewView, RecentCounts,
    SetupCounts,
};
pub use pauses::{PauseNotice, PauseRequest, PausesView, ProviderPauseView};
pub use policy::evidence::{BodyText, HeaderValue, HttpStatus, LenientJson};
pub use policy::rfc3339::RFC3339_PATTERN;
pub use policy::{ErrorCode, FieldError, FieldPath};
pub use profiles::{
    CandidateRequest, CandidateSpec, CandidateView, EscalationRequest, GATEWAY_DEADLINE_S_MAX,
    PolicyInput, ProfileRequest, ProfileSpec, ProfileView,
};
pub use providers::{
    BASE_URL_MAX_CHARS, KEY_ENV_MAX_CHARS, KeyEnvRules, ProviderRequest, ProviderSpec,
    ProviderView, TIMEOUT_MAX_MS, TimeoutsRequest,
};
pub use replay::{
    REPLAY_TASKS_DEFAULT, REPLAY_TASKS_MAX, ReplayCallView, ReplayQuery, ReplayTaskView, ReplayView,
};
pub use tasks::{
    ActionRequest, AttemptView, PROMPT_MAX_CHARS, PassedOverView, RouteView, TASK_PAGE_DEFAULT,
    TASK_PAGE_MAX, TaskCandidateView, TaskCursor, TaskKind, TaskPage, TaskQuery, TaskRequest,
    TaskSummary, TaskView, ToolCallView, TurnRequest, TurnView,
};
pub use time::{Timestamp, TimestampError};
