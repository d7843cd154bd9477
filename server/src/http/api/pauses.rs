//! `GET /api/pauses` and `POST /api/pauses`: a person's pause of automatic
//! recovery, everywhere or on one provider.

use api::{ApiError, PauseRequest, PausesView};
use axum::Json;
use axum::extract::State;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// What is paused: since when everything is, and each provider's pause.
#[utoipa::path(get, path = "/api/pauses", tag = "tasks",
    responses((status = 200, description = "What is paused", body = PausesView)))]
pub async fn pauses(State(services): State<Services>) -> Result<Json<PausesView>, AppError> {
    Ok(Json(services.pauses().await?))
}

/// Pause or resume automatic recovery everywhere (no `provider_id`) or on one
/// provider, recorded. While paused no deadline fires and no attempt starts on
/// what is paused; routes keep their states and deadlines. A resume fires what
/// came due, earliest first. It holds across restarts, and on every replica
/// within a second.
#[utoipa::path(post, path = "/api/pauses", tag = "tasks", request_body = PauseRequest,
    responses(
        (status = 200, description = "What is paused now", body = PausesView),
        (status = 404, description = "No such provider; nothing changed", body = ApiError),
        (status = 422, description = "Field errors; nothing changed", body = ApiError),
    ))]
pub async fn set_pause(
    State(services): State<Services>,
    Body(request): Body<PauseRequest>,
) -> Result<Json<PausesView>, AppError> {
    Ok(Json(services.set_pause(request).await?))
}
