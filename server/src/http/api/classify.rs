//! `POST /api/classify`: the catalogue over HTTP.

use api::{ApiError, Classification, EvidenceRequest, InboxView, ReclassifyView};
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

/// The failures the catalogue was unsure of (`unknown`, or `low` or `medium`
/// confidence), grouped by provider and message, each with its latest evidence as
/// a fixture file to fill in.
#[utoipa::path(get, path = "/api/catalogue/inbox", tag = "catalogue",
    responses((status = 200, description = "The groups, the most frequent first", body = InboxView)))]
pub async fn inbox(State(services): State<Services>) -> Result<Json<InboxView>, AppError> {
    Ok(Json(services.catalogue_inbox().await?))
}

/// The evidence stored with the latest attempts, read again by the current
/// catalogue: the attempts it would now read differently. Nothing changes.
#[utoipa::path(get, path = "/api/catalogue/reclassify", tag = "catalogue",
    responses((status = 200, description = "What the current catalogue reads differently", body = ReclassifyView)))]
pub async fn reclassify(
    State(services): State<Services>,
) -> Result<Json<ReclassifyView>, AppError> {
    Ok(Json(services.reclassify().await?))
}
