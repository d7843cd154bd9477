//! `GET /api/overview`: what needs a person, on one page.

use api::OverviewView;
use axum::Json;
use axum::extract::State;

use crate::error::AppError;
use crate::services::Services;

/// Tasks held for a person and waiting for a deadline, every open circuit, the
/// catalogue's inbox counted, how the last day's tasks stand, and what is set up:
/// the home page's data.
#[utoipa::path(get, path = "/api/overview", tag = "tasks",
    responses((status = 200, description = "What needs a person", body = OverviewView)))]
pub async fn overview(State(services): State<Services>) -> Result<Json<OverviewView>, AppError> {
    Ok(Json(services.overview().await?))
}
