//! Tasks, routes, attempts, turns, shared circuits and route events in
//! PostgreSQL.
//!
//! Every route write is [`TaskStore::commit`]: one transaction whose first
//! statement is the route's UPDATE guarded by the generation it was computed from
//! (`WHERE task_id = $1 AND generation = $2`), so of two replicas computing from
//! one read exactly one writes. Zero rows is a typed `StaleGeneration` carrying
//! the route as it is now, and nothing else is written. The transaction ends by
//! taking the event log's lock, inserting the route's event and notifying the
//! replicas; the lock is held to the commit, so event ids increase in commit
//! order and a replica that has read id N has read every event before it.

use api::{AttemptId, ProviderId, TaskCursor, TaskId};
use async_trait::async_trait;
use policy::route::RouteState;
use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::PostgresStore;
use crate::domain::{
    Attempt, AttemptEnd, Circuit, CircuitChange, CircuitKey, FeedSender, Progress, RouteCommit,
    RouteRecord, StoredEvent, Task, TaskDetail, TaskListing, TaskWrite, Turn,
};
use crate::store::rows::{
    AttemptRow, CircuitRow, ProgressRow, RouteRow, TaskCandidateRow, TaskRow, TurnRow, not_found,
    parse_enum, route_columns, task_from_rows, to_json,
};
use crate::store::{StoreError, TaskStore};

/// The channel a committed event's id is announced on.
pub(super) const CHANNEL: &str = "switchback_route_events";

/// The advisory lock that orders the event log (any constant the schema owns).
const EVENT_LOCK: i64 = 0x5357_4954_4348;

/// The states an unfinished task's route can be in, for `concat!`.
macro_rules! unfinished {
    () => {
        "('queued', 'running', 'retry_wait', 'waiting_for_reset', 'retrying', 'held')"
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
    let failure = record.failure.as_ref();
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
        .bind(record.pending_outcome.map(|outcome| outcome.as_str()))
        .bind(route.circuit_wait)
        .bind(route.through_circuit)
        .bind(route.circuit_waited)
        .bind(route.new_episode)
        .bind(to_json(&record.episode))
        .bind(i64::from(record.turn))
        .bind(i64::from(record.escalations))
        .bind(record.max_tokens.map(i64::from))
        .bind(record.updated_at.as_millis())
}

/// The route's event, last in its transaction: under the log's lock (held to the
/// commit, so ids follow commit order), announced to every replica at the commit.
async fn insert_event(
    conn: &mut PgConnection,
    task_id: &str,
    data_json: &str,
    now_ms: i64,
) -> Result<i64, StoreError> {
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(EVENT_LOCK)
        .execute(&mut *conn)
        .await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO route_events (task_id, data_json, created_at_ms) VALUES ($1, $2, $3) \
         RETURNING id",
    )
    .bind(task_id)
    .bind(data_json)
    .bind(now_ms)
    .fetch_one(&mut *conn)
    .await?;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANNEL)
        .bind(id.to_string())
        .execute(&mut *conn)
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

async fn insert_attempt(conn: &mut PgConnection, attempt: &Attempt) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO attempts (id, task_id, seq, turn, generation, candidate_index, \
         candidate_id, provider_id, model, ordinal, max_tokens, probe, after_circuit_wait, \
         started_at_ms) \
         VALUES ($1, $2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE task_id = $2), \
         $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(attempt.id.as_str())
    .bind(attempt.task_id.as_str())
    .bind(i64::from(attempt.turn))
    .bind(attempt.generation)
    .bind(i64::try_from(attempt.candidate_index).unwrap_or(i64::MAX))
    .bind(attempt.candidate_id.as_str())
    .bind(attempt.provider_id.as_str())
    .bind(&attempt.model)
    .bind(attempt.ordinal.map(i64::from))
    .bind(i64::from(attempt.max_tokens))
    .bind(attempt.probe)
    .bind(attempt.after_circuit_wait)
    .bind(attempt.started_at.as_millis())
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

async fn change_circuit(
    conn: &mut PgConnection,
    change: &CircuitChange,
    now_ms: i64,
) -> Result<(), StoreError> {
    match change {
        CircuitChange::Open {
            key,
            code,
            until_ms,
        } => sqlx::query(
            "INSERT INTO circuits (provider_id, model, code, class, until_ms, probe_task_id, \
             opened_at_ms) VALUES ($1, $2, $3, $4, $5, NULL, $6) \
             ON CONFLICT (provider_id, model) DO UPDATE SET code = excluded.code, \
             class = excluded.class, until_ms = GREATEST(circuits.until_ms, excluded.until_ms), \
             probe_task_id = NULL",
        )
        .bind(key.provider_id.as_str())
        .bind(key.model.as_deref().unwrap_or(""))
        .bind(code.as_str())
        .bind(code.class().as_str())
        .bind(until_ms)
        .bind(now_ms),
        CircuitChange::Close { provider_id, model } => {
            sqlx::query("DELETE FROM circuits WHERE provider_id = $1 AND model IN ('', $2)")
                .bind(provider_id.as_str())
                .bind(model)
        }
        CircuitChange::Release { provider_id, model } => sqlx::query(
            "DELETE FROM circuits WHERE provider_id = $1 AND model IN ('', $2) AND until_ms <= $3",
        )
        .bind(provider_id.as_str())
        .bind(model)
        .bind(now_ms),
    }
    .execute(&mut *conn)
    .await?;
    Ok(())
}

impl PostgresStore {
    /// A transition, if the route is still at `expected` (else `None`, nothing
    /// written): the route (owned by this replica from now on), its attempt, turn
    /// and circuit changes, and its event.
    async fn write_commit(
        &self,
        conn: &mut PgConnection,
        expected: i64,
        commit: &RouteCommit,
    ) -> Result<Option<i64>, StoreError> {
        let record = &commit.route;
        let task_id = record.task_id.as_str();
        let updated = bind_route(
            sqlx::query(
                "UPDATE routes SET state = $1, generation = $2, candidate_index = $3, cause = $4, \
                 deadline_ms = $5, retry_ordinal = $6, decision_json = $7, class = $8, code = $9, \
                 catalogue = $10, safe_cause = $11, pending_outcome = $12, circuit_wait = $13, \
                 through_circuit = $14, circuit_waited = $15, new_episode = $16, \
                 episode_json = $17, turn = $18, escalations = $19, max_tokens = $20, \
                 updated_at_ms = $21, owner = $22 WHERE task_id = $23 AND generation = $24",
            ),
            record,
        )
        .bind(self.replica.as_ref())
        .bind(task_id)
        .bind(expected)
        .execute(&mut *conn)
        .await?;
        if updated.rows_affected() == 0 {
            return Ok(None);
        }
        let now_ms = record.updated_at.as_millis();
        if let Some(attempt) = &commit.start_attempt {
            insert_attempt(conn, attempt).await?;
        }
        if let Some((id, end)) = &commit.finish_attempt {
            finish_attempt(conn, id.as_str(), end).await?;
        }
        if let Some((number, answer, truncated, producer)) = &commit.complete_turn {
            sqlx::query(
                "UPDATE turns SET answer = $1, truncated = $2, candidate_index = $3, \
                 candidate_id = $4, model = $5, completed_at_ms = $6 \
                 WHERE task_id = $7 AND number = $8 AND answer IS NULL",
            )
            .bind(answer)
            .bind(truncated)
            .bind(i64::try_from(producer.candidate_index).unwrap_or(i64::MAX))
            .bind(producer.candidate_id.as_str())
            .bind(&producer.model)
            .bind(now_ms)
            .bind(task_id)
            .bind(i64::from(*number))
            .execute(&mut *conn)
            .await?;
        }
        if let Some(turn) = &commit.new_turn {
            insert_turn(conn, task_id, turn).await?;
        }
        if let Some(change) = &commit.circuit {
            change_circuit(conn, change, now_ms).await?;
        }
        insert_event(conn, task_id, &commit.event_json, now_ms)
            .await
            .map(Some)
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
        let mut tx = self.pool.begin().await?;
        match self
            .write_commit(&mut tx, expected_generation, &commit)
            .await?
        {
            Some(event_id) => {
                tx.commit().await?;
                // Durable: the engine's effects. The event reaches the feed through
                // the log (`pump`), in id order, with every replica's.
                commit.after.run(event_id);
                Ok(event_id)
            }
            None => {
                tx.rollback().await?;
                Err(StoreError::StaleGeneration {
                    sent: expected_generation,
                    current: Box::new(self.get_route(&commit.route.task_id).await?),
                })
            }
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
             AND state IN ('retry_wait', 'waiting_for_reset') ORDER BY deadline_ms LIMIT $2"
        ))
        .bind(now_ms)
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(RouteRow::into_domain).collect()
    }

    async fn next_deadline(&self, after_ms: i64) -> Result<Option<i64>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT MIN(deadline_ms) FROM routes WHERE deadline_ms IS NOT NULL \
             AND deadline_ms > $1 AND state IN ('retry_wait', 'waiting_for_reset')",
        )
        .bind(after_ms)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn routes_in(
        &self,
        states: &[RouteState],
        limit: u32,
        after: Option<TaskId>,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        let names: Vec<&str> = states.iter().map(|state| state.as_str()).collect();
        // Not another live replica's: its calls are in flight, its queue its own.
        let rows: Vec<RouteRow> = sqlx::query_as(concat!(
            "SELECT ",
            route_columns!(),
            " FROM routes WHERE state = ANY($1) AND ($2::text IS NULL OR task_id > $2) \
             AND (owner IS NULL OR owner = $4 OR owner NOT IN \
             (SELECT id FROM replicas WHERE heartbeat_at_ms >= $5)) \
             ORDER BY task_id LIMIT $3"
        ))
        .bind(names)
        .bind(after.as_ref().map(TaskId::as_str))
        .bind(i64::from(limit))
        .bind(self.replica.as_ref())
        .bind(self.live_since_ms())
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(RouteRow::into_domain).collect()
    }

    fn is_shared(&self) -> bool {
        true
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
             NOT IN (SELECT id FROM replicas WHERE heartbeat_at_ms >= $3)) \
             ORDER BY task_id LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING ",
            route_columns!()
        ))
        .bind(self.replica.as_ref())
        .bind(names)
        .bind(self.live_since_ms())
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
        sqlx::query(
            "UPDATE circuits SET probe_task_id = NULL WHERE probe_task_id IN \
             (SELECT task_id FROM routes WHERE owner IS NULL OR owner = $1 OR owner NOT IN \
             (SELECT id FROM replicas WHERE heartbeat_at_ms >= $2))",
        )
        .bind(self.replica.as_ref())
        .bind(self.live_since_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn events_after(
        &self,
        after_id: i64,
        limit: u32,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError> {
        let mut tx = self.pool.begin().await?;
        let oldest: Option<i64> = sqlx::query_scalar("SELECT MIN(id) FROM route_events")
            .fetch_one(&mut *tx)
            .await?;
        let rows: Vec<(i64, String)> = sqlx::query_as(
            "SELECT id, data_json FROM route_events WHERE id > $1 ORDER BY id LIMIT $2",
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
        sqlx::query("DELETE FROM route_events WHERE id <= (SELECT MAX(id) FROM route_events) - $1")
            .bind(keep)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
