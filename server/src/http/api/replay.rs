//! `GET /api/replay`: the stored calls the editor's dry run plays a draft
//! policy against.

use api::{ApiError, ReplayQuery, ReplayView};
use axum::Json;
use axum::extract::{Query, State};

use crate::error::AppError;
use crate::services::Services;

/// The last tasks whose calls to `model` of `provider_id` failed, newest first,
/// each with its first turn's calls on that candidate (times, outcome, code,
/// stated reset, the decision then). The editor plays a draft policy against
/// them in the browser; nothing is sent and nothing is stored.
#[utoipa::path(get, path = "/api/replay", tag = "profiles", params(ReplayQuery),
    responses(
        (status = 200, description = "The tasks and their calls", body = ReplayView),
        (status = 422, description = "A provider or model missing, empty or too long, or a limit out of range", body = ApiError),
    ))]
pub async fn replay(
    State(services): State<Services>,
    query: Result<Query<ReplayQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ReplayView>, AppError> {
    let Query(query) = query.map_err(super::query_refused)?;
    Ok(Json(services.replay_calls(query).await?))
}
