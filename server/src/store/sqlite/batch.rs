//! Many routes at a time, in SQLite: the reads take the ids as one JSON array
//! (`json_each`), and the writes are one job of the task writer (one savepoint in
//! its batch) running each transition's own fenced statements.

use std::collections::HashMap;

use api::{AttemptId, TaskId};
use async_trait::async_trait;

use super::{SqliteStore, commit};
use crate::domain::{RouteCommit, Task};
use crate::store::rows::{TaskCandidateRow, TaskRow, task_columns, tasks_from_rows, to_json};
use crate::store::{BatchStore, StoreError};

#[async_trait]
impl BatchStore for SqliteStore {
    async fn get_snapshots(&self, ids: &[TaskId]) -> Result<Vec<Task>, StoreError> {
        let ids = to_json(&ids.iter().map(TaskId::as_str).collect::<Vec<_>>());
        self.readers.read(|connection| {
            let mut candidates: HashMap<String, Vec<TaskCandidateRow>> = HashMap::new();
            let mut statement = connection.prepare_cached(
                "SELECT task_id, candidate_id, provider_id, model, enabled, max_tokens, \
                 escalation_json, policy_json FROM task_candidates \
                 WHERE task_id IN (SELECT value FROM json_each(?)) ORDER BY task_id, position",
            )?;
            let mut rows = statement.query([&ids])?;
            while let Some(row) = rows.next()? {
                candidates
                    .entry(row.get(0)?)
                    .or_default()
                    .push(TaskCandidateRow {
                        candidate_id: row.get(1)?,
                        provider_id: row.get(2)?,
                        model: row.get(3)?,
                        enabled: row.get(4)?,
                        max_tokens: row.get(5)?,
                        escalation_json: row.get(6)?,
                        policy_json: row.get(7)?,
                    });
            }
            let mut statement = connection.prepare_cached(concat!(
                "SELECT ",
                task_columns!(),
                " FROM tasks WHERE id IN (SELECT value FROM json_each(?))"
            ))?;
            let tasks = statement
                .query_map([&ids], |row| {
                    Ok(TaskRow {
                        id: row.get(0)?,
                        profile_id: row.get(1)?,
                        profile_name: row.get(2)?,
                        created_at_ms: row.get(3)?,
                        kind: row.get(4)?,
                        request_json: row.get(5)?,
                        respond_by_ms: row.get(6)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            tasks_from_rows(tasks, candidates)
        })
    }

    async fn unfinished_attempts(
        &self,
        ids: &[TaskId],
    ) -> Result<Vec<(TaskId, AttemptId)>, StoreError> {
        let ids = to_json(&ids.iter().map(TaskId::as_str).collect::<Vec<_>>());
        self.readers.read(|connection| {
            let mut statement = connection.prepare_cached(
                "SELECT task_id, id FROM attempts WHERE finished_at_ms IS NULL \
                 AND task_id IN (SELECT value FROM json_each(?)) ORDER BY task_id, seq",
            )?;
            let unfinished = statement
                .query_map([&ids], |row| {
                    Ok((
                        TaskId::new(row.get::<_, String>(0)?),
                        AttemptId::new(row.get::<_, String>(1)?),
                    ))
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(unfinished)
        })
    }

    async fn commit_all(
        &self,
        commits: Vec<(i64, RouteCommit)>,
    ) -> Result<Vec<Option<i64>>, StoreError> {
        let store = self.clone();
        let written = self
            .tasks
            .write(
                move |connection| {
                    commits
                        .into_iter()
                        .map(|(expected, commit)| {
                            let written = commit::commit(connection, expected, &commit)?;
                            Ok((written, commit.event_json, commit.after))
                        })
                        .collect::<Result<Vec<_>, StoreError>>()
                },
                // In commit order, on the writer: each written one's event, then
                // its effects.
                move |written| {
                    for (event_id, data, after) in written {
                        if let Some(event_id) = event_id {
                            store.publish(*event_id, data);
                            after.run(*event_id);
                        }
                    }
                },
            )
            .await?;
        Ok(written
            .into_iter()
            .map(|(event_id, _, _)| event_id)
            .collect())
    }
}
