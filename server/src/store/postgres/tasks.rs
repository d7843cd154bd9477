//! Tasks, routes, attempts, turns, shared circuits and route events in
//! PostgreSQL.
//!
//! Every route write is [`TaskStore::commit`]: one statement whose first part is
//! the route's UPDATE guarded by the generation it was computed from (`WHERE
//! task_id = … AND generation = …`), and whose every other part (the attempt, the
//! turn, the circuit and the event) happens only if that UPDATE
//! matched; so of two replicas computing from one read exactly one writes. No
//! match is a typed `StaleGeneration` carrying the route as it is now, and nothing
//! else is written. The event's public id is given after the commit, never against
//! commit order, by the sequencer ([`PostgresStore::sequence`]).

use api::{AttemptId, ProviderId, TaskCursor, TaskId};
use async_trait::async_trait;
use policy::route::RouteState;
use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::{LAPSE_MS, PostgresStore};
use crate::domain::{
    AttemptEnd, Circuit, CircuitChange, CircuitKey, FeedSender, Progress, RouteCommit, RouteRecord,
    StoredEvent, Task, TaskDetail, TaskListing, TaskWrite, Turn,
};
use crate::store::rows::{
    AttemptRow, CircuitRow, ProgressRow, RouteRow, TaskCandidateRow, TaskRow, TurnRow,
    first_by_task, not_found, parse_enum, route_columns, task_from_rows, to_json,
};
use crate::store::{StoreError, TaskStore};

/// The channel a committed stop is announced on (`GENERATION TASK_ID`), so the
/// replica with the call in flight cuts it.
pub(super) const CANCELS: &str = "switchback_route_cancels";

/// The channel a sequenced batch's last id is announced on, to be read.
pub(super) const SEQUENCED: &str = "switchback_route_events_sequenced";

/// The advisory lock that orders the event log (any constant the schema owns).
const EVENT_LOCK: i64 = 0x5357_4954_4348;

/// Events sequenced at once, at most.
pub(super) const SEQUENCE_BATCH: u64 = 4_096;

/// The states an unfinished task's route can be in, for `concat!`.
macro_rules! unfinished {
    () => {
        "('queued', 'running', 'retry_wait', 'waiting_for_reset', 'retrying', 'held')"
    };
}

/// The replicas alive now (given the parameter of the lapse in milliseconds), by
/// the database's clock, the one heartbeats are written by; for `concat!`.
macro_rules! live_replicas {
    ($lapse_ms:literal) => {
        concat!(
            "(SELECT id FROM replicas WHERE heartbeat_at_ms >= \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ",
            $lapse_ms,
            ")"
        )
    };
}

/// The routes a replica may move (given the parameters of its name and of the
/// lapse), for `concat!`: those it owns (it committed their last transition: it
/// armed their deadline, or holds their call) and those no live replica owns. Of
/// two replicas, one fires each deadline; a route whose replica went away is
/// claimed by whichever comes first (`FOR UPDATE SKIP LOCKED`), and the generation
/// fence lets one commit.
macro_rules! fired_here {
    ($replica:literal, $lapse_ms:literal) => {
        concat!(
            "(owner = ",
            $replica,
            " OR owner IS NULL OR owner NOT IN ",
            live_replicas!($lapse_ms),
            ")"
        )
    };
}

/// How many unfinished tasks were started from the profile `id`.
pub(super) async fn unfinished_tasks_using_profile(
    conn: &mut PgConnection,
    id: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT COUNT(*) FROM tasks JOIN routes ON routes.task_id = tasks.id \
         WHERE tasks.profile_id = $1 AND routes.state IN ",
        unfinished!()
    ))
    .bind(id)
    .fetch_one(&mut *conn)
    .await?)
}

/// How many unfinished tasks have the provider `id` among their candidates.
pub(super) async fn unfinished_tasks_using_provider(
    conn: &mut PgConnection,
    id: &str,
) -> Result<i64, StoreError> {
    Ok(sqlx::query_scalar(concat!(
        "SELECT COUNT(DISTINCT task_candidates.task_id) FROM task_candidates \
         JOIN routes ON routes.task_id = task_candidates.task_id \
         WHERE task_candidates.provider_id = $1 AND routes.state IN ",
        unfinished!()
    ))
    .bind(id)
    .fetch_one(&mut *conn)
    .await?)
}

async fn fetch_route(conn: &mut PgConnection, id: &str) -> Result<RouteRecord, StoreError> {
    let row: Option<RouteRow> = sqlx::query_as(concat!(
        "SELECT ",
        route_columns!(),
        " FROM routes WHERE task_id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.ok_or_else(|| not_found(&TaskId::new(id)))?
        .into_domain()
}

async fn fetch_candidates(
    conn: &mut PgConnection,
    id: &str,
) -> Result<Vec<TaskCandidateRow>, StoreError> {
    Ok(sqlx::query_as(
        "SELECT candidate_id, provider_id, model, enabled, max_tokens, escalation_json, \
         policy_json FROM task_candidates WHERE task_id = $1 ORDER BY position",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?)
}

async fn fetch_task(conn: &mut PgConnection, id: &str) -> Result<Task, StoreError> {
    let row: Option<TaskRow> = sqlx::query_as(
        "SELECT id, profile_id, profile_name, created_at_ms FROM tasks WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let row = row.ok_or_else(|| not_found(&TaskId::new(id)))?;
    let candidates = fetch_candidates(conn, id).await?;
    task_from_rows(row, candidates)
}

async fn fetch_detail(conn: &mut PgConnection, id: &str) -> Result<TaskDetail, StoreError> {
    let task = fetch_task(conn, id).await?;
    let route = fetch_route(conn, id).await?;
    let attempts: Vec<AttemptRow> = sqlx::query_as(
        "SELECT id, task_id, seq, turn, generation, candidate_index, candidate_id, provider_id, \
         model, ordinal, max_tokens, probe, after_circuit_wait, started_at_ms, finished_at_ms, \
         outcome, class, code, confidence, catalogue, rule, safe_cause, reset_at_ms, \
         decision_json, evidence_json FROM attempts WHERE task_id = $1 ORDER BY seq",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let turns: Vec<TurnRow> = sqlx::query_as(
        "SELECT number, prompt, answer, truncated, candidate_index, candidate_id, model, \
         created_at_ms, completed_at_ms FROM turns WHERE task_id = $1 ORDER BY number",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(TaskDetail {
        task,
        route,
        attempts: attempts
            .into_iter()
            .map(AttemptRow::into_domain)
            .collect::<Result<_, _>>()?,
        turns: turns
            .into_iter()
            .map(TurnRow::into_domain)
            .collect::<Result<_, _>>()?,
    })
}

/// Bind a route's values in the order of `route_columns!`, after its task id.
fn bind_route<'q>(
    query: sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>,
    record: &'q RouteRecord,
) -> sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments> {
    let route = &record.route;
    let failure = record.route.failure.as_ref();
    query
        .bind(route.state.as_str())
        .bind(route.generation)
        .bind(i64::try_from(route.candidate).unwrap_or(i64::MAX))
        .bind(route.cause.map(policy::route::RouteCause::as_str))
        .bind(route.deadline_ms)
        .bind(route.retry_ordinal.map(i64::from))
        .bind(route.decision.as_ref().map(to_json))
        .bind(failure.map(|failure| failure.class.as_str()))
        .bind(failure.map(|failure| failure.code.as_str()))
        .bind(failure.map(|failure| failure.catalogue.as_str()))
        .bind(failure.map(|failure| failure.safe_cause.as_str()))
        .bind(record.route.pending_outcome.map(|outcome| outcome.as_str()))
        .bind(route.circuit_wait)
        .bind(route.through_circuit)
        .bind(route.circuit_waited)
        .bind(route.new_episode)
        .bind(to_json(&record.route.episode))
        .bind(i64::from(record.route.turn))
        .bind(i64::from(record.route.escalations))
        .bind(record.route.max_tokens.map(i64::from))
        .bind(record.updated_at.as_millis())
}

/// The route's event, last in its transaction (its public id comes after, from
/// the sequencer).
async fn insert_event(
    conn: &mut PgConnection,
    task_id: &str,
    data_json: &str,
    now_ms: i64,
) -> Result<i64, StoreError> {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO route_events (task_id, data_json, created_at_ms) \
         VALUES ($1, $2, $3) RETURNING id",
    )
    .bind(task_id)
    .bind(data_json)
    .bind(now_ms)
    .fetch_one(&mut *conn)
    .await?;
    Ok(id)
}

async fn insert_turn(
    conn: &mut PgConnection,
    task_id: &str,
    turn: &Turn,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO turns (task_id, number, prompt, created_at_ms) VALUES ($1, $2, $3, $4)",
    )
    .bind(task_id)
    .bind(i64::from(turn.number))
    .bind(&turn.prompt)
    .bind(turn.created_at.as_millis())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Finish an attempt if nothing finished it yet: a finished attempt never changes.
async fn finish_attempt(
    conn: &mut PgConnection,
    id: &str,
    end: &AttemptEnd,
) -> Result<(), StoreError> {
    let verdict = end.verdict.as_ref();
    sqlx::query(
        "UPDATE attempts SET finished_at_ms = $1, outcome = $2, class = $3, code = $4, \
         confidence = $5, catalogue = $6, rule = $7, safe_cause = $8, reset_at_ms = $9, \
         decision_json = $10, evidence_json = $11 WHERE id = $12 AND finished_at_ms IS NULL",
    )
    .bind(end.finished_at.as_millis())
    .bind(end.outcome.as_str())
    .bind(verdict.map(|verdict| verdict.class.as_str()))
    .bind(verdict.map(|verdict| verdict.code.as_str()))
    .bind(verdict.map(|verdict| verdict.confidence.as_str()))
    .bind(verdict.map(|verdict| verdict.catalogue.as_str()))
    .bind(verdict.map(|verdict| verdict.rule.as_str()))
    .bind(verdict.map(|verdict| verdict.safe_cause.as_str()))
    .bind(verdict.and_then(|verdict| verdict.reset_at_ms))
    .bind(end.decision.as_ref().map(to_json))
    .bind(end.evidence.as_ref().map(to_json))
    .bind(id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl PostgresStore {
    /// Give every committed event not yet sequenced its public id, in one
    /// transaction holding the log's lock to its commit (so batches, and the ids in
    /// them, follow one another in commit order), and announce the batch. Answers
    /// how many it sequenced. Any replica may run it at any time: a second run
    /// waits for the first, then finds what committed since.
    pub(super) async fn sequence(&self) -> Result<u64, StoreError> {
        // Most often another replica sequenced them already: one look, no lock.
        let pending: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM route_events WHERE seq IS NULL)")
                .fetch_one(&self.pool)
                .await?;
        if !pending {
            return Ok(0);
        }
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(EVENT_LOCK)
            .execute(&mut *tx)
            .await?;
        let count: Option<i64> = sqlx::query_scalar(
            "WITH pending AS (SELECT id FROM route_events WHERE seq IS NULL ORDER BY id LIMIT $1), \
             numbered AS (SELECT id, nextval('route_event_seq') AS seq FROM pending), \
             sequenced AS (UPDATE route_events SET seq = numbered.seq FROM numbered \
             WHERE route_events.id = numbered.id RETURNING route_events.seq), \
             batch AS (SELECT COUNT(*) AS count, MAX(seq) AS last FROM sequenced \
             HAVING COUNT(*) > 0) \
             SELECT count FROM batch, LATERAL pg_notify($2, last::text)",
        )
        .bind(SEQUENCE_BATCH.cast_signed())
        .bind(SEQUENCED)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(count.map_or(0, i64::unsigned_abs))
    }

    /// The sequenced events after `after_id`, oldest first, and the oldest id kept
    /// (or, unless `exact_oldest`, the first one read when it follows `after_id`:
    /// enough to tell that nothing was pruned between).
    pub(super) async fn read_log(
        &self,
        after_id: i64,
        limit: u32,
        exact_oldest: bool,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError> {
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT seq, data_json FROM route_events WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(after_id)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        // When the next id follows on, nothing between was pruned: unless asked
        // for the oldest kept, the first is as good.
        let oldest = match rows.first() {
            Some((first, _)) if !exact_oldest && *first == after_id + 1 => Some(*first),
            _ => {
                sqlx::query_scalar("SELECT MIN(seq) FROM route_events")
                    .fetch_one(&self.pool)
                    .await?
            }
        };
        Ok((
            rows.into_iter()
                .map(|(id, data_json)| StoredEvent { id, data_json })
                .collect(),
            oldest,
        ))
    }

    /// A transition, if the route is still at `expected` (else `None`, nothing
    /// written): the route (owned by this replica from now on), its attempt, turn
    /// and circuit changes, and its event, as one statement (data-modifying
    /// common table expressions, each gated on the fenced UPDATE having matched):
    /// atomic without a transaction, and one round trip.
    pub(super) async fn write_commit(
        &self,
        expected: i64,
        commit: &RouteCommit,
    ) -> Result<Option<i64>, StoreError> {
        let record = &commit.route;
        let route = &record.route;
        let failure = record.route.failure.as_ref();
        let task_id = record.task_id.as_str();
        let now_ms = record.updated_at.as_millis();
        let mut query = QueryBuilder::<Postgres>::new("WITH ");
        if commit.fires_deadline {
            // The claim: the route still waits on a passed deadline and is this
            // replica's to fire, and no other transaction holds it (one that does
            // is firing or moving it: skipped, not waited for).
            query
                .push("claimed AS (SELECT task_id FROM routes WHERE task_id = ")
                .push_bind(task_id.to_owned())
                .push(" AND generation = ")
                .push_bind(expected)
                .push(" AND state IN ('retry_wait', 'waiting_for_reset') AND deadline_ms <= ")
                .push_bind(now_ms)
                .push(" AND (owner = ")
                .push_bind(self.replica.to_string())
                .push(" OR owner IS NULL OR owner NOT IN (SELECT id FROM replicas WHERE heartbeat_at_ms >= (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ")
                .push_bind(LAPSE_MS)
                .push(")) FOR UPDATE OF routes SKIP LOCKED), ");
        }
        query
            .push("updated AS (UPDATE routes SET state = ")
            .push_bind(route.state.as_str())
            .push(", generation = ")
            .push_bind(route.generation)
            .push(", candidate_index = ")
            .push_bind(i64::try_from(route.candidate).unwrap_or(i64::MAX))
            .push(", cause = ")
            .push_bind(route.cause.map(policy::route::RouteCause::as_str))
            .push(", deadline_ms = ")
            .push_bind(route.deadline_ms)
            .push(", retry_ordinal = ")
            .push_bind(route.retry_ordinal.map(i64::from))
            .push(", decision_json = ")
            .push_bind(route.decision.as_ref().map(to_json))
            .push(", class = ")
            .push_bind(failure.map(|failure| failure.class.as_str()))
            .push(", code = ")
            .push_bind(failure.map(|failure| failure.code.as_str()))
            .push(", catalogue = ")
            .push_bind(failure.map(|failure| failure.catalogue.clone()))
            .push(", safe_cause = ")
            .push_bind(failure.map(|failure| failure.safe_cause.clone()))
            .push(", pending_outcome = ")
            .push_bind(record.route.pending_outcome.map(|outcome| outcome.as_str()))
            .push(", circuit_wait = ")
            .push_bind(route.circuit_wait)
            .push(", through_circuit = ")
            .push_bind(route.through_circuit)
            .push(", circuit_waited = ")
            .push_bind(route.circuit_waited)
            .push(", new_episode = ")
            .push_bind(route.new_episode)
            .push(", episode_json = ")
            .push_bind(to_json(&record.route.episode))
            .push(", turn = ")
            .push_bind(i64::from(record.route.turn))
            .push(", escalations = ")
            .push_bind(i64::from(record.route.escalations))
            .push(", max_tokens = ")
            .push_bind(record.route.max_tokens.map(i64::from))
            .push(", updated_at_ms = ")
            .push_bind(now_ms)
            .push(", owner = ")
            .push_bind(self.replica.to_string())
            .push(" WHERE task_id = ")
            .push_bind(task_id.to_owned())
            .push(" AND generation = ")
            .push_bind(expected);
        if commit.fires_deadline {
            query.push(" AND task_id IN (SELECT task_id FROM claimed)");
        }
        query.push(" RETURNING task_id)");
        if let Some(attempt) = &commit.start_attempt {
            query
                .push(
                    ", started AS (INSERT INTO attempts (id, task_id, seq, turn, generation, \
                     candidate_index, candidate_id, provider_id, model, ordinal, max_tokens, probe, \
                     after_circuit_wait, started_at_ms) SELECT ",
                )
                .push_bind(attempt.id.as_str().to_owned())
                .push(", task_id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE task_id = updated.task_id), ")
                .push_bind(i64::from(attempt.turn))
                .push(", ")
                .push_bind(attempt.generation)
                .push(", ")
                .push_bind(i64::try_from(attempt.candidate_index).unwrap_or(i64::MAX))
                .push(", ")
                .push_bind(attempt.candidate_id.as_str().to_owned())
                .push(", ")
                .push_bind(attempt.provider_id.as_str().to_owned())
                .push(", ")
                .push_bind(attempt.model.clone())
                .push(", ")
                .push_bind(attempt.ordinal.map(i64::from))
                .push(", ")
                .push_bind(i64::from(attempt.max_tokens))
                .push(", ")
                .push_bind(attempt.probe)
                .push(", ")
                .push_bind(attempt.after_circuit_wait)
                .push(", ")
                .push_bind(attempt.started_at.as_millis())
                .push(" FROM updated)");
        }
        if let Some((id, end)) = &commit.finish_attempt {
            let verdict = end.verdict.as_ref();
            query
                .push(", finished AS (UPDATE attempts SET finished_at_ms = ")
                .push_bind(end.finished_at.as_millis())
                .push(", outcome = ")
                .push_bind(end.outcome.as_str())
                .push(", class = ")
                .push_bind(verdict.map(|verdict| verdict.class.as_str()))
                .push(", code = ")
                .push_bind(verdict.map(|verdict| verdict.code.as_str()))
                .push(", confidence = ")
                .push_bind(verdict.map(|verdict| verdict.confidence.as_str()))
                .push(", catalogue = ")
                .push_bind(verdict.map(|verdict| verdict.catalogue.clone()))
                .push(", rule = ")
                .push_bind(verdict.map(|verdict| verdict.rule.clone()))
                .push(", safe_cause = ")
                .push_bind(verdict.map(|verdict| verdict.safe_cause.clone()))
                .push(", reset_at_ms = ")
                .push_bind(verdict.and_then(|verdict| verdict.reset_at_ms))
                .push(", decision_json = ")
                .push_bind(end.decision.as_ref().map(to_json))
                .push(", evidence_json = ")
                .push_bind(end.evidence.as_ref().map(to_json))
                .push(" WHERE id = ")
                .push_bind(id.as_str().to_owned())
                .push(" AND finished_at_ms IS NULL AND EXISTS (SELECT 1 FROM updated))");
        }
        if let Some((number, answer, truncated, producer)) = &commit.complete_turn {
            query
                .push(", completed AS (UPDATE turns SET answer = ")
                .push_bind(answer.clone())
                .push(", truncated = ")
                .push_bind(*truncated)
                .push(", candidate_index = ")
                .push_bind(i64::try_from(producer.candidate_index).unwrap_or(i64::MAX))
                .push(", candidate_id = ")
                .push_bind(producer.candidate_id.as_str().to_owned())
                .push(", model = ")
                .push_bind(producer.model.clone())
                .push(", completed_at_ms = ")
                .push_bind(now_ms)
                .push(" WHERE task_id = ")
                .push_bind(task_id.to_owned())
                .push(" AND number = ")
                .push_bind(i64::from(*number))
                .push(" AND answer IS NULL AND EXISTS (SELECT 1 FROM updated))");
        }
        if let Some(turn) = &commit.new_turn {
            query
                .push(", new_turn AS (INSERT INTO turns (task_id, number, prompt, created_at_ms) SELECT task_id, ")
                .push_bind(i64::from(turn.number))
                .push(", ")
                .push_bind(turn.prompt.clone())
                .push(", ")
                .push_bind(turn.created_at.as_millis())
                .push(" FROM updated)");
        }
        match &commit.circuit {
            Some(CircuitChange::Open {
                key,
                code,
                until_ms,
            }) => {
                query
                    .push(
                        ", circuit AS (INSERT INTO circuits (provider_id, model, code, class, \
                         until_ms, probe_task_id, opened_at_ms) SELECT ",
                    )
                    .push_bind(key.provider_id.as_str().to_owned())
                    .push(", ")
                    .push_bind(key.model.clone().unwrap_or_default())
                    .push(", ")
                    .push_bind(code.as_str())
                    .push(", ")
                    .push_bind(code.class().as_str())
                    .push(", ")
                    .push_bind(*until_ms)
                    .push(", NULL, ")
                    .push_bind(now_ms)
                    .push(
                        " FROM updated ON CONFLICT (provider_id, model) DO UPDATE SET \
                         code = excluded.code, class = excluded.class, \
                         until_ms = GREATEST(circuits.until_ms, excluded.until_ms), \
                         probe_task_id = NULL)",
                    );
            }
            Some(CircuitChange::Close { provider_id, model }) => {
                query
                    .push(", circuit AS (DELETE FROM circuits WHERE provider_id = ")
                    .push_bind(provider_id.as_str().to_owned())
                    .push(" AND model IN ('', ")
                    .push_bind(model.clone())
                    .push(") AND EXISTS (SELECT 1 FROM updated))");
            }
            Some(CircuitChange::Release { provider_id, model }) => {
                query
                    .push(", circuit AS (DELETE FROM circuits WHERE provider_id = ")
                    .push_bind(provider_id.as_str().to_owned())
                    .push(" AND model IN ('', ")
                    .push_bind(model.clone())
                    .push(") AND until_ms <= ")
                    .push_bind(now_ms)
                    .push(" AND EXISTS (SELECT 1 FROM updated))");
            }
            None => {}
        }
        query
            .push(
                ", event AS (INSERT INTO route_events (task_id, data_json, created_at_ms) \
                 SELECT task_id, ",
            )
            .push_bind(commit.event_json.to_string())
            .push(", ")
            .push_bind(now_ms)
            .push(" FROM updated RETURNING id) SELECT id FROM event");
        Ok(query
            .build_query_scalar::<i64>()
            .fetch_optional(&self.pool)
            .await?)
    }

    /// A new task, or `None` when its idempotency key was taken first (nothing
    /// written).
    async fn write_task(
        &self,
        conn: &mut PgConnection,
        write: &TaskWrite,
    ) -> Result<Option<i64>, StoreError> {
        let task = &write.task;
        let id = task.id.as_str();
        let inserted = sqlx::query(
            "INSERT INTO tasks (id, profile_id, profile_name, idempotency_key, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(id)
        .bind(task.profile_id.as_str())
        .bind(&task.profile_name)
        .bind(&write.idempotency_key)
        .bind(task.created_at.as_millis())
        .execute(&mut *conn)
        .await
        .map_err(|error| {
            if crate::store::rows::is_unique_violation(&error) {
                StoreError::Corrupt {
                    what: "task id",
                    message: "repeated".to_owned(),
                }
            } else {
                error.into()
            }
        })?;
        if inserted.rows_affected() == 0 {
            return Ok(None);
        }
        for (position, candidate) in task.candidates.iter().enumerate() {
            sqlx::query(
                "INSERT INTO task_candidates (task_id, position, candidate_id, provider_id, \
                 model, enabled, max_tokens, escalation_json, policy_json) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(candidate.id.as_str())
            .bind(candidate.provider_id.as_str())
            .bind(&candidate.model)
            .bind(candidate.enabled)
            .bind(i64::from(candidate.max_tokens))
            .bind(to_json(&candidate.escalation))
            .bind(to_json(&candidate.policy))
            .execute(&mut *conn)
            .await?;
        }
        bind_route(
            sqlx::query(concat!(
                "INSERT INTO routes (",
                route_columns!(),
                ", owner) VALUES ($22, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, \
                 $14, $15, $16, $17, $18, $19, $20, $21, $23)"
            )),
            &write.route,
        )
        .bind(id)
        .bind(self.replica.as_ref())
        .execute(&mut *conn)
        .await?;
        insert_turn(conn, id, &write.turn).await?;
        insert_event(conn, id, &write.event_json, task.created_at.as_millis())
            .await
            .map(Some)
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    fn attach_feed(&self, feed: FeedSender) {
        self.start_pump(feed);
    }

    async fn task_by_idempotency_key(&self, key: &str) -> Result<Option<TaskDetail>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let id: Option<String> =
            sqlx::query_scalar("SELECT id FROM tasks WHERE idempotency_key = $1")
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
        let mut tx = self.pool.begin().await?;
        match self.write_task(&mut tx, &write).await? {
            Some(event_id) => {
                tx.commit().await?;
                self.committed.notify_one();
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
            None => {
                tx.rollback().await?;
                let key = write.idempotency_key.as_deref().unwrap_or_default();
                match self.task_by_idempotency_key(key).await? {
                    Some(first) => Ok((first, None)),
                    None => Err(StoreError::Corrupt {
                        what: "idempotency key",
                        message: "taken by no task".to_owned(),
                    }),
                }
            }
        }
    }

    async fn get_task(&self, id: &TaskId) -> Result<TaskDetail, StoreError> {
        let mut tx = self.pool.begin().await?;
        let detail = fetch_detail(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(detail)
    }

    async fn get_route(&self, id: &TaskId) -> Result<RouteRecord, StoreError> {
        let mut conn = self.pool.acquire().await?;
        fetch_route(&mut conn, id.as_str()).await
    }

    async fn get_snapshot(&self, id: &TaskId) -> Result<Task, StoreError> {
        let mut tx = self.pool.begin().await?;
        let task = fetch_task(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(task)
    }

    async fn get_progress(&self, id: &TaskId) -> Result<Progress, StoreError> {
        // One statement (one snapshot, one round trip): the turns and the calls
        // come along as JSON arrays, shaped as the SQLite driver's.
        let row: Option<ProgressRow> = sqlx::query_as(concat!(
            "SELECT ",
            route_columns!(),
            ", (SELECT COALESCE(json_agg(json_build_array(number, prompt, answer, \
             truncated::int, candidate_index, candidate_id, model, created_at_ms, \
             completed_at_ms) ORDER BY number), '[]')::text FROM turns \
             WHERE turns.task_id = routes.task_id) AS turns_json, \
             (SELECT COALESCE(json_agg(json_build_array(candidate_index, calls)), '[]')::text \
             FROM (SELECT candidate_index, COUNT(*) AS calls FROM attempts \
             WHERE attempts.task_id = routes.task_id GROUP BY candidate_index) AS counted) \
             AS calls_json FROM routes WHERE task_id = $1"
        ))
        .bind(id.as_str())
        .fetch_optional(&self.pool)
        .await?;
        row.ok_or_else(|| not_found(id))?.into_domain()
    }

    async fn list_tasks(
        &self,
        state: Option<RouteState>,
        cursor: Option<TaskCursor>,
        limit: u32,
    ) -> Result<Vec<TaskListing>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let mut query = QueryBuilder::<Postgres>::new(
            "SELECT tasks.id, tasks.profile_id, tasks.profile_name, tasks.created_at_ms \
             FROM tasks JOIN routes ON routes.task_id = tasks.id WHERE 1 = 1",
        );
        if let Some(state) = state {
            query.push(" AND routes.state = ").push_bind(state.as_str());
        }
        if let Some(cursor) = &cursor {
            query
                .push(" AND (tasks.created_at_ms, tasks.id) < (")
                .push_bind(cursor.created_at_ms)
                .push(", ")
                .push_bind(cursor.id.as_str().to_owned())
                .push(")");
        }
        query
            .push(" ORDER BY tasks.created_at_ms DESC, tasks.id DESC LIMIT ")
            .push_bind(i64::from(limit));
        let rows: Vec<TaskRow> = query.build_query_as().fetch_all(&mut *tx).await?;
        let mut listings = Vec::with_capacity(rows.len());
        for row in rows {
            let id = row.id.clone();
            let candidates = fetch_candidates(&mut tx, &id).await?;
            let route = fetch_route(&mut tx, &id).await?;
            let prompt: String =
                sqlx::query_scalar("SELECT prompt FROM turns WHERE task_id = $1 AND number = 1")
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
        match self.write_commit(expected_generation, &commit).await? {
            Some(event_id) => {
                // Durable: the engine's effects. The event reaches the feed once
                // sequenced, in id order, with every replica's (`pump`).
                self.committed.notify_one();
                commit.after.run(event_id);
                Ok(event_id)
            }
            None => Err(StoreError::StaleGeneration {
                sent: expected_generation,
                current: Box::new(self.get_route(&commit.route.task_id).await?),
            }),
        }
    }

    async fn finish_attempt(&self, id: &AttemptId, end: &AttemptEnd) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        finish_attempt(&mut conn, id.as_str(), end).await
    }

    async fn due_routes(&self, now_ms: i64, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        let rows: Vec<RouteRow> = sqlx::query_as(concat!(
            "SELECT ",
            route_columns!(),
            " FROM routes WHERE deadline_ms IS NOT NULL AND deadline_ms <= $1 \
             AND state IN ('retry_wait', 'waiting_for_reset') AND ",
            fired_here!("$3", "$4"),
            " ORDER BY deadline_ms LIMIT $2"
        ))
        .bind(now_ms)
        .bind(i64::from(limit))
        .bind(self.replica.as_ref())
        .bind(LAPSE_MS)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(RouteRow::into_domain).collect()
    }

    async fn next_deadline(&self, after_ms: i64) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(concat!(
            "SELECT MIN(deadline_ms) FROM routes WHERE deadline_ms IS NOT NULL \
             AND deadline_ms > $1 AND state IN ('retry_wait', 'waiting_for_reset') AND ",
            fired_here!("$2", "$3")
        ))
        .bind(after_ms)
        .bind(self.replica.as_ref())
        .bind(LAPSE_MS)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn routes_in(
        &self,
        states: &[RouteState],
        limit: u32,
        after: Option<TaskId>,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        // A page of each state from the index by (state, task id), merged. Not
        // another live replica's: its calls are in flight, its queue its own.
        let after = after.as_ref().map_or("", TaskId::as_str);
        let mut page = Vec::new();
        for state in states {
            let rows: Vec<RouteRow> = sqlx::query_as(concat!(
                "SELECT ",
                route_columns!(),
                " FROM routes WHERE state = $1 AND task_id > $2 AND ",
                fired_here!("$4", "$5"),
                " ORDER BY task_id LIMIT $3"
            ))
            .bind(state.as_str())
            .bind(after)
            .bind(i64::from(limit))
            .bind(self.replica.as_ref())
            .bind(LAPSE_MS)
            .fetch_all(&self.pool)
            .await?;
            for row in rows {
                page.push(row.into_domain()?);
            }
        }
        Ok(first_by_task(page, limit))
    }

    fn is_shared(&self) -> bool {
        true
    }

    async fn announce_cancel(&self, task_id: &TaskId, generation: i64) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CANCELS)
            .bind(format!("{generation} {task_id}"))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn adopt_orphans(
        &self,
        states: &[RouteState],
        limit: u32,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        // Taken in one statement: of two replicas adopting at once, each route goes
        // to one (the other skips the rows the first has locked).
        let names: Vec<&str> = states.iter().map(|state| state.as_str()).collect();
        let rows: Vec<RouteRow> = sqlx::query_as(concat!(
            "UPDATE routes SET owner = $1 WHERE task_id IN (SELECT task_id FROM routes \
             WHERE state = ANY($2) AND owner IS DISTINCT FROM $1 AND (owner IS NULL OR owner \
             NOT IN ",
            live_replicas!("$3"),
            ") ORDER BY task_id LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING ",
            route_columns!()
        ))
        .bind(self.replica.as_ref())
        .bind(names)
        .bind(LAPSE_MS)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
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
        let rows: Vec<CircuitRow> = sqlx::query_as(
            "SELECT provider_id, model, code, until_ms, probe_task_id FROM circuits \
             WHERE provider_id = $1 AND model IN ('', $2) ORDER BY until_ms DESC",
        )
        .bind(provider_id.as_str())
        .bind(model)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(CircuitRow::into_domain).collect()
    }

    async fn claim_probe(
        &self,
        key: &CircuitKey,
        task_id: &TaskId,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        // A claim holds while its route is running (its attempt in flight) or about
        // to be; a route that moved on (stopped, held, waiting) no longer probes.
        let claimed = sqlx::query(
            "UPDATE circuits SET probe_task_id = $1 WHERE provider_id = $2 AND model = $3 \
             AND until_ms <= $4 AND (probe_task_id IS NULL OR probe_task_id = $1 OR probe_task_id \
             NOT IN (SELECT task_id FROM routes WHERE state IN ('running', 'retrying', 'queued')))",
        )
        .bind(task_id.as_str())
        .bind(key.provider_id.as_str())
        .bind(key.model.as_deref().unwrap_or(""))
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(claimed.rows_affected() == 1)
    }

    async fn release_probes(&self) -> Result<(), StoreError> {
        // Only the claims of routes no live replica owns: another replica's probe
        // may be in flight.
        sqlx::query(concat!(
            "UPDATE circuits SET probe_task_id = NULL WHERE probe_task_id IN \
             (SELECT task_id FROM routes WHERE ",
            fired_here!("$1", "$2"),
            ")"
        ))
        .bind(self.replica.as_ref())
        .bind(LAPSE_MS)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn events_after(
        &self,
        after_id: i64,
        limit: u32,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError> {
        // Everything committed before this read has its id first.
        self.sequence().await?;
        self.read_log(after_id, limit, true).await
    }

    async fn last_event_id(&self) -> Result<i64, StoreError> {
        // Everything committed before this read has its id first.
        self.sequence().await?;
        let id: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM route_events")
            .fetch_one(&self.pool)
            .await?;
        Ok(id.unwrap_or(0))
    }

    async fn prune_events(&self, keep: i64) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM route_events WHERE seq <= (SELECT MAX(seq) FROM route_events) - $1",
        )
        .bind(keep)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
