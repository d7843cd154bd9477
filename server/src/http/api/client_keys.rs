//! `/api/client-keys`: shells over [`Services`].

use api::{ApiError, ClientKeyCreated, ClientKeyId, ClientKeyRequest, ClientKeyView};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;

use super::body::Body;
use crate::error::AppError;
use crate::services::Services;

/// List client keys, newest first (never the keys themselves).
#[utoipa::path(get, path = "/api/client-keys", tag = "gateway",
    responses((status = 200, description = "Every client key", body = [ClientKeyView])))]
pub async fn list_client_keys(
    State(services): State<Services>,
) -> Result<Json<Vec<ClientKeyView>>, AppError> {
    Ok(Json(services.list_client_keys().await?))
}

/// Make a client key for gateway callers; the answer is the only time the key
/// is shown.
#[utoipa::path(post, path = "/api/client-keys", tag = "gateway", request_body = ClientKeyRequest,
    responses(
        (status = 201, description = "Made: the key, shown once", body = ClientKeyCreated),
        (status = 422, description = "Field errors, every one at once; nothing stored", body = ApiError),
    ))]
pub async fn create_client_key(
    State(services): State<Services>,
    Body(request): Body<ClientKeyRequest>,
) -> Result<(StatusCode, Json<ClientKeyCreated>), AppError> {
    Ok((
        StatusCode::CREATED,
        Json(services.create_client_key(request).await?),
    ))
}

/// Revoke a client key: gateway calls with it are refused from now on.
#[utoipa::path(delete, path = "/api/client-keys/{id}", tag = "gateway",
    params(("id" = ClientKeyId, Path, description = "Client key id")),
    responses(
        (status = 200, description = "Revoked (or already so)", body = ClientKeyView),
        (status = 404, description = "No such client key", body = ApiError),
    ))]
pub async fn revoke_client_key(
    State(services): State<Services>,
    Path(id): Path<ClientKeyId>,
) -> Result<Json<ClientKeyView>, AppError> {
    Ok(Json(services.revoke_client_key(&id).await?))
}
