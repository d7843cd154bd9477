//! `GET /api/circuits` and `POST /api/circuits/close`: every shared circuit, and
//! a person's "Close now".

use api::{ApiError, CircuitClosedView, CircuitsView, CloseCircuitRequest};
use axum::Json;
use axum::extract::State;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// Every open or half-open circuit (the code that opened it, its reset, the routes
/// waiting on it, the route probing it) and the last day's openings and closings
/// by provider.
#[utoipa::path(get, path = "/api/circuits", tag = "tasks",
    responses((status = 200, description = "Every circuit, and the last day's history", body = CircuitsView)))]
pub async fn circuits(State(services): State<Services>) -> Result<Json<CircuitsView>, AppError> {
    Ok(Json(services.circuits().await?))
}

/// Close a circuit now, for a person who knows its window reset early: the
/// circuit goes, the closing is recorded in its history, and the routes waiting
/// on it are sent. Fenced by the reset the person saw.
#[utoipa::path(post, path = "/api/circuits/close", tag = "tasks", request_body = CloseCircuitRequest,
    responses(
        (status = 200, description = "Closed: the routes that were waiting on it", body = CircuitClosedView),
        (status = 409, description = "The circuit closed, reopened or moved its reset since: nothing changed", body = ApiError),
        (status = 422, description = "Field errors; nothing changed", body = ApiError),
    ))]
pub async fn close_circuit(
    State(services): State<Services>,
    Body(request): Body<CloseCircuitRequest>,
) -> Result<Json<CircuitClosedView>, AppError> {
    Ok(Json(services.close_circuit(request).await?))
}
