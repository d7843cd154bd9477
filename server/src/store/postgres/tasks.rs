//! Tasks, routes, attempts, turns, shared circuits and route events in
//! PostgreSQL.
//!
//! Every route write is [`TaskStore::commit`]: one statement whose first part is
//! the route's UPDATE guarded by the generation it was computed from (`WHERE
//! task_id = … AND generation = …`), and whose every other part (the attempt, the
//! turn, the circuit and the event) happens only if that UPDATE
//! matched; so of two replicas computing from one read exactly one writes
//! (`commit.rs`). No match is a typed `StaleGeneration` carrying the route as it
//! is now, and nothing else is written. The event's public id is given after the
//! commit, never against commit order, by the sequencer (`sequence.rs`). Here:
//! the reads, and the store's task operations over those two.

use api::{AttemptId, ProviderId, TaskCursor, TaskId};
use async_trait::async_trait;
use policy::route::RouteState;
use sqlx::{PgConnection, Postgres, QueryBuilder};

use super::{LAPSE_MS, PostgresStore};
use crate::domain::{
    Attempt, AttemptEnd, Circuit, CircuitHistoryEntry, CircuitKey, CircuitWait, FeedSender, Pause,
    Progress, RouteCommit, RouteCounts, RouteRecord, StoredEvent, Task, TaskDetail, TaskListing,
    TaskWrite,
};
use crate::store::rows::{
    AttemptRow, CircuitHistoryRow, CircuitRow, CircuitWaitRow, PassedOverRow, PauseRow,
    ProgressRow, RouteRow, TaskCandidateRow, TaskRow, TurnRow, first_by_task, not_found,
    not_paused, parse_enum, passed_over_query, route_columns, route_counts, task_columns,
    task_from_rows,
};
use crate::store::{StoreError, TaskStore};

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
    let row: Option<TaskRow> = sqlx::query_as(concat!(
        "SELECT ",
        task_columns!(),
        " FROM tasks WHERE id = $1"
    ))
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
    let passed_over: Vec<PassedOverRow> = sqlx::query_as(passed_over_query!("$1"))
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
    let turns: Vec<TurnRow> = sqlx::query_as(
        "SELECT number, prompt, answer, truncated, candidate_index, candidate_id, model, \
         created_at_ms, completed_at_ms, tool_calls_json FROM turns WHERE task_id = $1 \
         ORDER BY number",
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
        passed_over: passed_over
            .into_iter()
            .map(PassedOverRow::into_domain)
            .collect::<Result<_, _>>()?,
        turns: turns
            .into_iter()
            .map(TurnRow::into_domain)
            .collect::<Result<_, _>>()?,
    })
}

/// Each task row with its candidates, route and first prompt, read in `tx`.
async fn listings_of(
    tx: &mut PgConnection,
    rows: Vec<TaskRow>,
) -> Result<Vec<TaskListing>, StoreError> {
    let mut listings = Vec::with_capacity(rows.len());
    for row in rows {
        let id = row.id.clone();
        let candidates = fetch_candidates(tx, &id).await?;
        let route = fetch_route(tx, &id).await?;
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
    Ok(listings)
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
                // The first transition, in the same transaction.
                let started = match &write.start {
                    Some(start) => Some(
                        self.write_commit(&mut tx, write.route.route.generation, start)
                            .await?
                            .ok_or_else(|| {
                                StoreError::Write(
                                    "a new task's first transition found its route moved"
                                        .to_owned(),
                                )
                            })?,
                    ),
                    None => None,
                };
                tx.commit().await?;
                self.committed.notify_one();
                if let (Some(event_id), Some(start)) = (started, &write.start) {
                    start.after.run(event_id);
                }
                Ok((write.created(), Some(event_id)))
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
             completed_at_ms, tool_calls_json) ORDER BY number), '[]')::text FROM turns \
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
        let mut query = QueryBuilder::<Postgres>::new(concat!(
            "SELECT ",
            task_columns!(),
            " FROM tasks JOIN routes ON routes.task_id = tasks.id WHERE 1 = 1"
        ));
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
        let listings = listings_of(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(listings)
    }

    async fn list_waiting(&self, limit: u32) -> Result<Vec<TaskListing>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let rows: Vec<TaskRow> = sqlx::query_as(concat!(
            "SELECT ",
            task_columns!(),
            " FROM routes JOIN tasks ON tasks.id = routes.task_id ",
            "WHERE routes.deadline_ms IS NOT NULL AND routes.state IN ('retry_wait', 'waiting_for_reset') ",
            "ORDER BY routes.deadline_ms, routes.task_id LIMIT $1"
        ))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        let listings = listings_of(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(listings)
    }

    async fn route_counts(&self, created_since_ms: i64) -> Result<RouteCounts, StoreError> {
        // One snapshot for both counts.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await?;
        let now: Vec<(String, i64)> = sqlx::query_as(crate::store::shared::COUNT_NEEDING_A_PERSON)
            .fetch_all(&mut *tx)
            .await?;
        let recent: Vec<(String, i64)> = sqlx::query_as(crate::store::shared::COUNT_CREATED_SINCE)
            .bind(created_since_ms)
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        route_counts(now, recent)
    }

    async fn commit(
        &self,
        expected_generation: i64,
        commit: RouteCommit,
    ) -> Result<i64, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let written = self
            .write_commit(&mut conn, expected_generation, &commit)
            .await?;
        drop(conn);
        match written {
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
        super::commit::finish_attempt(&mut conn, id.as_str(), end).await
    }

    async fn due_routes(&self, now_ms: i64, limit: u32) -> Result<Vec<RouteRecord>, StoreError> {
        let rows: Vec<RouteRow> = sqlx::query_as(concat!(
            "SELECT ",
            route_columns!(),
            " FROM routes WHERE deadline_ms IS NOT NULL AND deadline_ms <= $1 \
             AND state IN ('retry_wait', 'waiting_for_reset') AND ",
            fired_here!("$3", "$4"),
            not_paused!(),
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
            fired_here!("$2", "$3"),
            not_paused!()
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
            .bind(super::sequence::CANCELS)
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

    async fn count_open_routes(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(crate::store::shared::COUNT_OPEN_ROUTES)
            .fetch_one(&self.pool)
            .await?)
    }

    async fn attempts_with_evidence(
        &self,
        unsure_only: bool,
        limit: u32,
    ) -> Result<Vec<Attempt>, StoreError> {
        let rows: Vec<AttemptRow> = sqlx::query_as(crate::store::shared::ATTEMPTS_WITH_EVIDENCE)
            .bind(i64::from(unsure_only))
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(AttemptRow::into_domain).collect()
    }

    async fn list_circuits(&self) -> Result<Vec<Circuit>, StoreError> {
        let rows: Vec<CircuitRow> = sqlx::query_as(crate::store::shared::LIST_CIRCUITS)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(CircuitRow::into_domain).collect()
    }

    async fn circuits_over(
        &self,
        provider_id: &ProviderId,
        model: &str,
    ) -> Result<Vec<Circuit>, StoreError> {
        let rows: Vec<CircuitRow> = sqlx::query_as(
            "SELECT provider_id, model, code, until_ms, probe_task_id, opened_at_ms FROM circuits \
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

    async fn list_circuit_waits(&self, limit: u32) -> Result<Vec<CircuitWait>, StoreError> {
        let rows: Vec<CircuitWaitRow> = sqlx::query_as(crate::store::shared::LIST_CIRCUIT_WAITS)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter().map(CircuitWaitRow::into_domain).collect()
    }

    async fn circuit_history(
        &self,
        since_ms: i64,
        limit: u32,
    ) -> Result<Vec<CircuitHistoryEntry>, StoreError> {
        let rows: Vec<CircuitHistoryRow> = sqlx::query_as(crate::store::shared::CIRCUIT_HISTORY)
            .bind(since_ms)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(CircuitHistoryRow::into_domain)
            .collect()
    }

    async fn close_circuit(
        &self,
        key: &CircuitKey,
        until_ms: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<TaskId>>, StoreError> {
        let model = key.model.as_deref().unwrap_or("");
        let mut tx = self.pool.begin().await?;
        let code: Option<String> = sqlx::query_scalar(
            "DELETE FROM circuits WHERE provider_id = $1 AND model = $2 AND until_ms = $3 \
             RETURNING code",
        )
        .bind(key.provider_id.as_str())
        .bind(model)
        .bind(until_ms)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(code) = code else {
            return Ok(None);
        };
        sqlx::query(crate::store::shared::RECORD_CLOSED_BY_PERSON)
            .bind(key.provider_id.as_str())
            .bind(model)
            .bind(&code)
            .bind(until_ms)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        // The routes become this replica's, whose scheduler is told of them: the
        // replica that owned them sleeps toward their old deadlines.
        let release =
            crate::store::shared::RELEASE_WAITS_POSTGRES[usize::from(key.model.is_some())];
        let woken: Vec<String> = sqlx::query_scalar(release)
            .bind(now_ms)
            .bind(key.provider_id.as_str())
            .bind(model)
            .bind(self.replica.as_ref())
            .fetch_all(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(woken.into_iter().map(TaskId::new).collect()))
    }

    async fn prune_circuit_history(&self, before_ms: i64) -> Result<u64, StoreError> {
        let pruned = sqlx::query("DELETE FROM circuit_history WHERE at_ms < $1")
            .bind(before_ms)
            .execute(&self.pool)
            .await?;
        Ok(pruned.rows_affected())
    }

    async fn list_pauses(&self) -> Result<Vec<Pause>, StoreError> {
        let rows: Vec<PauseRow> = sqlx::query_as(crate::store::shared::LIST_PAUSES)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().map(PauseRow::into_domain).collect())
    }

    async fn set_pause(
        &self,
        provider_id: Option<&ProviderId>,
        paused: bool,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let scope = provider_id.map_or("", ProviderId::as_str);
        let mut tx = self.pool.begin().await?;
        let changed = if paused {
            sqlx::query(crate::store::shared::PAUSE)
                .bind(scope)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
        } else {
            sqlx::query(crate::store::shared::RESUME)
                .bind(scope)
                .execute(&mut *tx)
                .await?
        };
        if changed.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(crate::store::shared::RECORD_PAUSE)
            .bind(scope)
            .bind(if paused { "paused" } else { "resumed" })
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
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

    async fn prune_events(&self, keep: i64, at_most: i64) -> Result<u64, StoreError> {
        Ok(sqlx::query(
            "DELETE FROM route_events WHERE seq IN (SELECT seq FROM route_events \
             WHERE seq <= (SELECT MAX(seq) FROM route_events) - $1 ORDER BY seq LIMIT $2)",
        )
        .bind(keep)
        .bind(at_most)
        .execute(&self.pool)
        .await?
        .rows_affected())
    }
}
