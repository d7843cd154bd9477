//! Many routes at a time, in PostgreSQL: the reads take the ids as one array,
//! and transitions that write a route, an attempt's end and an event go in one
//! statement a batch: the values as arrays (`UNNEST`), the routes' fenced UPDATE
//! first, the attempts and events written only for the routes it matched. A
//! statement the database chose to end in a deadlock (two replicas taking up the
//! same routes at once) wrote nothing, and is sent again.

use std::collections::HashMap;

use api::{AttemptId, TaskId};
use async_trait::async_trait;

use super::PostgresStore;
use crate::domain::{RouteCommit, Task};
use crate::store::rows::{TaskCandidateRow, TaskRow, task_columns, tasks_from_rows, to_json};
use crate::store::{BatchStore, StoreError};

/// A candidate's row with its task's id.
#[derive(sqlx::FromRow)]
struct CandidateOf {
    task_id: String,
    #[sqlx(flatten)]
    candidate: TaskCandidateRow,
}

/// Whether a commit is of the kind one statement writes for many: a route, an
/// attempt's end, an event.
fn batchable(commit: &RouteCommit) -> bool {
    commit.start_attempt.is_none()
        && commit.complete_turn.is_none()
        && commit.new_turn.is_none()
        && commit.circuit.is_none()
        && commit.passed_over.is_none()
        && !commit.fires_deadline
}

#[async_trait]
impl BatchStore for PostgresStore {
    async fn get_snapshots(&self, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let ids: Vec<&str> = ids.iter().map(TaskId::as_str).collect();
        let mut tx = self.pool.begin().await?;
        let tasks: Vec<TaskRow> = sqlx::query_as(concat!(
            "SELECT ",
            task_columns!(),
            " FROM tasks WHERE id = ANY($1)"
        ))
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        let rows: Vec<CandidateOf> = sqlx::query_as(
            "SELECT task_id, candidate_id, provider_id, model, enabled, max_tokens, \
             escalation_json, policy_json FROM task_candidates WHERE task_id = ANY($1) \
             ORDER BY task_id, position",
        )
        .bind(&ids)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut candidates: HashMap<String, Vec<TaskCandidateRow>> = HashMap::new();
        for row in rows {
            candidates
                .entry(row.task_id)
                .or_default()
                .push(row.candidate);
        }
        tasks_from_rows(tasks, candidates)
    }

    async fn unfinished_attempts(
        &self,
        ids: &[TaskId],
    ) -> Result<Vec<(TaskId, AttemptId)>, StoreError> {
        let ids: Vec<&str> = ids.iter().map(TaskId::as_str).collect();
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT task_id, id FROM attempts WHERE finished_at_ms IS NULL AND task_id = ANY($1) \
             ORDER BY task_id, seq",
        )
        .bind(&ids)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(task_id, id)| (TaskId::new(task_id), AttemptId::new(id)))
            .collect())
    }

    async fn commit_all(
        &self,
        commits: Vec<(i64, RouteCommit)>,
    ) -> Result<Vec<Option<i64>>, StoreError> {
        let mut written: Vec<Option<i64>> = vec![None; commits.len()];
        let (batch, one_by_one): (Vec<usize>, Vec<usize>) =
            (0..commits.len()).partition(|&index| batchable(&commits[index].1));
        // Each durable one's `after` runs before anything else is written, so a
        // later failure never leaves a written transition without its effects.
        let carried_out = |index: usize, event_id: Option<i64>| {
            if let Some(event_id) = event_id {
                // Durable: the sequencer gives the event its public id, and it
                // reaches every replica's feed from there.
                self.committed.notify_one();
                commits[index].1.after.run(event_id);
            }
        };
        if !batch.is_empty() {
            let mut tries = 0;
            let events = loop {
                tries += 1;
                match self.write_batch(&commits, &batch).await {
                    Err(StoreError::Database(error)) if tries < 3 && is_deadlock(&error) => {}
                    written => break written?,
                }
            };
            for index in batch {
                written[index] = events.get(commits[index].1.route.task_id.as_str()).copied();
                carried_out(index, written[index]);
            }
        }
        for index in one_by_one {
            let (expected, commit) = &commits[index];
            let mut conn = self.pool.acquire().await?;
            written[index] = self.write_commit(&mut conn, *expected, commit).await?;
            carried_out(index, written[index]);
        }
        Ok(written)
    }
}

/// Whether the database ended the statement to break a deadlock (it wrote
/// nothing).
fn is_deadlock(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .and_then(sqlx::error::DatabaseError::code)
        .is_some_and(|code| code == "40P01")
}

impl PostgresStore {
    /// The commits at `indexes` (each a route, perhaps an attempt's end, and an
    /// event) in one statement; answers each written route's event id, by task.
    async fn write_batch(
        &self,
        commits: &[(i64, RouteCommit)],
        indexes: &[usize],
    ) -> Result<HashMap<String, i64>, StoreError> {
        let chosen = || indexes.iter().map(|&index| &commits[index]);
        let routes = || chosen().map(|(_, commit)| &commit.route);
        let failures = || routes().map(|record| record.route.failure.as_ref());
        let ends = || {
            chosen().filter_map(|(_, commit)| {
                commit
                    .finish_attempt
                    .as_ref()
                    .map(|(id, end)| (commit.route.task_id.as_str(), id.as_str(), end))
            })
        };
        let verdicts = || ends().map(|(_, _, end)| end.verdict.as_ref());
        let strings = |values: Vec<Option<&str>>| -> Vec<Option<String>> {
            values
                .into_iter()
                .map(|value| value.map(str::to_owned))
                .collect()
        };
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "WITH input AS (SELECT * FROM UNNEST($1::text[], $2::bigint[], $3::text[], \
             $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[], $9::text[], \
             $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::boolean[], \
             $16::boolean[], $17::boolean[], $18::boolean[], $19::text[], $20::bigint[], \
             $21::bigint[], $22::bigint[], $23::bigint[], $24::text[]) WITH ORDINALITY AS \
             i(task_id, expected, state, generation, candidate_index, cause, deadline_ms, \
             retry_ordinal, decision_json, class, code, catalogue, safe_cause, pending_outcome, \
             circuit_wait, through_circuit, circuit_waited, new_episode, episode_json, turn, \
             escalations, max_tokens, updated_at_ms, event_json, position)), \
             updated AS (UPDATE routes r SET state = i.state, generation = i.generation, \
             candidate_index = i.candidate_index, cause = i.cause, deadline_ms = i.deadline_ms, \
             retry_ordinal = i.retry_ordinal, decision_json = i.decision_json, class = i.class, \
             code = i.code, catalogue = i.catalogue, safe_cause = i.safe_cause, \
             pending_outcome = i.pending_outcome, circuit_wait = i.circuit_wait, \
             through_circuit = i.through_circuit, circuit_waited = i.circuit_waited, \
             new_episode = i.new_episode, episode_json = i.episode_json, turn = i.turn, \
             escalations = i.escalations, max_tokens = i.max_tokens, \
             updated_at_ms = i.updated_at_ms, owner = $25 FROM input i \
             WHERE r.task_id = i.task_id AND r.generation = i.expected \
             RETURNING r.task_id), \
             finished AS (UPDATE attempts a SET finished_at_ms = f.finished_at_ms, \
             outcome = f.outcome, class = f.class, code = f.code, confidence = f.confidence, \
             catalogue = f.catalogue, rule = f.rule, safe_cause = f.safe_cause, \
             reset_at_ms = f.reset_at_ms, decision_json = f.decision_json, \
             evidence_json = f.evidence_json FROM UNNEST($26::text[], $27::text[], \
             $28::bigint[], $29::text[], $30::text[], $31::text[], $32::text[], $33::text[], \
             $34::text[], $35::text[], $36::bigint[], $37::text[], $38::text[]) AS \
             f(task_id, id, finished_at_ms, outcome, class, code, confidence, catalogue, rule, \
             safe_cause, reset_at_ms, decision_json, evidence_json) \
             WHERE a.id = f.id AND a.finished_at_ms IS NULL \
             AND f.task_id IN (SELECT task_id FROM updated)), \
             events AS (INSERT INTO route_events (task_id, data_json, created_at_ms) \
             SELECT i.task_id, i.event_json, i.updated_at_ms FROM input i \
             WHERE i.task_id IN (SELECT task_id FROM updated) ORDER BY i.position \
             RETURNING task_id, id) \
             SELECT task_id, id FROM events",
        )
        .bind(
            routes()
                .map(|record| record.task_id.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(chosen().map(|(expected, _)| *expected).collect::<Vec<_>>())
        .bind(
            routes()
                .map(|record| record.route.state.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.generation)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| i64::try_from(record.route.candidate).unwrap_or(i64::MAX))
                .collect::<Vec<_>>(),
        )
        .bind(strings(
            routes()
                .map(|record| record.route.cause.map(policy::route::RouteCause::as_str))
                .collect(),
        ))
        .bind(
            routes()
                .map(|record| record.route.deadline_ms)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.retry_ordinal.map(i64::from))
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.decision.as_ref().map(to_json))
                .collect::<Vec<_>>(),
        )
        .bind(strings(
            failures()
                .map(|failure| failure.map(|failure| failure.class.as_str()))
                .collect(),
        ))
        .bind(strings(
            failures()
                .map(|failure| failure.map(|failure| failure.code.as_str()))
                .collect(),
        ))
        .bind(strings(
            failures()
                .map(|failure| failure.map(|failure| failure.catalogue.as_str()))
                .collect(),
        ))
        .bind(strings(
            failures()
                .map(|failure| failure.map(|failure| failure.safe_cause.as_str()))
                .collect(),
        ))
        .bind(strings(
            routes()
                .map(|record| record.route.pending_outcome.map(|outcome| outcome.as_str()))
                .collect(),
        ))
        .bind(
            routes()
                .map(|record| record.route.circuit_wait)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.through_circuit)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.circuit_waited)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.new_episode)
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| to_json(&record.route.episode))
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| i64::from(record.route.turn))
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| i64::from(record.route.escalations))
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.route.max_tokens.map(i64::from))
                .collect::<Vec<_>>(),
        )
        .bind(
            routes()
                .map(|record| record.updated_at.as_millis())
                .collect::<Vec<_>>(),
        )
        .bind(
            chosen()
                .map(|(_, commit)| commit.event_json.to_string())
                .collect::<Vec<_>>(),
        )
        .bind(self.replica.to_string())
        .bind(ends().map(|(task_id, _, _)| task_id).collect::<Vec<_>>())
        .bind(ends().map(|(_, id, _)| id).collect::<Vec<_>>())
        .bind(
            ends()
                .map(|(_, _, end)| end.finished_at.as_millis())
                .collect::<Vec<_>>(),
        )
        .bind(
            ends()
                .map(|(_, _, end)| end.outcome.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.class.as_str()))
                .collect(),
        ))
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.code.as_str()))
                .collect(),
        ))
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.confidence.as_str()))
                .collect(),
        ))
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.catalogue.as_str()))
                .collect(),
        ))
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.rule.as_str()))
                .collect(),
        ))
        .bind(strings(
            verdicts()
                .map(|verdict| verdict.map(|verdict| verdict.safe_cause.as_str()))
                .collect(),
        ))
        .bind(
            verdicts()
                .map(|verdict| verdict.and_then(|verdict| verdict.reset_at_ms))
                .collect::<Vec<_>>(),
        )
        .bind(
            ends()
                .map(|(_, _, end)| end.decision.as_ref().map(to_json))
                .collect::<Vec<_>>(),
        )
        .bind(
            ends()
                .map(|(_, _, end)| end.evidence.as_ref().map(to_json))
                .collect::<Vec<_>>(),
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().collect())
    }
}
