//! `/api/providers`: shells over [`Services`].

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;

use super::body::JsonBody;
use app::model::openapi::{ErrorBody, FieldErrorsBody, ProviderRequest};
use app::model::ProviderView;

use crate::error::AppError;
use crate::http::views::provider_view;
use crate::services::Services;

/// List providers, by name.
#[utoipa::path(get, path = "/api/providers", tag = "providers",
    responses((status = 200, description = "Every provider", body = [ProviderView])))]
pub async fn list_providers(
    State(services): State<Services>,
) -> Result<Json<Vec<ProviderView>>, AppError> {
    let providers = services.list_providers().await?;
    Ok(Json(providers.into_iter().map(provider_view).collect()))
}

/// Create a provider.
#[utoipa::path(post, path = "/api/providers", tag = "providers", request_body = ProviderRequest,
    responses(
        (status = 201, description = "Created", body = ProviderView),
        (status = 400, description = "Not JSON", body = ErrorBody),
        (status = 415, description = "Not declared as JSON", body = ErrorBody),
        (status = 422, description = "Field errors; nothing stored", body = FieldErrorsBody),
    ))]
pub async fn create_provider(
    State(services): State<Services>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<ProviderView>), AppError> {
    let provider = services.create_provider(&body).await?;
    Ok((StatusCode::CREATED, Json(provider_view(provider))))
}

/// One provider.
#[utoipa::path(get, path = "/api/providers/{id}", tag = "providers",
    params(("id" = String, Path, description = "Provider id")),
    responses(
        (status = 200, description = "The provider", body = ProviderView),
        (status = 404, description = "No such provider", body = ErrorBody),
    ))]
pub async fn get_provider(
    State(services): State<Services>,
    Path(id): Path<String>,
) -> Result<Json<ProviderView>, AppError> {
    Ok(Json(provider_view(services.get_provider(&id).await?)))
}

/// Replace a provider; the body carries the `revision` it was read at.
#[utoipa::path(put, path = "/api/providers/{id}", tag = "providers", request_body = ProviderRequest,
    params(("id" = String, Path, description = "Provider id")),
    responses(
        (status = 200, description = "Updated", body = ProviderView),
        (status = 404, description = "No such provider", body = ErrorBody),
        (status = 409, description = "Stale revision; nothing changed", body = ErrorBody),
        (status = 422, description = "Field errors; nothing changed", body = FieldErrorsBody),
    ))]
pub async fn update_provider(
    State(services): State<Services>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<Json<ProviderView>, AppError> {
    Ok(Json(provider_view(
        services.update_provider(&id, &body).await?,
    )))
}

/// Delete a provider that no profile uses.
#[utoipa::path(delete, path = "/api/providers/{id}", tag = "providers",
    params(("id" = String, Path, description = "Provider id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such provider", body = ErrorBody),
        (status = 409, description = "Used by a profile", body = ErrorBody),
    ))]
pub async fn delete_provider(
    State(services): State<Services>,
    Path(id): Path<String>,
) -> Result<StatusCode, AppError> {
    services.delete_provider(&id).await?;
    Ok(StatusCode::NO_CONTENT)
}
