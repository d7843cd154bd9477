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

use api::{AttemptId, ProviderId, TaskCursor, TaskId};
use async_trait::async_trait;
use policy::route::RouteState;
use rusqlite::{OptionalExtension, params};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection};

#[cfg(doc)]
use super::reader;
use super::{SqliteStore, commit};
use crate::domain::{
    Attempt, AttemptEnd, Circuit, CircuitHistoryEntry, CircuitKey, CircuitWait, Pause, Progress,
    RouteCommit, RouteCounts, RouteRecord, StoredEvent, Task, TaskDetail, TaskListing, TaskWrite,
    Turn,
};
use crate::store::rows::{
    AttemptRow, CircuitHistoryRow, CircuitRow, CircuitWaitRow, PassedOverRow, PauseRow,
    ProgressRow, RouteRow, TaskCandidateRow, TaskRow, TurnRow, first_by_task, not_found,
    not_paused, parse_enum, passed_over_query, route_columns, route_counts, task_columns,
    task_from_rows,
};
use crate::store::{StoreError, TaskStore};

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
    let row: Option<TaskRow> = sqlx::query_as(concat!(
        "SELECT ",
        task_columns!(),
        " FROM tasks WHERE id = ?"
    ))
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
    let passed_over: Vec<PassedOverRow> = sqlx::query_as(passed_over_query!("?"))
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
        passed_over: passed_over
            .into_iter()
            .map(PassedOverRow::into_domain)
            .collect::<Result<_, _>>()?,
        turns,
    })
}

async fn fetch_turns(conn: &mut SqliteConnection, id: &str) -> Result<Vec<Turn>, StoreError> {
    let turns: Vec<TurnRow> = sqlx::query_as(
        "SELECT number, prompt, answer, truncated, candidate_index, candidate_id, model, \
         created_at_ms, completed_at_ms, tool_calls_json FROM turns WHERE task_id = ? \
         ORDER BY number",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    turns.into_iter().map(TurnRow::into_domain).collect()
}

/// Each task row with its candidates, route and first prompt, read in `tx`.
async fn listings_of(
    tx: &mut SqliteConnection,
    rows: Vec<TaskRow>,
) -> Result<Vec<TaskListing>, StoreError> {
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
        let route = fetch_route(tx, &id).await?;
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
    Ok(listings)
}

#[async_trait]
impl TaskStore for SqliteStore {
    fn attach_feed(&self, feed: crate::domain::FeedSender) {
        let _ = self.feed.set(feed);
    }

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
                move |connection| commit::create_task(connection, &written),
                {
                    let (store, data) = (self.clone(), write.event_json.clone());
                    let start = write
                        .start
                        .as_ref()
                        .map(|start| (start.event_json.clone(), start.after.clone()));
                    move |created| {
                        if let commit::Created::New(event_id, started) = created {
                            store.publish(*event_id, &data);
                            if let (Some(event_id), Some((data, after))) = (started, &start) {
                                store.publish(*event_id, data);
                                after.run(*event_id);
                            }
                        }
                    }
                },
            )
            .await?;
        match created {
            commit::Created::New(event_id, _) => Ok((
                std::sync::Arc::unwrap_or_clone(write).created(),
                Some(event_id),
            )),
            commit::Created::Existing(first) => {
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
                     candidate_index, candidate_id, model, created_at_ms, completed_at_ms, \
                     tool_calls_json) ORDER BY number) FROM turns WHERE turns.task_id = routes.task_id) AS turns_json, \
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
        let mut query = QueryBuilder::<Sqlite>::new(concat!(
            "SELECT ",
            task_columns!(),
            " FROM tasks JOIN routes ON routes.task_id = tasks.id WHERE 1 = 1"
        ));
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
        let listings = listings_of(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(listings)
    }

    async fn list_waiting(&self, limit: u32) -> Result<Vec<TaskListing>, StoreError> {
        let mut tx = self.read().await?;
        let rows: Vec<TaskRow> = sqlx::query_as(concat!(
            "SELECT ",
            task_columns!(),
            " FROM routes JOIN tasks ON tasks.id = routes.task_id ",
            "WHERE routes.deadline_ms IS NOT NULL AND routes.state IN ('retry_wait', 'waiting_for_reset') ",
            "ORDER BY routes.deadline_ms, routes.task_id LIMIT ?"
        ))
        .bind(i64::from(limit))
        .fetch_all(&mut *tx)
        .await?;
        let listings = listings_of(&mut tx, rows).await?;
        tx.commit().await?;
        Ok(listings)
    }

    async fn route_counts(&self, created_since_ms: i64) -> Result<RouteCounts, StoreError> {
        let mut tx = self.read().await?;
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
        let task_id = commit.route.task_id.clone();
        let (after, data) = (commit.after.clone(), commit.event_json.clone());
        let store = self.clone();
        let unhurried = commit.unhurried;
        let work = move |connection: &rusqlite::Connection| {
            commit::commit(connection, expected_generation, &commit)
        };
        // In commit order, on the writer: the event, then the effects.
        let then = move |written: &Option<i64>| {
            if let Some(event_id) = written {
                store.publish(*event_id, &data);
                after.run(*event_id);
            }
        };
        let written = if unhurried {
            self.tasks.write_unhurried(work, then).await?
        } else {
            self.tasks.write(work, then).await?
        };
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
                move |connection| commit::finish_attempt(connection, id.as_str(), &end),
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
                     AND state IN ('retry_wait', 'waiting_for_reset')",
                    not_paused!(),
                    " ORDER BY deadline_ms LIMIT ?"
                ))?
                .query_map(params![now_ms, i64::from(limit)], RouteRow::from_rusqlite)?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn next_deadline(&self, after_ms: i64) -> Result<Option<i64>, StoreError> {
        self.readers.read(|connection| {
            Ok(connection
                .prepare_cached(concat!(
                    "SELECT MIN(deadline_ms) FROM routes WHERE deadline_ms IS NOT NULL \
                     AND deadline_ms > ? AND state IN ('retry_wait', 'waiting_for_reset')",
                    not_paused!()
                ))?
                .query_row([after_ms], |row| row.get(0))?)
        })
    }

    async fn routes_in(
        &self,
        states: &[RouteState],
        limit: u32,
        after: Option<TaskId>,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        // A page of each state from the index by (state, task id), merged.
        let after = after.as_ref().map_or("", TaskId::as_str);
        self.readers.read(|connection| {
            let mut statement = connection.prepare_cached(concat!(
                "SELECT ",
                route_columns!(),
                " FROM routes WHERE state = ? AND task_id > ? ORDER BY task_id LIMIT ?"
            ))?;
            let mut page = Vec::new();
            for state in states {
                for row in statement.query_map(
                    params![state.as_str(), after, i64::from(limit)],
                    RouteRow::from_rusqlite,
                )? {
                    page.push(row?.into_domain()?);
                }
            }
            Ok(first_by_task(page, limit))
        })
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
        self.readers.read(|connection| {
            connection
                .prepare_cached(crate::store::shared::LIST_CIRCUITS)?
                .query_map([], CircuitRow::from_rusqlite)?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn circuits_over(
        &self,
        provider_id: &ProviderId,
        model: &str,
    ) -> Result<Vec<Circuit>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(
                    "SELECT provider_id, model, code, until_ms, probe_task_id, opened_at_ms FROM circuits \
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
                move |connection| commit::claim_probe(connection, &key, task_id.as_str(), now_ms),
                |_| {},
            )
            .await
    }

    async fn list_circuit_waits(&self, limit: u32) -> Result<Vec<CircuitWait>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(crate::store::shared::LIST_CIRCUIT_WAITS)?
                .query_map([i64::from(limit)], CircuitWaitRow::from_rusqlite)?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn circuit_history(
        &self,
        since_ms: i64,
        limit: u32,
    ) -> Result<Vec<CircuitHistoryEntry>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(crate::store::shared::CIRCUIT_HISTORY)?
                .query_map(
                    params![since_ms, i64::from(limit)],
                    CircuitHistoryRow::from_rusqlite,
                )?
                .map(|row| row?.into_domain())
                .collect()
        })
    }

    async fn close_circuit(
        &self,
        key: &CircuitKey,
        until_ms: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<TaskId>>, StoreError> {
        let key = key.clone();
        self.tasks
            .write(
                move |connection| commit::close_circuit(connection, &key, until_ms, now_ms),
                |_| {},
            )
            .await
    }

    async fn prune_circuit_history(&self, before_ms: i64) -> Result<u64, StoreError> {
        self.tasks
            .write(
                move |connection| {
                    let pruned = connection
                        .prepare_cached("DELETE FROM circuit_history WHERE at_ms < ?")?
                        .execute([before_ms])?;
                    Ok(u64::try_from(pruned).unwrap_or(u64::MAX))
                },
                |_| {},
            )
            .await
    }

    async fn list_pauses(&self) -> Result<Vec<Pause>, StoreError> {
        self.readers.read(|connection| {
            connection
                .prepare_cached(crate::store::shared::LIST_PAUSES)?
                .query_map([], |row| {
                    Ok(PauseRow {
                        scope: row.get(0)?,
                        paused_at_ms: row.get(1)?,
                        name: row.get(2)?,
                    })
                })?
                .map(|row| Ok(row?.into_domain()))
                .collect()
        })
    }

    async fn set_pause(
        &self,
        provider_id: Option<&ProviderId>,
        paused: bool,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let scope = provider_id.map_or_else(String::new, |id| id.as_str().to_owned());
        self.tasks
            .write(
                move |connection| commit::set_pause(connection, &scope, paused, now_ms),
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

    async fn prune_events(&self, keep: i64, at_most: i64) -> Result<u64, StoreError> {
        self.tasks
            .write(
                move |connection| {
                    let deleted = connection
                        .prepare_cached(
                            "DELETE FROM route_events WHERE id IN (SELECT id FROM route_events \
                             WHERE id <= (SELECT MAX(id) FROM route_events) - ? \
                             ORDER BY id LIMIT ?)",
                        )?
                        .execute([keep, at_most])?;
                    Ok(u64::try_from(deleted).unwrap_or(u64::MAX))
                },
                |_| {},
            )
            .await
    }
}
