//! `/api/providers`: shells over [`Services`].

use api::{ApiError, ProviderId, ProviderRequest, ProviderView};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// List providers, by name.
#[utoipa::path(get, path = "/api/providers", tag = "providers",
    responses((status = 200, description = "Every provider", body = [ProviderView])))]
pub async fn list_providers(
    State(services): State<Services>,
) -> Result<Json<Vec<ProviderView>>, AppError> {
    Ok(Json(services.list_providers().await?))
}

/// Create a provider.
#[utoipa::path(post, path = "/api/providers", tag = "providers", request_body = ProviderRequest,
    responses(
        (status = 201, description = "Created", body = ProviderView),
        (status = 422, description = "Field errors, every one at once; nothing stored", body = ApiError),
    ))]
pub async fn create_provider(
    State(services): State<Services>,
    Body(request): Body<ProviderRequest>,
) -> Result<(StatusCode, Json<ProviderView>), AppError> {
    Ok((
        StatusCode::CREATED,
        Json(services.create_provider(request).await?),
    ))
}

/// One provider.
#[utoipa::path(get, path = "/api/providers/{id}", tag = "providers",
    params(("id" = ProviderId, Path, description = "Provider id")),
    responses(
        (status = 200, description = "The provider", body = ProviderView),
        (status = 404, description = "No such provider", body = ApiError),
    ))]
pub async fn get_provider(
    State(services): State<Services>,
    Path(id): Path<ProviderId>,
) -> Result<Json<ProviderView>, AppError> {
    Ok(Json(services.get_provider(&id).await?))
}

/// Replace a provider; the body carries the `revision` it was read at.
#[utoipa::path(put, path = "/api/providers/{id}", tag = "providers",
    request_body = api::openapi::ProviderUpdateSchema,
    params(("id" = ProviderId, Path, description = "Provider id")),
    responses(
        (status = 200, description = "Updated", body = ProviderView),
        (status = 404, description = "No such provider", body = ApiError),
        (status = 409, description = "Stale revision; nothing changed", body = ApiError),
        (status = 422, description = "Field errors, every one at once; nothing changed", body = ApiError),
    ))]
pub async fn update_provider(
    State(services): State<Services>,
    Path(id): Path<ProviderId>,
    Body(request): Body<ProviderRequest>,
) -> Result<Json<ProviderView>, AppError> {
    Ok(Json(services.update_provider(&id, request).await?))
}

/// Delete a provider that no profile uses.
#[utoipa::path(delete, path = "/api/providers/{id}", tag = "providers",
    params(("id" = ProviderId, Path, description = "Provider id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such provider", body = ApiError),
        (status = 409, description = "Used by a profile", body = ApiError),
    ))]
pub async fn delete_provider(
    State(services): State<Services>,
    Path(id): Path<ProviderId>,
) -> Result<StatusCode, AppError> {
    services.delete_provider(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
