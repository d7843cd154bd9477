//! `POST /api/classify`: the catalogue over HTTP.

use api::{ApiError, Classification, EvidenceRequest};
use axum::Json;
use axum::extract::State;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// Classify one piece of evidence from a failed attempt (SPEC 2).
#[utoipa::path(post, path = "/api/classify", tag = "catalogue", request_body = EvidenceRequest,
    responses(
        (status = 200, description = "The classification (SPEC 2.5)", body = Classification),
        (status = 422, description = "Not evidence: field errors", body = ApiError),
    ))]
pub async fn classify(
    State(services): State<Services>,
    Body(request): Body<EvidenceRequest>,
) -> Result<Json<Classification>, AppError> {
    Ok(Json(services.classify(request)?))
}
