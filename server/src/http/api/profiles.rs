//! `/api/profiles`: shells over [`Services`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;

use super::body::JsonBody;
use app::model::openapi::{ErrorBody, FieldErrorsBody, ProfileRequest};
use app::model::ProfileView;

use crate::error::AppError;
use crate::http::views::profile_view;
use crate::services::Services;

/// List dynamic profiles, by name, with their candidates.
#[utoipa::path(get, path = "/api/profiles", tag = "profiles",
    responses((status = 200, description = "Every profile", body = [ProfileView])))]
pub async fn list_profiles(
    State(services): State<Services>,
) -> Result<Json<Vec<ProfileView>>, AppError> {
    let profiles = services.list_profiles().await?;
    Ok(Json(profiles.into_iter().map(profile_view).collect()))
}

/// Create a dynamic profile. Policies may be version 2, version 1 (normalized)
/// or absent (defaults); the answer holds the stored version-2 documents.
#[utoipa::path(post, path = "/api/profiles", tag = "profiles", request_body = ProfileRequest,
    responses(
        (status = 201, description = "Created", body = ProfileView),
        (status = 400, description = "Not JSON", body = ErrorBody),
        (status = 415, description = "Not declared as JSON", body = ErrorBody),
        (status = 422, description = "Field errors; nothing stored", body = FieldErrorsBody),
    ))]
pub async fn create_profile(
    State(services): State<Services>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<ProfileView>), AppError> {
    let profile = services.create_profile(&body).await?;
    Ok((StatusCode::CREATED, Json(profile_view(profile))))
}

/// One dynamic profile.
#[utoipa::path(get, path = "/api/profiles/{id}", tag = "profiles",
    params(("id" = String, Path, description = "Profile id")),
    responses(
        (status = 200, description = "The profile", body = ProfileView),
        (status = 404, description = "No such profile", body = ErrorBody),
    ))]
pub async fn get_profile(
    State(services): State<Services>,
    Path(id): Path<String>,
) -> Result<Json<ProfileView>, AppError> {
    Ok(Json(profile_view(services.get_profile(&id).await?)))
}

/// Replace a profile's name and candidates; the body carries the `revision`
/// it was read at. Candidates sent with their `id` keep it; new ones get one.
#[utoipa::path(put, path = "/api/profiles/{id}", tag = "profiles", request_body = ProfileRequest,
    params(("id" = String, Path, description = "Profile id")),
    responses(
        (status = 200, description = "Updated", body = ProfileView),
        (status = 404, description = "No such profile", body = ErrorBody),
        (status = 409, description = "Stale revision; nothing changed", body = ErrorBody),
        (status = 400, description = "Not JSON", body = ErrorBody),
        (status = 422, description = "Field errors; nothing changed", body = FieldErrorsBody),
    ))]
pub async fn update_profile(
    State(services): State<Services>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<ProfileView>, AppError> {
    Ok(Json(profile_view(
        services.update_profile(&id, &body).await?,
    )))
}

/// Delete a profile.
#[utoipa::path(delete, path = "/api/profiles/{id}", tag = "profiles",
    params(("id" = String, Path, description = "Profile id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such profile", body = ErrorBody),
    ))]
pub async fn delete_profile(
    State(services): State<Services>,
    Path(id): Path<String>,
) -> Result<StatusCode, AppError> {
    services.delete_profile(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
