//! `/api/tasks`: shells over [`Services`].

use api::{
    ActionRequest, ApiError, TaskId, TaskPage, TaskQuery, TaskRequest, TaskView, TurnRequest,
};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// Start a task: the profile's candidates are snapshotted, and its route starts
/// `queued` on the first enabled one. With an `Idempotency-Key`, a repeat answers
/// the first task (200) instead of starting another.
#[utoipa::path(post, path = "/api/tasks", tag = "tasks", request_body = TaskRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "A key of 1 to 200 characters: a repeat returns the first task with 200")),
    responses(
        (status = 201, description = "Started", body = TaskView),
        (status = 200, description = "The first task of this Idempotency-Key", body = TaskView),
        (status = 422, description = "Field errors (every one at once), or a profile with no enabled candidate; nothing started", body = ApiError),
    ))]
pub async fn create_task(
    State(services): State<Services>,
    headers: HeaderMap,
    Body(request): Body<TaskRequest>,
) -> Result<(StatusCode, Json<TaskView>), AppError> {
    let key = match headers.get("idempotency-key") {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| ApiError::invalid_header("Idempotency-Key", "must be visible ASCII"))?
                .to_owned(),
        ),
        None => None,
    };
    let (task, created) = services.create_task(request, key).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(task)))
}

/// Tasks, newest first, optionally in one state; `next_cursor` pages on.
#[utoipa::path(get, path = "/api/tasks", tag = "tasks", params(TaskQuery),
    responses(
        (status = 200, description = "One page of tasks", body = TaskPage),
        (status = 422, description = "A bad limit or cursor", body = ApiError),
    ))]
pub async fn list_tasks(
    State(services): State<Services>,
    query: Result<Query<TaskQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<TaskPage>, AppError> {
    let Query(query) = query.map_err(super::query_refused)?;
    Ok(Json(services.list_tasks(query).await?))
}

/// One task: its route, its attempts (oldest first) and its turns.
#[utoipa::path(get, path = "/api/tasks/{id}", tag = "tasks",
    params(("id" = TaskId, Path, description = "Task id")),
    responses(
        (status = 200, description = "The task", body = TaskView),
        (status = 404, description = "No such task", body = ApiError),
    ))]
pub async fn get_task(
    State(services): State<Services>,
    Path(id): Path<TaskId>,
) -> Result<Json<TaskView>, AppError> {
    Ok(Json(services.get_task(&id).await?))
}

/// A follow-up turn on a completed task, starting on the candidate that served
/// the last turn.
#[utoipa::path(post, path = "/api/tasks/{id}/turns", tag = "tasks", request_body = TurnRequest,
    params(("id" = TaskId, Path, description = "Task id")),
    responses(
        (status = 200, description = "The task, its route queued for the new turn", body = TaskView),
        (status = 404, description = "No such task", body = ApiError),
        (status = 422, description = "Field errors, or the task is not completed", body = ApiError),
    ))]
pub async fn new_turn(
    State(services): State<Services>,
    Path(id): Path<TaskId>,
    Body(request): Body<TurnRequest>,
) -> Result<Json<TaskView>, AppError> {
    Ok(Json(services.new_turn(&id, request).await?))
}

/// A person's action on a route: `retry_now`, `skip_now`, `cancel_wait` or `stop`,
/// naming the generation seen. Checked in order: the body (400/422), the
/// generation (409 with the route now), the state (422). Nothing changes unless
/// all pass.
#[utoipa::path(post, path = "/api/tasks/{id}/actions", tag = "tasks", request_body = ActionRequest,
    params(("id" = TaskId, Path, description = "Task id")),
    responses(
        (status = 200, description = "Done: the task now", body = TaskView),
        (status = 404, description = "No such task", body = ApiError),
        (status = 409, description = "The route moved past that generation: `route` is the route now; nothing changed", body = ApiError),
        (status = 422, description = "Field errors, or the action is not valid in the route's state; nothing changed", body = ApiError),
    ))]
pub async fn act(
    State(services): State<Services>,
    Path(id): Path<TaskId>,
    Body(request): Body<ActionRequest>,
) -> Result<Json<TaskView>, AppError> {
    Ok(Json(services.act(&id, request).await?))
}
