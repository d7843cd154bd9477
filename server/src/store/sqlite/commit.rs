//! The task writer's statements: what one job writes on the writer's
//! connection, inside its batch's transaction (a savepoint a job): a route's
//! fenced transition with its attempt, turn, circuit and event, a new task, an
//! attempt's end, a probe's claim. Each route write is gated on the generation
//! in its UPDATE's WHERE clause, its first statement.

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use crate::domain::{
    Attempt, AttemptEnd, CircuitChange, CircuitKey, PassedOver, RouteCommit, RouteRecord,
    TaskWrite, Turn,
};
use crate::store::rows::{route_columns, to_json};
use crate::store::{StoreError, shared};

/// A route's values in the order of `route_columns!`, after its task id.
fn route_values(record: &RouteRecord) -> Vec<Value> {
    let route = &record.route;
    let failure = record.route.failure.as_ref();
    let text = |value: Option<&str>| value.map_or(Value::Null, |text| Value::Text(text.to_owned()));
    let integer = |value: Option<i64>| value.map_or(Value::Null, Value::Integer);
    vec![
        Value::Text(route.state.as_str().to_owned()),
        Value::Integer(route.generation),
        Value::Integer(i64::try_from(route.candidate).unwrap_or(i64::MAX)),
        text(route.cause.map(policy::route::RouteCause::as_str)),
        integer(route.deadline_ms),
        integer(route.retry_ordinal.map(i64::from)),
        route
            .decision
            .as_ref()
            .map_or(Value::Null, |decision| Value::Text(to_json(decision))),
        text(failure.map(|failure| failure.class.as_str())),
        text(failure.map(|failure| failure.code.as_str())),
        text(failure.map(|failure| failure.catalogue.as_str())),
        text(failure.map(|failure| failure.safe_cause.as_str())),
        text(record.route.pending_outcome.map(|outcome| outcome.as_str())),
        Value::Integer(i64::from(route.circuit_wait)),
        Value::Integer(i64::from(route.through_circuit)),
        Value::Integer(i64::from(route.circuit_waited)),
        Value::Integer(i64::from(route.new_episode)),
        Value::Text(to_json(&record.route.episode)),
        Value::Integer(i64::from(record.route.turn)),
        Value::Integer(i64::from(record.route.escalations)),
        integer(record.route.max_tokens.map(i64::from)),
        Value::Integer(record.updated_at.as_millis()),
    ]
}

/// A transition: the route if it is still at `expected` (else `None`, nothing
/// written), with its attempt, turn and circuit changes and its event.
pub(super) fn commit(
    connection: &Connection,
    expected: i64,
    commit: &RouteCommit,
) -> Result<Option<i64>, StoreError> {
    let record = &commit.route;
    let task_id = record.task_id.as_str();
    let mut values = route_values(record);
    values.push(Value::Text(task_id.to_owned()));
    values.push(Value::Integer(expected));
    /// The fenced UPDATE, for `concat!`.
    macro_rules! update_route {
        () => {
            "UPDATE routes SET state = ?, generation = ?, candidate_index = ?, cause = ?, \
             deadline_ms = ?, retry_ordinal = ?, decision_json = ?, class = ?, code = ?, \
             catalogue = ?, safe_cause = ?, pending_outcome = ?, circuit_wait = ?, \
             through_circuit = ?, circuit_waited = ?, new_episode = ?, episode_json = ?, turn = ?, \
             escalations = ?, max_tokens = ?, updated_at_ms = ? WHERE task_id = ? AND generation = ?"
        };
    }
    let updated = if commit.fires_deadline {
        // A firing claims only a route still waiting on a passed deadline (one
        // process serves this database: the writer's order is the claim).
        values.push(Value::Integer(record.updated_at.as_millis()));
        connection
            .prepare_cached(concat!(
                update_route!(),
                " AND state IN ('retry_wait', 'waiting_for_reset') AND deadline_ms <= ?"
            ))?
            .execute(rusqlite::params_from_iter(values))?
    } else {
        connection
            .prepare_cached(update_route!())?
            .execute(rusqlite::params_from_iter(values))?
    };
    if updated == 0 {
        return Ok(None);
    }
    let now_ms = record.updated_at.as_millis();
    if let Some(attempt) = &commit.start_attempt {
        insert_attempt(connection, attempt)?;
    }
    if let Some((id, end)) = &commit.finish_attempt {
        finish_attempt(connection, id.as_str(), end)?;
    }
    if let Some(turn) = &commit.complete_turn {
        connection
            .prepare_cached(
                "UPDATE turns SET answer = ?, truncated = ?, candidate_index = ?, candidate_id = ?, \
                 model = ?, completed_at_ms = ?, tool_calls_json = ? \
                 WHERE task_id = ? AND number = ? AND answer IS NULL",
            )?
            .execute(params![
                turn.answer,
                turn.truncated,
                i64::try_from(turn.producer.candidate_index).unwrap_or(i64::MAX),
                turn.producer.candidate_id.as_str(),
                turn.producer.model,
                now_ms,
                turn.tool_calls_json(),
                task_id,
                i64::from(turn.number),
            ])?;
    }
    if let Some(turn) = &commit.new_turn {
        insert_turn(connection, task_id, turn)?;
    }
    if let Some(change) = &commit.circuit {
        change_circuit(connection, change, task_id, now_ms)?;
    }
    if let Some(passed) = &commit.passed_over {
        insert_passed_over(connection, task_id, passed)?;
    }
    insert_event(connection, task_id, &commit.event_json, now_ms).map(Some)
}

/// What creating a task did.
#[derive(Debug)]
pub(super) enum Created {
    /// Written: the creation event's id, and its first transition's when it
    /// came with one.
    New(i64, Option<i64>),
    /// The idempotency key was used by this task: nothing written.
    Existing(String),
}

/// A new task with its snapshot, route, first turn and event, and its first
/// transition when it comes with one; or the task that used the idempotency
/// key first.
pub(super) fn create_task(
    connection: &Connection,
    write: &TaskWrite,
) -> Result<Created, StoreError> {
    if let Some(key) = &write.idempotency_key {
        let first: Option<String> = connection
            .prepare_cached("SELECT id FROM tasks WHERE idempotency_key = ?")?
            .query_row([key], |row| row.get(0))
            .optional()?;
        if let Some(first) = first {
            return Ok(Created::Existing(first));
        }
    }
    let task = &write.task;
    let id = task.id.as_str();
    let (kind, request_json, respond_by_ms) = crate::store::rows::gateway_columns(task);
    connection
        .prepare_cached(
            "INSERT INTO tasks (id, profile_id, profile_name, idempotency_key, created_at_ms, \
             kind, request_json, respond_by_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )?
        .execute(params![
            id,
            task.profile_id.as_str(),
            task.profile_name,
            write.idempotency_key,
            task.created_at.as_millis(),
            kind,
            request_json,
            respond_by_ms,
        ])
        .map_err(|error| match error.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) => StoreError::Corrupt {
                what: "task id",
                message: "repeated".to_owned(),
            },
            _ => error.into(),
        })?;
    for (position, candidate) in task.candidates.iter().enumerate() {
        connection
            .prepare_cached(
                "INSERT INTO task_candidates (task_id, position, candidate_id, provider_id, model, \
                 enabled, max_tokens, escalation_json, policy_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                id,
                i64::try_from(position).unwrap_or(i64::MAX),
                candidate.id.as_str(),
                candidate.provider_id.as_str(),
                candidate.model,
                candidate.enabled,
                i64::from(candidate.max_tokens),
                to_json(&candidate.escalation),
                to_json(&candidate.policy),
            ])?;
    }
    let mut values = vec![Value::Text(id.to_owned())];
    values.extend(route_values(&write.route));
    connection
        .prepare_cached(concat!(
            "INSERT INTO routes (",
            route_columns!(),
            ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))?
        .execute(rusqlite::params_from_iter(values))?;
    insert_turn(connection, id, &write.turn)?;
    let event_id = insert_event(
        connection,
        id,
        &write.event_json,
        task.created_at.as_millis(),
    )?;
    let started = match &write.start {
        Some(start) => Some(
            commit(connection, write.route.route.generation, start)?.ok_or_else(|| {
                StoreError::Write("a new task's first transition found its route moved".to_owned())
            })?,
        ),
        None => None,
    };
    Ok(Created::New(event_id, started))
}

fn insert_event(
    connection: &Connection,
    task_id: &str,
    data_json: &str,
    now_ms: i64,
) -> Result<i64, StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO route_events (task_id, data_json, created_at_ms) VALUES (?, ?, ?)",
        )?
        .execute(params![task_id, data_json, now_ms])?;
    Ok(connection.last_insert_rowid())
}

fn insert_turn(connection: &Connection, task_id: &str, turn: &Turn) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO turns (task_id, number, prompt, created_at_ms) VALUES (?, ?, ?, ?)",
        )?
        .execute(params![
            task_id,
            i64::from(turn.number),
            turn.prompt,
            turn.created_at.as_millis(),
        ])?;
    Ok(())
}

fn insert_attempt(connection: &Connection, attempt: &Attempt) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO attempts (id, task_id, seq, turn, generation, candidate_index, \
             candidate_id, provider_id, model, ordinal, max_tokens, probe, after_circuit_wait, \
             started_at_ms) \
             VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE task_id = ?2), \
             ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?
        .execute(params![
            attempt.id.as_str(),
            attempt.task_id.as_str(),
            i64::from(attempt.turn),
            attempt.generation,
            i64::try_from(attempt.candidate_index).unwrap_or(i64::MAX),
            attempt.candidate_id.as_str(),
            attempt.provider_id.as_str(),
            attempt.model,
            attempt.ordinal.map(i64::from),
            i64::from(attempt.max_tokens),
            attempt.probe,
            attempt.after_circuit_wait,
            attempt.started_at.as_millis(),
        ])?;
    Ok(())
}

/// Finish an attempt if nothing finished it yet: a finished attempt never changes.
pub(super) fn finish_attempt(
    connection: &Connection,
    id: &str,
    end: &AttemptEnd,
) -> Result<(), StoreError> {
    let verdict = end.verdict.as_ref();
    connection
        .prepare_cached(
            "UPDATE attempts SET finished_at_ms = ?, outcome = ?, class = ?, code = ?, \
             confidence = ?, catalogue = ?, rule = ?, safe_cause = ?, reset_at_ms = ?, \
             decision_json = ?, evidence_json = ? WHERE id = ? AND finished_at_ms IS NULL",
        )?
        .execute(params![
            end.finished_at.as_millis(),
            end.outcome.as_str(),
            verdict.map(|verdict| verdict.class.as_str()),
            verdict.map(|verdict| verdict.code.as_str()),
            verdict.map(|verdict| verdict.confidence.as_str()),
            verdict.map(|verdict| verdict.catalogue.as_str()),
            verdict.map(|verdict| verdict.rule.as_str()),
            verdict.map(|verdict| verdict.safe_cause.as_str()),
            verdict.and_then(|verdict| verdict.reset_at_ms),
            end.decision.as_ref().map(to_json),
            end.evidence.as_ref().map(to_json),
            id,
        ])?;
    Ok(())
}

/// A candidate passed over, after the task's others.
fn insert_passed_over(
    connection: &Connection,
    task_id: &str,
    passed: &PassedOver,
) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO passed_over (task_id, seq, turn, candidate_index, candidate_id, \
             provider_id, model, at_ms, class, code, safe_cause, decision_json) \
             VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM passed_over WHERE task_id = ?1), \
             ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?
        .execute(params![
            task_id,
            i64::from(passed.turn),
            i64::try_from(passed.candidate_index).unwrap_or(i64::MAX),
            passed.candidate_id.as_str(),
            passed.provider_id.as_str(),
            passed.model,
            passed.at.as_millis(),
            passed.code.class().as_str(),
            passed.code.as_str(),
            passed.safe_cause,
            to_json(&passed.decision),
        ])?;
    Ok(())
}

fn change_circuit(
    connection: &Connection,
    change: &CircuitChange,
    task_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    match change {
        CircuitChange::Open {
            key,
            code,
            until_ms,
        } => {
            let model = key.model.as_deref().unwrap_or("");
            connection
                .prepare_cached(
                    "INSERT INTO circuits (provider_id, model, code, class, until_ms, \
                     probe_task_id, opened_at_ms) VALUES (?, ?, ?, ?, ?, NULL, ?) \
                     ON CONFLICT (provider_id, model) DO UPDATE SET code = excluded.code, \
                     class = excluded.class, until_ms = MAX(circuits.until_ms, excluded.until_ms), \
                     probe_task_id = NULL",
                )?
                .execute(params![
                    key.provider_id.as_str(),
                    model,
                    code.as_str(),
                    code.class().as_str(),
                    until_ms,
                    now_ms,
                ])?;
            connection
                .prepare_cached(
                    "INSERT INTO circuit_history (provider_id, model, kind, code, until_ms, \
                     at_ms, task_id) VALUES (?, ?, 'opened', ?, ?, ?, ?)",
                )?
                .execute(params![
                    key.provider_id.as_str(),
                    model,
                    code.as_str(),
                    until_ms,
                    now_ms,
                    task_id,
                ])?
        }
        CircuitChange::Close { provider_id, model } => connection
            .prepare_cached("DELETE FROM circuits WHERE provider_id = ? AND model IN ('', ?)")?
            .execute(params![provider_id.as_str(), model])?,
        CircuitChange::Release { provider_id, model } => connection
            .prepare_cached(
                "DELETE FROM circuits WHERE provider_id = ? AND model IN ('', ?) AND until_ms <= ?",
            )?
            .execute(params![provider_id.as_str(), model, now_ms])?,
    };
    Ok(())
}

/// A person closes the circuit `key` half-opening at `until_ms` (see
/// `TaskStore::close_circuit`): the routes waiting on it (on their current
/// candidate's provider, or that model for a model's circuit) are due now.
pub(super) fn close_circuit(
    connection: &Connection,
    key: &CircuitKey,
    until_ms: i64,
    now_ms: i64,
) -> Result<Option<Vec<api::TaskId>>, StoreError> {
    let model = key.model.as_deref().unwrap_or("");
    let code: Option<String> = connection
        .prepare_cached(
            "DELETE FROM circuits WHERE provider_id = ? AND model = ? AND until_ms = ? \
             RETURNING code",
        )?
        .query_row(params![key.provider_id.as_str(), model, until_ms], |row| {
            row.get(0)
        })
        .optional()?;
    let Some(code) = code else {
        return Ok(None);
    };
    connection
        .prepare_cached(shared::RECORD_CLOSED_BY_PERSON)?
        .execute(params![
            key.provider_id.as_str(),
            model,
            code,
            until_ms,
            now_ms
        ])?;
    let release = shared::RELEASE_WAITS_SQLITE[usize::from(key.model.is_some())];
    let woken = connection
        .prepare_cached(release)?
        .query_map(params![now_ms, key.provider_id.as_str(), model], |row| {
            row.get::<_, String>(0)
        })?
        .map(|id| Ok(api::TaskId::new(id?)))
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(Some(woken))
}

/// Pause or resume `scope` (`''`: everything), recorded; see
/// `TaskStore::set_pause`.
pub(super) fn set_pause(
    connection: &Connection,
    scope: &str,
    paused: bool,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let changed = if paused {
        connection
            .prepare_cached(shared::PAUSE)?
            .execute(params![scope, now_ms])?
    } else {
        connection
            .prepare_cached(shared::RESUME)?
            .execute([scope])?
    };
    if changed == 0 {
        return Ok(false);
    }
    connection
        .prepare_cached(shared::RECORD_PAUSE)?
        .execute(params![
            scope,
            if paused { "paused" } else { "resumed" },
            now_ms
        ])?;
    Ok(true)
}

/// Let `task_id` probe the half-open circuit `key` (see `TaskStore::claim_probe`).
pub(super) fn claim_probe(
    connection: &Connection,
    key: &CircuitKey,
    task_id: &str,
    now_ms: i64,
) -> Result<bool, StoreError> {
    // A claim holds while its route is running (its attempt in flight) or about to
    // be; a route that moved on (stopped, held, waiting) no longer probes.
    let claimed = connection
        .prepare_cached(
            "UPDATE circuits SET probe_task_id = ?1 WHERE provider_id = ?2 AND model = ?3 \
             AND until_ms <= ?4 AND (probe_task_id IS NULL OR probe_task_id = ?1 OR probe_task_id \
             NOT IN (SELECT task_id FROM routes WHERE state IN ('running', 'retrying', 'queued')))",
        )?
        .execute(params![
            task_id,
            key.provider_id.as_str(),
            key.model.as_deref().unwrap_or(""),
            now_ms,
        ])?;
    Ok(claimed == 1)
}
