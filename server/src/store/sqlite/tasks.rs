//! Tasks, routes, attempts, turns, shared circuits and route events in SQLite.
//!
//! Reads go through the sqlx pool, but for the engine's point reads (a route, its
//! progress, its circuits, the due routes), which run in place
//! ([`reader`](super::reader)); every
//! write goes through the task writer
//! ([`writer`]). Every route write is [`TaskStore::commit`]: one savepoint in the
//! writer's batch, whose first statement is the route's UPDATE guarded by the
//! generation it was computed from (`WHERE task_id = ? AND generation = ?`). Zero
//! rows is a typed `StaleGeneration` carrying the route as it is now, and nothing
//! else is written.

use api::{AttemptId, CandidateId, ProfileId, ProviderId, TaskCursor, TaskId, Timestamp};
use async_trait::async_trait;
use policy::route::{Route, RouteCause, RouteState};
use policy::{Decision, Episode};
use rusqlite::{OptionalExtension, params};
use sqlx::{FromRow, QueryBuilder, Sqlite, SqliteConnection};

#[cfg(doc)]
use super::reader;
use super::{SqliteStore, parse_enum, writer};
use crate::domain::{
    Attempt, AttemptEnd, AttemptOutcome, Candidate, Circuit, CircuitKey, Failure, Producer,
    Progress, RouteCommit, RouteRecord, StoredEvent, Task, TaskDetail, TaskListing, TaskWrite,
    Turn, Verdict,
};
use crate::store::{StoreError, TaskStore};

fn corrupt(what: &'static str) -> impl Fn(serde_json::Error) -> StoreError {
    move |error| StoreError::Corrupt {
        what,
        message: error.to_string(),
    }
}

fn not_found(id: &TaskId) -> StoreError {
    StoreError::NotFound {
        entity: "task",
        id: id.as_str().to_owned(),
    }
}

fn to_u32(what: &'static str, value: i64) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|_| StoreError::Corrupt {
        what,
        message: value.to_string(),
    })
}

pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| unreachable!("domain values serialize"))
}

#[derive(FromRow)]
struct TaskRow {
    id: String,
    profile_id: String,
    profile_name: String,
    created_at_ms: i64,
}

#[derive(FromRow)]
struct TaskCandidateRow {
    candidate_id: String,
    provider_id: String,
    model: String,
    enabled: bool,
    max_tokens: i64,
    escalation_json: String,
    policy_json: String,
}

impl TaskCandidateRow {
    fn into_domain(self) -> Result<Candidate, StoreError> {
        Ok(Candidate {
            id: CandidateId::new(self.candidate_id),
            provider_id: ProviderId::new(self.provider_id),
            model: self.model,
            enabled: self.enabled,
            max_tokens: to_u32("max_tokens", self.max_tokens)?,
            escalation: serde_json::from_str(&self.escalation_json)
                .map_err(corrupt("escalation"))?,
            policy: serde_json::from_str(&self.policy_json).map_err(corrupt("policy"))?,
        })
    }
}

#[derive(FromRow)]
struct RouteRow {
    task_id: String,
    state: String,
    generation: i64,
    candidate_index: i64,
    cause: Option<String>,
    deadline_ms: Option<i64>,
    retry_ordinal: Option<i64>,
    decision_json: Option<String>,
    class: Option<String>,
    code: Option<String>,
    catalogue: Option<String>,
    safe_cause: Option<String>,
    pending_outcome: Option<String>,
    circuit_wait: bool,
    through_circuit: bool,
    circuit_waited: bool,
    new_episode: bool,
    episode_json: String,
    turn: i64,
    escalations: i64,
    max_tokens: Option<i64>,
    updated_at_ms: i64,
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
pub(super) use route_columns;

impl RouteRow {
    /// The route's columns of a row read by the [`reader`](super::reader), by name.
    fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
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

    fn into_domain(self) -> Result<RouteRecord, StoreError> {
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
            },
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
            updated_at: Timestamp::from_millis(self.updated_at_ms),
        })
    }
}

#[derive(FromRow)]
struct AttemptRow {
    id: String,
    task_id: String,
    seq: i64,
    turn: i64,
    generation: i64,
    candidate_index: i64,
    candidate_id: String,
    provider_id: String,
    model: String,
    ordinal: Option<i64>,
    max_tokens: i64,
    probe: bool,
    after_circuit_wait: bool,
    started_at_ms: i64,
    finished_at_ms: Option<i64>,
    outcome: Option<String>,
    class: Option<String>,
    code: Option<String>,
    confidence: Option<String>,
    catalogue: Option<String>,
    rule: Option<String>,
    safe_cause: Option<String>,
    reset_at_ms: Option<i64>,
    decision_json: Option<String>,
    evidence_json: Option<String>,
}

impl AttemptRow {
    fn into_domain(self) -> Result<Attempt, StoreError> {
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
struct TurnRow {
    number: i64,
    prompt: String,
    answer: Option<String>,
    truncated: bool,
    candidate_index: Option<i64>,
    candidate_id: Option<String>,
    model: Option<String>,
    created_at_ms: i64,
    completed_at_ms: Option<i64>,
}

impl TurnRow {
    fn into_domain(self) -> Result<Turn, StoreError> {
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
            producer,
            created_at: Timestamp::from_millis(self.created_at_ms),
            completed_at: self.completed_at_ms.map(Timestamp::from_millis),
        })
    }
}

/// A turn as `json_array` gives it, in `TurnRow`'s order.
type TurnTuple = (
    i64,
    String,
    Option<String>,
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
);

#[derive(FromRow)]
struct ProgressRow {
    #[sqlx(flatten)]
    route: RouteRow,
    turns_json: String,
    calls_json: String,
}

impl ProgressRow {
    fn into_domain(self) -> Result<Progress, StoreError> {
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
struct CircuitRow {
    provider_id: String,
    model: String,
    code: String,
    until_ms: i64,
    probe_task_id: Option<String>,
}

impl CircuitRow {
    fn from_rusqlite(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            provider_id: row.get("provider_id")?,
            model: row.get("model")?,
            code: row.get("code")?,
            until_ms: row.get("until_ms")?,
            probe_task_id: row.get("probe_task_id")?,
        })
    }

    fn into_domain(self) -> Result<Circuit, StoreError> {
        Ok(Circuit {
            key: CircuitKey {
                provider_id: ProviderId::new(self.provider_id),
                model: (!self.model.is_empty()).then_some(self.model),
            },
            code: parse_enum("circuit code", &self.code)?,
            until_ms: self.until_ms,
            probe_task_id: self.probe_task_id.map(TaskId::new),
        })
    }
}

/// How many unfinished tasks were started from the profile `id`.
pub(super) async fn unfinished_tasks_using_profile(
    conn: &mut SqliteConnection,
    id: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT COUNT(*) FROM tasks JOIN routes ON routes.task_id = tasks.id \
         WHERE tasks.profile_id = ? AND routes.state IN ",
        "('queued', 'running', 'retry_wait', 'waiting_for_reset', 'retrying', 'held')"
    ))
    .bind(id)
    .fetch_one(&mut *conn)
    .await?)
}

/// How many unfinished tasks have the provider `id` among their candidates.
pub(super) async fn unfinished_tasks_using_provider(
    conn: &mut SqliteConnection,
    id: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT COUNT(DISTINCT task_candidates.task_id) FROM task_candidates \
         JOIN routes ON routes.task_id = task_candidates.task_id \
         WHERE task_candidates.provider_id = ? AND routes.state IN ",
        "('queued', 'running', 'retry_wait', 'waiting_for_reset', 'retrying', 'held')"
    ))
    .bind(id)
    .fetch_one(&mut *conn)
    .await?)
}

/// "1 unfinished task", "3 unfinished tasks".
pub(super) fn unfinished_users(count: i64) -> String {
    match count {
        1 => "1 unfinished task (stop it or let it finish)".to_owned(),
        _ => format!("{count} unfinished tasks (stop them or let them finish)"),
    }
}

async fn fetch_route(conn: &mut SqliteConnection, id: &str) -> Result<RouteRecord, StoreError> {
    let row: Option<RouteRow> = sqlx::query_as(concat!(
        "SELECT ",
        route_columns!(),
        " FROM routes WHERE task_id = ?"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.ok_or_else(|| StoreError::NotFound {
        entity: "task",
        id: id.to_owned(),
    })?
    .into_domain()
}

async fn fetch_task(conn: &mut SqliteConnection, id: &str) -> Result<Task, StoreError> {
    let row: Option<TaskRow> = sqlx::query_as(
        "SELECT id, profile_id, profile_name, created_at_ms FROM tasks WHERE id = ?",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let row = row.ok_or_else(|| StoreError::NotFound {
        entity: "task",
        id: id.to_owned(),
    })?;
    let candidates: Vec<TaskCandidateRow> = sqlx::query_as(
        "SELECT candidate_id, provider_id, model, enabled, max_tokens, escalation_json, \
         policy_json FROM task_candidates WHERE task_id = ? ORDER BY position",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    task_from_rows(row, candidates)
}

fn task_from_rows(row: TaskRow, candidates: Vec<TaskCandidateRow>) -> Result<Task, StoreError> {
    Ok(Task {
        id: TaskId::new(row.id),
        profile_id: ProfileId::new(row.profile_id),
        profile_name: row.profile_name,
        candidates: candidates
            .into_iter()
            .map(TaskCandidateRow::into_domain)
            .collect::<Result<_, _>>()?,
        created_at: Timestamp::from_millis(row.created_at_ms),
    })
}

async fn fetch_detail(conn: &mut SqliteConnection, id: &str) -> Result<TaskDetail, StoreError> {
    let task = fetch_task(conn, id).await?;
    let route = fetch_route(conn, id).await?;
    let attempts: Vec<AttemptRow> = sqlx::query_as(
        "SELECT id, task_id, seq, turn, generation, candidate_index, candidate_id, provider_id, \
         model, ordinal, max_tokens, probe, after_circuit_wait, started_at_ms, finished_at_ms, outcome, class, code, \
         confidence, catalogue, rule, safe_cause, reset_at_ms, decision_json, evidence_json \
         FROM attempts WHERE task_id = ? ORDER BY seq",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let turns = fetch_turns(conn, id).await?;
    Ok(TaskDetail {
        task,
        route,
        attempts: attempts
            .into_iter()
            .map(AttemptRow::into_domain)
            .collect::<Result<_, _>>()?,
        turns,
    })
}

async fn fetch_turns(conn: &mut SqliteConnection, id: &str) -> Result<Vec<Turn>, StoreError> {
    let turns: Vec<TurnRow> = sqlx::query_as(
        "SELECT number, prompt, answer, truncated, candidate_index, candidate_id, model, \
         created_at_ms, completed_at_ms FROM turns WHERE task_id = ? ORDER BY number",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    turns.into_iter().map(TurnRow::into_domain).collect()
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn task_by_idempotency_key(&self, key: &str) -> Result<Option<TaskDetail>, StoreError> {
        let mut tx = self.read().await?;
        let id: Option<String> =
            sqlx::query_scalar("SELECT id FROM tasks WHERE idempotency_key = ?")
                .bind(key)
                .fetch_optional(&mut *tx)
                .await?;
        let detail = match id {
            Some(id) => Some(fetch_detail(&mut tx, &id).await?),
            None => None,
        };
        tx.commit().await?;
        Ok(detail)
    }

    async fn create_task(&self, write: TaskWrite) -> Result<(TaskDetail, Option<i64>), StoreError> {
        let write = std::sync::Arc::new(write);
        let written = write.clone();
        let created = self
            .tasks
            .write_new(
                move |connection| writer::create_task(connection, &written),
                {
                    let after = write.after.clone();
                    move |created| {
                        if let writer::Created::New(event_id) = created {
                            after.run(*event_id);
                        }
                    }
                },
            )
            .await?;
        match created {
            writer::Created::New(event_id) => {
                let write = std::sync::Arc::unwrap_or_clone(write);
                Ok((
                    TaskDetail {
                        task: write.task,
                        route: write.route,
                        attempts: Vec::new(),
                        turns: vec![write.turn],
                    },
                    Some(event_id),
                ))
            }
            writer::Created::Existing(first) => {
                Ok((self.get_task(&TaskId::new(first)).await?, None))
            }
        }
    }

    async fn get_task(&self, id: &TaskId) -> Result<TaskDetail, StoreError> {
        let mut tx = self.read().await?;
        let detail = fetch_detail(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(detail)
    }

    async fn get_route(&self, id: &TaskId) -> Result<RouteRecord, StoreError> {
        self.readers.read(|connection| {
            let row = connection
                .prepare_cached(concat!(
                    "SELECT ",
                    route_columns!(),
                    " FROM routes WHERE task_id = ?"
                ))?
                .query_row([id.as_str()], RouteRow::from_rusqlite)
                .optional()?;
            row.ok_or_else(|| not_found(id))?.into_domain()
        })
    }

    async fn get_snapshot(&self, id: &TaskId) -> Result<Task, StoreError> {
        let mut tx = self.read().await?;
        let task = fetch_task(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(task)
    }

    async fn get_progress(&self, id: &TaskId) -> Result<Progress, StoreError> {
        // One statement (so one snapshot, one round trip): the turns and the calls
        // come along as JSON arrays.
        self.readers.read(|connection| {
            let row = connection
                .prepare_cached(concat!(
                    "SELECT ",
                    route_columns!(),
                    ", (SELECT json_group_array(json_array(number, prompt, answer, truncated, \
                     candidate_index, candidate_id, model, created_at_ms, completed_at_ms) \
                     ORDER BY number) FROM turns WHERE turns.task_id = routes.task_id) AS turns_json, \
                     (SELECT json_group_array(json_array(candidate_index, calls)) \
                     FROM (SELECT candidate_index, COUNT(*) AS calls FROM attempts \
                     WHERE attempts.task_id = routes.task_id GROUP BY candidate_index)) AS calls_json \
                     FROM routes WHERE task_id = ?"
                ))?
                .query_row([id.as_str()], |row| {
                    Ok(ProgressRow {
                        route: RouteRow::from_rusqlite(row)?,
                        turns_json: row.get("turns_json")?,
                        calls_json: row.get("calls_json")?,
                    })
                })
                .optional()?;
            row.ok_or_else(|| not_found(id))?.into_domain()
        })
    }

    async fn list_tasks(
        &self,
        state: Option<RouteState>,
        cursor: Option<TaskCursor>,
        limit: u32,
    ) -> Result<Vec<TaskListing>, StoreError> {
        let mut tx = self.read().await?;
        let mut query = QueryBuilder::<Sqlite>::new(
            "SELECT tasks.id, tasks.profile_id, tasks.profile_name, tasks.created_at_ms \
             FROM tasks JOIN routes ON routes.task_id = tasks.id WHERE 1 = 1",
        );
        if let Some(state) = state {
            query.push(" AND routes.state = ").push_bind(state.as_str());
        }
        if let Some(cursor) = &cursor {
            query
                .push(" AND (tasks.created_at_ms < ")
                .push_bind(cursor.created_at_ms)
                .push(" OR (tasks.created_at_ms = ")
                .push_bind(cursor.created_at_ms)
                .push(" AND tasks.id < ")
                .push_bind(cursor.id.as_str().to_owned())
                .push("))");
        }
        query
            .push(" ORDER BY tasks.created_at_ms DESC, tasks.id DESC LIMIT ")
            .push_bind(i64::from(limit));
        let rows: Vec<TaskRow> = query.build_query_as().fetch_all(&mut *tx).await?;
        let mut listings = Vec::with_capacity(rows.len());
        for row in rows {
            let id = row.id.clone();
            let candidates: Vec<TaskCandidateRow> = sqlx::query_as(
                "SELECT candidate_id, provider_id, model, enabled, max_tokens, \
                 escalation_json, policy_json FROM task_candidates WHERE task_id = ? ORDER BY position",
            )
            .bind(&id)
            .fetch_all(&mut *tx)
            .await?;
            let route = fetch_route(&mut tx, &id).await?;
            let prompt: String =
                sqlx::query_scalar("SELECT prompt FROM turns WHERE task_id = ? AND number = 1")
                    .bind(&id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .unwrap_or_default();
            listings.push(TaskListing {
                task: task_from_rows(row, candidates)?,
                route,
                prompt,
            });
        }
        tx.commit().await?;
        Ok(listings)
    }

    async fn commit(
        &self,
        expected_generation: i64,
        commit: RouteCommit,
    ) -> Result<i64, StoreError> {
        let task_id = commit.route.task_id.clone();
        let after = commit.after.clone();
        let written = self
            .tasks
            .write(
                move |connection| writer::commit(connection, expected_generation, &commit),
                move |written| {
                    if let Some(event_id) = written {
                        after.run(*event_id);
                    }
                },
            )
            .await?;
        match written {
            Some(event_id) => Ok(event_id),
            // Nothing was written: the route as it is now, read after the batch.
            None => Err(StoreError::StaleGeneration {
                sent: expected_generation,
                current: Box::new(self.get_route(&task_id).await?),
            }),
        }
    }

    async fn finish_attempt(&self, id: &AttemptId, end: &AttemptEnd) -> Result<(), StoreError> {
        let (id, end) = (id.clone(), end.clone());
        self.tasks
            .write(
                move |connection| writer::finish_attempt(connection, id.as_str(), &end),
                |()| {},
            )
            .await
    }

    async fn due_routes(&self, now_ms: i64, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(concat!(
                    "SELECT ",
                    route_columns!(),
                    " FROM routes WHERE deadline_ms IS NOT NULL AND deadline_ms <= ? \
                     AND state IN ('retry_wait', 'waiting_for_reset') ORDER BY deadline_ms LIMIT ?"
                ))?
                .query_map(params![now_ms, i64::from(limit)], RouteRow::from_rusqlite)?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn next_deadline(&self, after_ms: i64) -> Result<Option<i64>, StoreError> {
        self.readers.read(|connection| {
            Ok(connection
                .prepare_cached(
                    "SELECT MIN(deadline_ms) FROM routes WHERE deadline_ms IS NOT NULL \
                     AND deadline_ms > ? AND state IN ('retry_wait', 'waiting_for_reset')",
                )?
                .query_row([after_ms], |row| row.get(0))?)
        })
    }

    async fn routes_in(
        &self,
        states: &[RouteState],
        limit: u32,
        after: Option<TaskId>,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        let mut query = QueryBuilder::<Sqlite>::new(concat!(
            "SELECT ",
            route_columns!(),
            " FROM routes WHERE state IN ("
        ));
        let mut names = query.separated(", ");
        for state in states {
            names.push_bind(state.as_str());
        }
        query.push(")");
        if let Some(after) = after {
            query
                .push(" AND task_id > ")
                .push_bind(after.as_str().to_owned());
        }
        query
            .push(" ORDER BY task_id LIMIT ")
            .push_bind(i64::from(limit));
        let rows: Vec<RouteRow> = query.build_query_as().fetch_all(&self.pool).await?;
        rows.into_iter().map(RouteRow::into_domain).collect()
    }

    async fn count_routes(&self) -> Result<Vec<(RouteState, i64)>, StoreError> {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT state, COUNT(*) FROM routes GROUP BY state")
                .fetch_all(&self.pool)
                .await?;
        rows.into_iter()
            .map(|(state, count)| Ok((parse_enum("route state", &state)?, count)))
            .collect()
    }

    async fn circuits_over(
        &self,
        provider_id: &ProviderId,
        model: &str,
    ) -> Result<Vec<Circuit>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(
                    "SELECT provider_id, model, code, until_ms, probe_task_id FROM circuits \
                     WHERE provider_id = ? AND model IN ('', ?) ORDER BY until_ms DESC",
                )?
                .query_map(
                    params![provider_id.as_str(), model],
                    CircuitRow::from_rusqlite,
                )?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn claim_probe(
        &self,
        key: &CircuitKey,
        task_id: &TaskId,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let (key, task_id) = (key.clone(), task_id.clone());
        self.tasks
            .write(
                move |connection| writer::claim_probe(connection, &key, task_id.as_str(), now_ms),
                |_| {},
            )
            .await
    }

    async fn release_probes(&self) -> Result<(), StoreError> {
        self.tasks
            .write(
                |connection| {
                    connection
                        .prepare_cached("UPDATE circuits SET probe_task_id = NULL")?
                        .execute([])?;
                    Ok(())
                },
                |()| {},
            )
            .await
    }

    async fn events_after(
        &self,
        after_id: i64,
        limit: u32,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError> {
        let mut tx = self.read().await?;
        let oldest: Option<i64> = sqlx::query_scalar("SELECT MIN(id) FROM route_events")
            .fetch_one(&mut *tx)
            .await?;
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT id, data_json FROM route_events WHERE id > ? ORDER BY id LIMIT ?",
        )
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((
            rows.into_iter()
                .map(|(id, data_json)| StoredEvent { id, data_json })
                .collect(),
            oldest,
        ))
    }

    async fn last_event_id(&self) -> Result<i64, StoreError> {
        let id: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM route_events")
            .fetch_one(&self.pool)
            .await?;
        Ok(id.unwrap_or(0))
    }

    async fn prune_events(&self, keep: i64) -> Result<(), StoreError> {
        self.tasks
            .write(
                move |connection| {
                    connection
                        .prepare_cached(
                            "DELETE FROM route_events \
                             WHERE id <= (SELECT MAX(id) FROM route_events) - ?",
                        )?
                        .execute([keep])?;
                    Ok(())
                },
                |()| {},
            )
            .await
    }
}
