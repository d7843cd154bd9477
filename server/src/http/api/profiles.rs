//! `/api/profiles`: shells over [`Services`].

use api::{ApiError, ProfileId, ProfileRequest, ProfileView};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// List dynamic profiles, by name, with their candidates.
#[utoipa::path(get, path = "/api/profiles", tag = "profiles",
    responses((status = 200, description = "Every profile", body = [ProfileView])))]
pub async fn list_profiles(
    State(services): State<Services>,
) -> Result<Json<Vec<ProfileView>>, AppError> {
    Ok(Json(services.list_profiles().await?))
}

/// Create a dynamic profile. Policies may be version 2, version 1 (normalized)
/// or absent (defaults); the answer holds the stored version-2 documents.
#[utoipa::path(post, path = "/api/profiles", tag = "profiles", request_body = ProfileRequest,
    responses(
        (status = 201, description = "Created", body = ProfileView),
        (status = 422, description = "Field errors, every one at once (a provider or candidate id that does not exist, a name already taken, a conflicting version-1 map, ...); nothing stored", body = ApiError),
    ))]
pub async fn create_profile(
    State(services): State<Services>,
    Body(request): Body<ProfileRequest>,
) -> Result<(StatusCode, Json<ProfileView>), AppError> {
    Ok((
        StatusCode::CREATED,
        Json(services.create_profile(request).await?),
    ))
}

/// One dynamic profile.
#[utoipa::path(get, path = "/api/profiles/{id}", tag = "profiles",
    params(("id" = ProfileId, Path, description = "Profile id")),
    responses(
        (status = 200, description = "The profile", body = ProfileView),
        (status = 404, description = "No such profile", body = ApiError),
    ))]
pub async fn get_profile(
    State(services): State<Services>,
    Path(id): Path<ProfileId>,
) -> Result<Json<ProfileView>, AppError> {
    Ok(Json(services.get_profile(&id).await?))
}

/// Replace a profile's name and candidates; the body carries the `revision`
/// it was read at. Candidates sent with their `id` keep it; new ones get one.
#[utoipa::path(put, path = "/api/profiles/{id}", tag = "profiles",
    request_body = api::openapi::ProfileUpdateSchema,
    params(("id" = ProfileId, Path, description = "Profile id")),
    responses(
        (status = 200, description = "Updated", body = ProfileView),
        (status = 404, description = "No such profile", body = ApiError),
        (status = 409, description = "Stale revision; nothing changed", body = ApiError),
        (status = 422, description = "Field errors, every one at once; nothing changed", body = ApiError),
    ))]
pub async fn update_profile(
    State(services): State<Services>,
    Path(id): Path<ProfileId>,
    Body(request): Body<ProfileRequest>,
) -> Result<Json<ProfileView>, AppError> {
    Ok(Json(services.update_profile(&id, request).await?))
}

/// Delete a profile.
#[utoipa::path(delete, path = "/api/profiles/{id}", tag = "profiles",
    params(("id" = ProfileId, Path, description = "Profile id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such profile", body = ApiError),
        (status = 409, description = "Unfinished tasks use it; nothing deleted", body = ApiError),
    ))]
pub async fn delete_profile(
    State(services): State<Services>,
    Path(id): Path<ProfileId>,
) -> Result<StatusCode, AppError> {
    services.delete_profile(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
