//! The commit statements in PostgreSQL: a route's transition as one statement
//! whose first part is the route's UPDATE guarded by the generation it was
//! computed from, every other part (the attempt, the turn, the circuit and the
//! event) gated on that UPDATE having matched; and a new task with its route,
//! turn and event.

use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::{LAPSE_MS, PostgresStore};
use crate::domain::{AttemptEnd, CircuitChange, RouteCommit, RouteRecord, TaskWrite, Turn};
use crate::store::StoreError;
use crate::store::rows::{route_columns, to_json};

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
pub(super) async fn finish_attempt(
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
    /// A transition, if the route is still at `expected` (else `None`, nothing
    /// written): the route (owned by this replica from now on), its attempt, turn
    /// and circuit changes, and its event, as one statement (data-modifying
    /// common table expressions, each gated on the fenced UPDATE having matched):
    /// atomic without a transaction, and one round trip.
    pub(super) async fn write_commit(
        &self,
        conn: &mut PgConnection,
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
        if let Some(turn) = &commit.complete_turn {
            query
                .push(", completed AS (UPDATE turns SET answer = ")
                .push_bind(turn.answer.clone())
                .push(", truncated = ")
                .push_bind(turn.truncated)
                .push(", candidate_index = ")
                .push_bind(i64::try_from(turn.producer.candidate_index).unwrap_or(i64::MAX))
                .push(", candidate_id = ")
                .push_bind(turn.producer.candidate_id.as_str().to_owned())
                .push(", model = ")
                .push_bind(turn.producer.model.clone())
                .push(", completed_at_ms = ")
                .push_bind(now_ms)
                .push(", tool_calls_json = ")
                .push_bind(turn.tool_calls_json())
                .push(" WHERE task_id = ")
                .push_bind(task_id.to_owned())
                .push(" AND number = ")
                .push_bind(i64::from(turn.number))
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
        if let Some(passed) = &commit.passed_over {
            query
                .push(
                    ", passed AS (INSERT INTO passed_over (task_id, seq, turn, candidate_index, \
                     candidate_id, provider_id, model, at_ms, class, code, safe_cause, \
                     decision_json) SELECT task_id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM \
                     passed_over WHERE task_id = updated.task_id), ",
                )
                .push_bind(i64::from(passed.turn))
                .push(", ")
                .push_bind(i64::try_from(passed.candidate_index).unwrap_or(i64::MAX))
                .push(", ")
                .push_bind(passed.candidate_id.as_str().to_owned())
                .push(", ")
                .push_bind(passed.provider_id.as_str().to_owned())
                .push(", ")
                .push_bind(passed.model.clone())
                .push(", ")
                .push_bind(passed.at.as_millis())
                .push(", ")
                .push_bind(passed.code.class().as_str())
                .push(", ")
                .push_bind(passed.code.as_str())
                .push(", ")
                .push_bind(passed.safe_cause.clone())
                .push(", ")
                .push_bind(to_json(&passed.decision))
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
                query
                    .push(
                        ", opened AS (INSERT INTO circuit_history (provider_id, model, kind, \
                         code, until_ms, at_ms, task_id) SELECT ",
                    )
                    .push_bind(key.provider_id.as_str().to_owned())
                    .push(", ")
                    .push_bind(key.model.clone().unwrap_or_default())
                    .push(", 'opened', ")
                    .push_bind(code.as_str())
                    .push(", ")
                    .push_bind(*until_ms)
                    .push(", ")
                    .push_bind(now_ms)
                    .push(", task_id FROM updated)");
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
            .fetch_optional(conn)
            .await?)
    }

    /// A new task, or `None` when its idempotency key was taken first (nothing
    /// written).
    pub(super) async fn write_task(
        &self,
        conn: &mut PgConnection,
        write: &TaskWrite,
    ) -> Result<Option<i64>, StoreError> {
        let task = &write.task;
        let id = task.id.as_str();
        let (kind, request_json, respond_by_ms) = crate::store::rows::gateway_columns(task);
        let inserted = sqlx::query(
            "INSERT INTO tasks (id, profile_id, profile_name, idempotency_key, created_at_ms, \
             kind, request_json, respond_by_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(id)
        .bind(task.profile_id.as_str())
        .bind(&task.profile_name)
        .bind(&write.idempotency_key)
        .bind(task.created_at.as_millis())
        .bind(kind)
        .bind(request_json)
        .bind(respond_by_ms)
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
