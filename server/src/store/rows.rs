//! The rows both drivers read, and their conversion to domain types: the
//! tables are the same on SQLite and PostgreSQL (integers, booleans, text and
//! JSON text), so one `FromRow` type serves both. Each driver keeps its own SQL.

use api::{AttemptId, CandidateId, ProfileId, ProviderId, Revision, TaskId, Timestamp, refusals};
use policy::route::{Route, RouteCause};
use policy::{Decision, Episode, EscalationSettings, PolicyDocument};
use providers::{SimulatedStep, Timeouts};
use sqlx::FromRow;

use crate::domain::{
    Attempt, AttemptEnd, AttemptOutcome, Candidate, Circuit, CircuitHistoryEntry,
    CircuitHistoryKind, CircuitKey, CircuitWait, Failure, GatewayCall, PassedOver, Pause, Producer,
    Profile, Progress, Provider, ProviderWrite, RouteRecord, Task, Turn, Verdict,
};
use crate::store::StoreError;

/// A table whose rows carry a revision, and what people call its rows.
#[derive(Debug, Clone, Copy)]
pub(super) enum Revisioned {
    Providers,
    Profiles,
}

impl Revisioned {
    pub(super) fn entity(self) -> &'static str {
        match self {
            Self::Providers => "provider",
            Self::Profiles => "profile",
        }
    }

    pub(super) fn not_found(self, id: &str) -> StoreError {
        StoreError::NotFound {
            entity: self.entity(),
            id: id.to_owned(),
        }
    }

    /// The refusal of a name that another row of this table has.
    pub(super) fn name_taken(self) -> StoreError {
        StoreError::Invalid(vec![refusals::name_taken(self.entity())])
    }

    /// A write's error, where a unique violation (of the name: ids are new)
    /// is the refusal of a taken name.
    pub(super) fn name_race(self) -> impl Fn(sqlx::Error) -> StoreError {
        move |error| {
            if is_unique_violation(&error) {
                self.name_taken()
            } else {
                error.into()
            }
        }
    }
}

/// The revision a fenced update found instead of `sent`: `Stale`, or the row is
/// gone. The one place the two are told apart.
pub(super) fn stale_or_missing(
    table: Revisioned,
    id: &str,
    sent: Revision,
    current: Option<i64>,
) -> StoreError {
    match current {
        Some(current) => StoreError::Stale {
            sent,
            current: Revision::new(current),
        },
        None => table.not_found(id),
    }
}

/// "1 unfinished task", "3 unfinished tasks".
pub(super) fn unfinished_users(count: i64) -> String {
    match count {
        1 => "1 unfinished task (stop it or let it finish)".to_owned(),
        _ => format!("{count} unfinished tasks (stop them or let them finish)"),
    }
}

pub(super) fn corrupt(what: &'static str) -> impl Fn(serde_json::Error) -> StoreError {
    move |error| StoreError::Corrupt {
        what,
        message: error.to_string(),
    }
}

pub(super) fn not_found(id: &TaskId) -> StoreError {
    StoreError::NotFound {
        entity: "task",
        id: id.as_str().to_owned(),
    }
}

pub(super) fn to_u32(what: &'static str, value: i64) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|_| StoreError::Corrupt {
        what,
        message: value.to_string(),
    })
}

/// The first `limit` routes by task id of pages read a state at a time.
pub(super) fn first_by_task(mut page: Vec<RouteRecord>, limit: u32) -> Vec<RouteRecord> {
    page.sort_unstable_by(|a, b| a.task_id.as_str().cmp(b.task_id.as_str()));
    page.truncate(limit as usize);
    page
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| unreachable!("domain values serialize"))
}

#[derive(FromRow)]
pub(super) struct TaskRow {
    pub(super) id: String,
    pub(super) profile_id: String,
    pub(super) profile_name: String,
    pub(super) created_at_ms: i64,
    pub(super) kind: String,
    pub(super) request_json: Option<String>,
    pub(super) respond_by_ms: Option<i64>,
}

/// The columns of a [`TaskRow`] (of the table `tasks` named `tasks`), for
/// `concat!` (sqlx takes only literal SQL).
macro_rules! task_columns {
    () => {
        "tasks.id, tasks.profile_id, tasks.profile_name, tasks.created_at_ms, tasks.kind, \
         tasks.request_json, tasks.respond_by_ms"
    };
}
pub(crate) use task_columns;

/// A gateway call's request as the `tasks` row keeps it.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredRequest {
    wire: String,
    stream: bool,
    body: serde_json::Value,
}

/// What a task's row keeps of its gateway call: its kind, its request as JSON,
/// and its deadline.
pub(super) fn gateway_columns(task: &Task) -> (&'static str, Option<String>, Option<i64>) {
    let request = task.gateway.as_ref().map(|call| {
        serde_json::to_string(&StoredRequest {
            wire: call.request.wire.as_str().to_owned(),
            stream: call.stream,
            body: call.request.body.clone(),
        })
        .unwrap_or_else(|_| unreachable!("JSON values serialize"))
    });
    (task.kind(), request, task.respond_by_ms())
}

impl TaskRow {
    /// The gateway call this row keeps, if it is one's.
    fn gateway(&self) -> Result<Option<std::sync::Arc<GatewayCall>>, StoreError> {
        if self.kind != "gateway" {
            return Ok(None);
        }
        let corrupt = |message: String| StoreError::Corrupt {
            what: "gateway request",
            message,
        };
        let stored: StoredRequest =
            serde_json::from_str(self.request_json.as_deref().unwrap_or(""))
                .map_err(|error| corrupt(error.to_string()))?;
        let wire = providers::Wire::from_name(&stored.wire)
            .ok_or_else(|| corrupt(format!("unknown protocol {:?}", stored.wire)))?;
        let respond_by_ms = self
            .respond_by_ms
            .ok_or_else(|| corrupt("no deadline".to_owned()))?;
        Ok(Some(std::sync::Arc::new(GatewayCall {
            request: providers::ClientRequest {
                wire,
                body: stored.body,
            },
            stream: stored.stream,
            respond_by: Timestamp::from_millis(respond_by_ms),
        })))
    }
}

#[derive(FromRow)]
pub(super) struct TaskCandidateRow {
    pub(super) candidate_id: String,
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) enabled: bool,
    pub(super) max_tokens: i64,
    pub(super) escalation_json: String,
    pub(super) policy_json: String,
}

/// The candidates' documents already read, by their JSON: the tasks of one
/// profile share their candidates' policies and escalations, so a batch of
/// snapshots reads each text once.
#[derive(Default)]
pub(super) struct ReadDocuments {
    policies: std::collections::HashMap<String, PolicyDocument>,
    escalations: std::collections::HashMap<String, EscalationSettings>,
}

/// `text` read as a `T`, or the copy read before.
fn read_once<T: Copy + serde::de::DeserializeOwned>(
    read: &mut std::collections::HashMap<String, T>,
    text: String,
    what: &'static str,
) -> Result<T, StoreError> {
    if let Some(value) = read.get(&text) {
        return Ok(*value);
    }
    let value: T = serde_json::from_str(&text).map_err(corrupt(what))?;
    read.insert(text, value);
    Ok(value)
}

impl TaskCandidateRow {
    pub(super) fn into_domain(self) -> Result<Candidate, StoreError> {
        self.into_domain_sharing(&mut ReadDocuments::default())
    }

    /// [`TaskCandidateRow::into_domain`], reading each document's text once
    /// across the rows `read` has seen.
    pub(super) fn into_domain_sharing(
        self,
        read: &mut ReadDocuments,
    ) -> Result<Candidate, StoreError> {
        Ok(Candidate {
            id: CandidateId::new(self.candidate_id),
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            enabled: self.enabled,
            max_tokens: to_u32("max_tokens", self.max_tokens)?,
            escalation: read_once(&mut read.escalations, self.escalation_json, "escalation")?,
            policy: read_once(&mut read.policies, self.policy_json, "policy")?,
        })
    }
}

#[derive(FromRow)]
pub(super) struct RouteRow {
    pub(super) task_id: String,
    pub(super) state: String,
    pub(super) generation: i64,
    pub(super) candidate_index: i64,
    pub(super) cause: Option<String>,
    pub(super) deadline_ms: Option<i64>,
    pub(super) retry_ordinal: Option<i64>,
    pub(super) decision_json: Option<String>,
    pub(super) class: Option<String>,
    pub(super) code: Option<String>,
    pub(super) catalogue: Option<String>,
    pub(super) safe_cause: Option<String>,
    pub(super) pending_outcome: Option<String>,
    pub(super) circuit_wait: bool,
    pub(super) through_circuit: bool,
    pub(super) circuit_waited: bool,
    pub(super) new_episode: bool,
    pub(super) episode_json: String,
    pub(super) turn: i64,
    pub(super) escalations: i64,
    pub(super) max_tokens: Option<i64>,
    pub(super) updated_at_ms: i64,
}

/// The columns of a [`RouteRow`], for `concat!`.
macro_rules! route_columns {
    () => {
        "task_id, state, generation, candidate_index, cause, deadline_ms, retry_ordinal, \
         decision_json, class, code, catalogue, safe_cause, pending_outcome, circuit_wait, \
         through_circuit, circuit_waited, new_episode, episode_json, turn, escalations, max_tokens, \
         updated_at_ms"
    };
}
pub(crate) use route_columns;

/// For `concat!` after a `WHERE` on `routes`: the route is not paused, neither
/// everywhere (a `pauses` row of scope `''`) nor on its current candidate's
/// provider (a row of that provider's id). The uncorrelated tests are made once
/// a statement, so with nothing paused no route's candidate is looked up.
macro_rules! not_paused {
    () => {
        " AND NOT EXISTS (SELECT 1 FROM pauses WHERE scope = '') \
         AND (NOT EXISTS (SELECT 1 FROM pauses) \
         OR NOT EXISTS (SELECT 1 FROM task_candidates JOIN pauses \
         ON pauses.scope = task_candidates.provider_id \
         WHERE task_candidates.task_id = routes.task_id \
         AND task_candidates.position = routes.candidate_index))"
    };
}
pub(crate) use not_paused;

#[derive(FromRow)]
pub(super) struct PauseRow {
    pub(super) scope: String,
    pub(super) paused_at_ms: i64,
    pub(super) name: Option<String>,
}

impl PauseRow {
    pub(super) fn into_domain(self) -> Pause {
        Pause {
            provider_id: (!self.scope.is_empty()).then(|| ProviderId::new(self.scope)),
            provider_name: self.name,
            paused_at_ms: self.paused_at_ms,
        }
    }
}

impl RouteRow {
    /// The route's columns of a row read by the [`reader`](super::reader), by name.
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            task_id: row.get("task_id")?,
            state: row.get("state")?,
            generation: row.get("generation")?,
            candidate_index: row.get("candidate_index")?,
            cause: row.get("cause")?,
            deadline_ms: row.get("deadline_ms")?,
            retry_ordinal: row.get("retry_ordinal")?,
            decision_json: row.get("decision_json")?,
            class: row.get("class")?,
            code: row.get("code")?,
            catalogue: row.get("catalogue")?,
            safe_cause: row.get("safe_cause")?,
            pending_outcome: row.get("pending_outcome")?,
            circuit_wait: row.get("circuit_wait")?,
            through_circuit: row.get("through_circuit")?,
            circuit_waited: row.get("circuit_waited")?,
            new_episode: row.get("new_episode")?,
            episode_json: row.get("episode_json")?,
            turn: row.get("turn")?,
            escalations: row.get("escalations")?,
            max_tokens: row.get("max_tokens")?,
            updated_at_ms: row.get("updated_at_ms")?,
        })
    }

    pub(super) fn into_domain(self) -> Result<RouteRecord, StoreError> {
        let failure = match (self.class, self.code) {
            (Some(class), Some(code)) => Some(Failure {
                class: parse_enum("class", &class)?,
                code: parse_enum("code", &code)?,
                catalogue: self.catalogue.unwrap_or_default(),
                safe_cause: self.safe_cause.unwrap_or_default(),
            }),
            _ => None,
        };
        let decision: Option<Decision> = self
            .decision_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(corrupt("decision"))?;
        let cause: Option<RouteCause> = self
            .cause
            .as_deref()
            .map(|cause| parse_enum("cause", cause))
            .transpose()?;
        Ok(RouteRecord {
            task_id: TaskId::new(self.task_id),
            route: Route {
                state: parse_enum("route state", &self.state)?,
                generation: self.generation,
                candidate: usize::try_from(self.candidate_index).map_err(|_| {
                    StoreError::Corrupt {
                        what: "candidate_index",
                        message: self.candidate_index.to_string(),
                    }
                })?,
                cause,
                deadline_ms: self.deadline_ms,
                retry_ordinal: self
                    .retry_ordinal
                    .map(|ordinal| to_u32("retry_ordinal", ordinal))
                    .transpose()?,
                decision,
                circuit_wait: self.circuit_wait,
                through_circuit: self.through_circuit,
                circuit_waited: self.circuit_waited,
                new_episode: self.new_episode,
                failure,
                pending_outcome: self
                    .pending_outcome
                    .as_deref()
                    .map(|outcome| parse_enum("pending_outcome", outcome))
                    .transpose()?,
                episode: serde_json::from_str::<Episode>(&self.episode_json)
                    .map_err(corrupt("episode"))?,
                turn: to_u32("turn", self.turn)?,
                escalations: to_u32("escalations", self.escalations)?,
                max_tokens: self
                    .max_tokens
                    .map(|tokens| to_u32("max_tokens", tokens))
                    .transpose()?,
            },
            updated_at: Timestamp::from_millis(self.updated_at_ms),
        })
    }
}

#[derive(FromRow)]
pub(super) struct PassedOverRow {
    pub(super) turn: i64,
    pub(super) candidate_index: i64,
    pub(super) candidate_id: String,
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) at_ms: i64,
    pub(super) code: String,
    pub(super) safe_cause: String,
    pub(super) decision_json: String,
}

/// The columns of [`PassedOverRow`], for `concat!`, in a task's order.
macro_rules! passed_over_query {
    ($parameter:literal) => {
        concat!(
            "SELECT turn, candidate_index, candidate_id, provider_id, model, at_ms, code, \
             safe_cause, decision_json FROM passed_over WHERE task_id = ",
            $parameter,
            " ORDER BY seq"
        )
    };
}
pub(super) use passed_over_query;

impl PassedOverRow {
    pub(super) fn into_domain(self) -> Result<PassedOver, StoreError> {
        Ok(PassedOver {
            turn: to_u32("turn", self.turn)?,
            candidate_index: usize::try_from(self.candidate_index).unwrap_or(usize::MAX),
            candidate_id: CandidateId::new(self.candidate_id),
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            at: Timestamp::from_millis(self.at_ms),
            code: parse_enum("code", &self.code)?,
            safe_cause: self.safe_cause,
            decision: serde_json::from_str(&self.decision_json).map_err(corrupt("decision"))?,
        })
    }
}

#[derive(FromRow)]
pub(super) struct AttemptRow {
    pub(super) id: String,
    pub(super) task_id: String,
    pub(super) seq: i64,
    pub(super) turn: i64,
    pub(super) generation: i64,
    pub(super) candidate_index: i64,
    pub(super) candidate_id: String,
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) ordinal: Option<i64>,
    pub(super) max_tokens: i64,
    pub(super) probe: bool,
    pub(super) after_circuit_wait: bool,
    pub(super) started_at_ms: i64,
    pub(super) finished_at_ms: Option<i64>,
    pub(super) outcome: Option<String>,
    pub(super) class: Option<String>,
    pub(super) code: Option<String>,
    pub(super) confidence: Option<String>,
    pub(super) catalogue: Option<String>,
    pub(super) rule: Option<String>,
    pub(super) safe_cause: Option<String>,
    pub(super) reset_at_ms: Option<i64>,
    pub(super) decision_json: Option<String>,
    pub(super) evidence_json: Option<String>,
}

impl AttemptRow {
    pub(super) fn into_domain(self) -> Result<Attempt, StoreError> {
        let end = match (self.finished_at_ms, self.outcome) {
            (Some(finished_at_ms), Some(outcome)) => {
                let verdict = match (self.class, self.code, self.confidence) {
                    (Some(class), Some(code), Some(confidence)) => Some(Verdict {
                        class: parse_enum("class", &class)?,
                        code: parse_enum("code", &code)?,
                        confidence: parse_enum("confidence", &confidence)?,
                        catalogue: self.catalogue.unwrap_or_default(),
                        rule: self.rule.unwrap_or_default(),
                        safe_cause: self.safe_cause.unwrap_or_default(),
                        reset_at_ms: self.reset_at_ms,
                    }),
                    _ => None,
                };
                Some(AttemptEnd {
                    finished_at: Timestamp::from_millis(finished_at_ms),
                    outcome: AttemptOutcome::from_name(&outcome).ok_or_else(|| {
                        StoreError::Corrupt {
                            what: "attempt outcome",
                            message: outcome.clone(),
                        }
                    })?,
                    verdict,
                    decision: self
                        .decision_json
                        .as_deref()
                        .map(serde_json::from_str)
                        .transpose()
                        .map_err(corrupt("decision"))?,
                    evidence: self
                        .evidence_json
                        .as_deref()
                        .map(serde_json::from_str)
                        .transpose()
                        .map_err(corrupt("evidence"))?,
                })
            }
            _ => None,
        };
        Ok(Attempt {
            id: AttemptId::new(self.id),
            task_id: TaskId::new(self.task_id),
            seq: to_u32("seq", self.seq)?,
            turn: to_u32("turn", self.turn)?,
            generation: self.generation,
            candidate_index: usize::try_from(self.candidate_index).unwrap_or(usize::MAX),
            candidate_id: CandidateId::new(self.candidate_id),
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            ordinal: self
                .ordinal
                .map(|ordinal| to_u32("ordinal", ordinal))
                .transpose()?,
            max_tokens: to_u32("max_tokens", self.max_tokens)?,
            probe: self.probe,
            after_circuit_wait: self.after_circuit_wait,
            started_at: Timestamp::from_millis(self.started_at_ms),
            end,
        })
    }
}

#[derive(FromRow)]
pub(super) struct TurnRow {
    pub(super) number: i64,
    pub(super) prompt: String,
    pub(super) answer: Option<String>,
    pub(super) truncated: bool,
    pub(super) candidate_index: Option<i64>,
    pub(super) candidate_id: Option<String>,
    pub(super) model: Option<String>,
    pub(super) created_at_ms: i64,
    pub(super) completed_at_ms: Option<i64>,
    pub(super) tool_calls_json: Option<String>,
}

impl TurnRow {
    pub(super) fn into_domain(self) -> Result<Turn, StoreError> {
        let producer = match (self.candidate_index, self.candidate_id, self.model) {
            (Some(index), Some(id), Some(model)) => Some(Producer {
                candidate_index: usize::try_from(index).unwrap_or(usize::MAX),
                candidate_id: CandidateId::new(id),
                model,
            }),
            _ => None,
        };
        Ok(Turn {
            number: to_u32("turn number", self.number)?,
            prompt: self.prompt,
            answer: self.answer,
            truncated: self.truncated,
            tool_calls: match self.tool_calls_json {
                Some(json) => serde_json::from_str(&json).map_err(corrupt("tool calls"))?,
                None => Vec::new(),
            },
            producer,
            created_at: Timestamp::from_millis(self.created_at_ms),
            completed_at: self.completed_at_ms.map(Timestamp::from_millis),
        })
    }
}

/// A turn as `json_array` gives it, in `TurnRow`'s order.
pub(super) type TurnTuple = (
    i64,
    String,
    Option<String>,
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
    Option<String>,
);

#[derive(FromRow)]
pub(super) struct ProgressRow {
    #[sqlx(flatten)]
    pub(super) route: RouteRow,
    pub(super) turns_json: String,
    pub(super) calls_json: String,
}

impl ProgressRow {
    pub(super) fn into_domain(self) -> Result<Progress, StoreError> {
        let turns: Vec<TurnTuple> =
            serde_json::from_str(&self.turns_json).map_err(corrupt("turns"))?;
        let calls: Vec<(i64, i64)> =
            serde_json::from_str(&self.calls_json).map_err(corrupt("calls"))?;
        Ok(Progress {
            route: self.route.into_domain()?,
            turns: turns
                .into_iter()
                .map(|turn| {
                    TurnRow {
                        number: turn.0,
                        prompt: turn.1,
                        answer: turn.2,
                        truncated: turn.3 != 0,
                        candidate_index: turn.4,
                        candidate_id: turn.5,
                        model: turn.6,
                        created_at_ms: turn.7,
                        completed_at_ms: turn.8,
                        tool_calls_json: turn.9,
                    }
                    .into_domain()
                })
                .collect::<Result<_, _>>()?,
            calls: calls
                .into_iter()
                .map(|(index, count)| {
                    Ok((
                        usize::try_from(index).unwrap_or(usize::MAX),
                        to_u32("attempt count", count)?,
                    ))
                })
                .collect::<Result<_, StoreError>>()?,
        })
    }
}

#[derive(FromRow)]
pub(super) struct CircuitRow {
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) code: String,
    pub(super) until_ms: i64,
    pub(super) probe_task_id: Option<String>,
    pub(super) opened_at_ms: i64,
}

impl CircuitRow {
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            provider_id: row.get("provider_id")?,
            model: row.get("model")?,
            code: row.get("code")?,
            until_ms: row.get("until_ms")?,
            probe_task_id: row.get("probe_task_id")?,
            opened_at_ms: row.get("opened_at_ms")?,
        })
    }

    pub(super) fn into_domain(self) -> Result<Circuit, StoreError> {
        Ok(Circuit {
            key: CircuitKey {
                provider_id: ProviderId::new(self.provider_id),
                model: (!self.model.is_empty()).then_some(self.model),
            },
            code: parse_enum("circuit code", &self.code)?,
            until_ms: self.until_ms,
            probe_task_id: self.probe_task_id.map(TaskId::new),
            opened_at_ms: self.opened_at_ms,
        })
    }
}

#[derive(FromRow)]
pub(super) struct CircuitWaitRow {
    pub(super) task_id: String,
    pub(super) code: String,
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) deadline_ms: i64,
}

impl CircuitWaitRow {
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            task_id: row.get("task_id")?,
            code: row.get("code")?,
            provider_id: row.get("provider_id")?,
            model: row.get("model")?,
            deadline_ms: row.get("deadline_ms")?,
        })
    }

    pub(super) fn into_domain(self) -> Result<CircuitWait, StoreError> {
        Ok(CircuitWait {
            task_id: TaskId::new(self.task_id),
            code: parse_enum("code", &self.code)?,
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            deadline_ms: self.deadline_ms,
        })
    }
}

#[derive(FromRow)]
pub(super) struct CircuitHistoryRow {
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) kind: String,
    pub(super) code: String,
    pub(super) until_ms: i64,
    pub(super) at_ms: i64,
    pub(super) task_id: Option<String>,
}

impl CircuitHistoryRow {
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            provider_id: row.get("provider_id")?,
            model: row.get("model")?,
            kind: row.get("kind")?,
            code: row.get("code")?,
            until_ms: row.get("until_ms")?,
            at_ms: row.get("at_ms")?,
            task_id: row.get("task_id")?,
        })
    }

    pub(super) fn into_domain(self) -> Result<CircuitHistoryEntry, StoreError> {
        Ok(CircuitHistoryEntry {
            key: CircuitKey {
                provider_id: ProviderId::new(self.provider_id),
                model: (!self.model.is_empty()).then_some(self.model),
            },
            kind: CircuitHistoryKind::from_name(&self.kind).ok_or_else(|| StoreError::Corrupt {
                what: "circuit history kind",
                message: self.kind.clone(),
            })?,
            code: parse_enum("circuit code", &self.code)?,
            until_ms: self.until_ms,
            at_ms: self.at_ms,
            task_id: self.task_id.map(TaskId::new),
        })
    }
}

/// Tasks read together, each with its candidates' rows (by task id): each
/// document's text read once for all of them.
pub(super) fn tasks_from_rows(
    tasks: Vec<TaskRow>,
    mut candidates: std::collections::HashMap<String, Vec<TaskCandidateRow>>,
) -> Result<Vec<Task>, StoreError> {
    let mut read = ReadDocuments::default();
    tasks
        .into_iter()
        .map(|row| {
            let rows = candidates.remove(&row.id).unwrap_or_default();
            let gateway = row.gateway()?;
            Ok(Task {
                id: TaskId::new(row.id),
                profile_id: ProfileId::new(row.profile_id),
                profile_name: row.profile_name,
                candidates: rows
                    .into_iter()
                    .map(|candidate| candidate.into_domain_sharing(&mut read))
                    .collect::<Result<_, _>>()?,
                created_at: Timestamp::from_millis(row.created_at_ms),
                gateway,
            })
        })
        .collect()
}

pub(super) fn task_from_rows(
    row: TaskRow,
    candidates: Vec<TaskCandidateRow>,
) -> Result<Task, StoreError> {
    let gateway = row.gateway()?;
    Ok(Task {
        id: TaskId::new(row.id),
        profile_id: ProfileId::new(row.profile_id),
        profile_name: row.profile_name,
        candidates: candidates
            .into_iter()
            .map(TaskCandidateRow::into_domain)
            .collect::<Result<_, _>>()?,
        created_at: Timestamp::from_millis(row.created_at_ms),
        gateway,
    })
}

/// The columns of a [`ProviderRow`], for `concat!` (sqlx takes only literal SQL).
macro_rules! provider_columns {
    () => {
        "id, name, kind, family, base_url, api_key_env, timeouts_json, script_json, cli_json, \
         revision, created_at_ms, updated_at_ms"
    };
}
pub(crate) use provider_columns;

#[derive(FromRow)]
pub(super) struct ProviderRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) family: String,
    pub(super) base_url: String,
    pub(super) api_key_env: Option<String>,
    pub(super) timeouts_json: Option<String>,
    pub(super) script_json: Option<String>,
    pub(super) cli_json: Option<String>,
    pub(super) revision: i64,
    pub(super) created_at_ms: i64,
    pub(super) updated_at_ms: i64,
}

impl ProviderRow {
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get("id")?,
            name: row.get("name")?,
            kind: row.get("kind")?,
            family: row.get("family")?,
            base_url: row.get("base_url")?,
            api_key_env: row.get("api_key_env")?,
            timeouts_json: row.get("timeouts_json")?,
            script_json: row.get("script_json")?,
            cli_json: row.get("cli_json")?,
            revision: row.get("revision")?,
            created_at_ms: row.get("created_at_ms")?,
            updated_at_ms: row.get("updated_at_ms")?,
        })
    }

    pub(super) fn into_domain(self) -> Result<Provider, StoreError> {
        Ok(Provider {
            kind: parse_enum("provider kind", &self.kind)?,
            family: parse_enum("provider family", &self.family)?,
            id: ProviderId::new(self.id),
            name: self.name,
            base_url: self.base_url,
            api_key_env: self.api_key_env,
            timeouts: match self.timeouts_json {
                Some(json) => serde_json::from_str(&json).map_err(|error| StoreError::Corrupt {
                    what: "provider timeouts",
                    message: error.to_string(),
                })?,
                None => Timeouts::default(),
            },
            script: match self.script_json {
                Some(json) => {
                    let value: serde_json::Value =
                        serde_json::from_str(&json).map_err(|error| StoreError::Corrupt {
                            what: "provider script",
                            message: error.to_string(),
                        })?;
                    providers::parse_script(&value).map_err(|errors| StoreError::Corrupt {
                        what: "provider script",
                        message: errors
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; "),
                    })?
                }
                None => Vec::new(),
            },
            cli: match self.cli_json {
                Some(json) => {
                    Some(
                        serde_json::from_str(&json).map_err(|error| StoreError::Corrupt {
                            what: "provider CLI settings",
                            message: error.to_string(),
                        })?,
                    )
                }
                None => None,
            },
            revision: Revision::new(self.revision),
            created_at: Timestamp::from_millis(self.created_at_ms),
            updated_at: Timestamp::from_millis(self.updated_at_ms),
        })
    }
}

/// The timeouts to store, `None` to keep (or default) them.
pub(super) fn timeouts_json(write: &ProviderWrite) -> Option<String> {
    write
        .timeouts
        .map(|timeouts| serde_json::json!(timeouts).to_string())
}

/// The CLI settings to store, `None` to keep the stored ones.
pub(super) fn cli_json(write: &ProviderWrite) -> Option<String> {
    write
        .cli
        .as_ref()
        .map(|cli| serde_json::json!(cli).to_string())
}

/// The script to store, `None` to keep the stored one.
pub(super) fn script_json(write: &ProviderWrite) -> Option<String> {
    write.script.as_ref().map(|script| {
        serde_json::Value::Array(script.iter().map(SimulatedStep::to_json).collect()).to_string()
    })
}

#[derive(FromRow)]
pub(super) struct ProfileRow {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) revision: i64,
    pub(super) gateway_deadline_s: Option<i64>,
    pub(super) created_at_ms: i64,
    pub(super) updated_at_ms: i64,
}

#[derive(FromRow)]
pub(super) struct CandidateRow {
    pub(super) id: String,
    pub(super) profile_id: String,
    pub(super) provider_id: String,
    pub(super) model: String,
    pub(super) enabled: bool,
    pub(super) max_tokens: i64,
    pub(super) escalation_json: String,
    pub(super) policy_json: String,
}

/// The columns of a [`ProfileRow`], for `concat!` (sqlx takes only literal SQL).
macro_rules! profile_columns {
    () => {
        "id, name, revision, gateway_deadline_s, created_at_ms, updated_at_ms"
    };
}
pub(crate) use profile_columns;

/// The columns of a [`CandidateRow`].
macro_rules! candidate_columns {
    () => {
        "id, profile_id, provider_id, model, enabled, max_tokens, escalation_json, policy_json"
    };
}
pub(crate) use candidate_columns;

impl ProfileRow {
    /// A profile's columns (in `profile_columns!` order) from the reader's
    /// row, starting at column `first`.
    pub(super) fn from_rusqlite(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(first)?,
            name: row.get(first + 1)?,
            revision: row.get(first + 2)?,
            gateway_deadline_s: row.get(first + 3)?,
            created_at_ms: row.get(first + 4)?,
            updated_at_ms: row.get(first + 5)?,
        })
    }
}

impl CandidateRow {
    /// A candidate's columns (in `candidate_columns!` order) from the
    /// reader's row, starting at column `first`; `None` where a join found no
    /// candidate.
    pub(super) fn from_rusqlite(
        row: &rusqlite::Row<'_>,
        first: usize,
    ) -> rusqlite::Result<Option<Self>> {
        let Some(id) = row.get::<_, Option<String>>(first)? else {
            return Ok(None);
        };
        Ok(Some(Self {
            id,
            profile_id: row.get(first + 1)?,
            provider_id: row.get(first + 2)?,
            model: row.get(first + 3)?,
            enabled: row.get(first + 4)?,
            max_tokens: row.get(first + 5)?,
            escalation_json: row.get(first + 6)?,
            policy_json: row.get(first + 7)?,
        }))
    }

    pub(super) fn into_domain(self) -> Result<Candidate, StoreError> {
        let corrupt = |what: &'static str| {
            move |error: serde_json::Error| StoreError::Corrupt {
                what,
                message: error.to_string(),
            }
        };
        Ok(Candidate {
            max_tokens: u32::try_from(self.max_tokens).map_err(|_| StoreError::Corrupt {
                what: "max_tokens",
                message: self.max_tokens.to_string(),
            })?,
            escalation: serde_json::from_str(&self.escalation_json)
                .map_err(corrupt("escalation"))?,
            policy: serde_json::from_str(&self.policy_json).map_err(corrupt("policy"))?,
            id: CandidateId::new(self.id),
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            enabled: self.enabled,
        })
    }
}

pub(super) fn profile_from_rows(
    row: ProfileRow,
    candidates: Vec<CandidateRow>,
) -> Result<Profile, StoreError> {
    Ok(Profile {
        candidates: candidates
            .into_iter()
            .map(CandidateRow::into_domain)
            .collect::<Result<_, _>>()?,
        id: ProfileId::new(row.id),
        name: row.name,
        revision: Revision::new(row.revision),
        gateway_deadline_s: row
            .gateway_deadline_s
            .and_then(|seconds| u32::try_from(seconds).ok()),
        created_at: Timestamp::from_millis(row.created_at_ms),
        updated_at: Timestamp::from_millis(row.updated_at_ms),
    })
}

/// Kinds and families are stored by their JSON names.
pub(super) fn parse_enum<T: serde::de::DeserializeOwned>(
    what: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|error| {
        StoreError::Corrupt {
            what,
            message: error.to_string(),
        }
    })
}

/// Routes counted by state, from `(state, count)` rows: those held or waiting now
/// ([`super::shared::COUNT_NEEDING_A_PERSON`]) and those of the recent tasks
/// ([`super::shared::COUNT_CREATED_SINCE`]).
pub(super) fn route_counts(
    now: Vec<(String, i64)>,
    recent: Vec<(String, i64)>,
) -> Result<crate::domain::RouteCounts, StoreError> {
    use policy::route::RouteState;
    let count = |count: i64| u32::try_from(count).unwrap_or(u32::MAX);
    let mut counts = crate::domain::RouteCounts::default();
    for (state, number) in now {
        match parse_enum::<RouteState>("route state", &state)? {
            RouteState::Held => counts.held += count(number),
            _ => counts.waiting += count(number),
        }
    }
    for (state, number) in recent {
        counts
            .created_since
            .push((parse_enum("route state", &state)?, count(number)));
    }
    Ok(counts)
}

/// The JSON name of a kind or family, as stored.
pub(super) fn enum_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => unreachable!("kinds and families serialize as strings"),
    }
}

pub(super) fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|error| error.is_unique_violation())
}
