//! What needs a person, on one page: the home page's data (`GET /api/overview`).

use policy::{Class, SemanticCode};
use serde::{Deserialize, Serialize};

use crate::ids::{ProviderId, TaskId};
use crate::tasks::TaskSummary;
use crate::time::Timestamp;

/// The most held tasks, and the most waiting ones, the overview lists (the rest
/// are counted, and the task list shows them all).
pub const OVERVIEW_TASKS_MAX: u32 = 20;

/// How far back the overview counts what finished: a day.
pub const OVERVIEW_RECENT_MS: i64 = 24 * 60 * 60 * 1000;

/// `GET /api/overview`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OverviewView {
    /// The server's clock when this was read: what countdowns count from.
    pub now: Timestamp,
    /// Tasks held for a person, the newest first (at most [`OVERVIEW_TASKS_MAX`]).
    pub held: Vec<TaskSummary>,
    /// How many tasks are held in all.
    pub held_total: u32,
    /// Tasks waiting for a retry or a reset, the soonest deadline first (at most
    /// [`OVERVIEW_TASKS_MAX`]).
    pub waiting: Vec<TaskSummary>,
    /// How many tasks are waiting in all.
    pub waiting_total: u32,
    /// Every open or half-open shared circuit, the soonest to reopen first.
    pub circuits: Vec<CircuitView>,
    /// The catalogue's inbox: failures it was unsure of.
    pub inbox: InboxCount,
    /// Tasks created in the last day, by how they stand now.
    pub recent: RecentCounts,
    /// What is set up: an empty install is shown how to start.
    pub setup: SetupCounts,
}

/// An open or half-open shared circuit: a provider (or one of its models) that
/// routes wait on or skip until it reopens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitView {
    /// The provider.
    pub provider_id: ProviderId,
    /// Its name now (its id, should it be gone).
    pub provider: String,
    /// The model, for a model's circuit; absent for the whole provider's.
    pub model: Option<String>,
    /// The failure that opened it.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::SemanticCodeSchema))]
    pub code: SemanticCode,
    /// That failure's class.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ClassSchema))]
    pub class: Class,
    /// When it half-opens: one route may then probe it.
    pub until: Timestamp,
    /// Whether it is half-open now (its time has come; a probe decides).
    pub half_open: bool,
    /// The route probing it, when one is.
    pub probe_task_id: Option<TaskId>,
}

/// The catalogue's inbox, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InboxCount {
    /// Kinds of failure (provider and message) waiting to be read.
    pub groups: u32,
    /// Attempts in them.
    pub attempts: u32,
}

/// Tasks created since `since`, by the state of their route now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecentCounts {
    /// The start of the window ([`OVERVIEW_RECENT_MS`] before `now`).
    pub since: Timestamp,
    /// Completed.
    pub completed: u32,
    /// Stopped (by their policy, a person, or no candidate left).
    pub stopped: u32,
    /// Held for a person.
    pub held: u32,
    /// Still on their way: queued, running, waiting or retrying.
    pub in_progress: u32,
}

/// What the server has been given to work with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetupCounts {
    /// Providers.
    pub providers: u32,
    /// Dynamic profiles.
    pub profiles: u32,
    /// Whether any task was ever started.
    pub any_task: bool,
}
