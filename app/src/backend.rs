//! What server functions call on the server: implemented by the `server`
//! crate over its services and provided as context, so the app never sees
//! the store.

use std::sync::Arc;

use leptos::prelude::use_context;
use serde_json::Value;

use crate::model::{ApiError, ProfileView, ProviderView};

/// The server's operations, as the app needs them.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Variable names allowed for keys beyond `*_API_KEY` (`--allow-key-env`).
    fn allowed_key_envs(&self) -> Vec<String>;
    /// Every provider, by name.
    async fn list_providers(&self) -> Result<Vec<ProviderView>, ApiError>;
    /// Create (`id` `None`) or update a provider from an API body.
    async fn save_provider(
        &self,
        id: Option<String>,
        body: Value,
    ) -> Result<ProviderView, ApiError>;
    /// Every profile, by name.
    async fn list_profiles(&self) -> Result<Vec<ProfileView>, ApiError>;
    /// One profile.
    async fn get_profile(&self, id: &str) -> Result<ProfileView, ApiError>;
    /// Create (`id` `None`) or update a profile from an API body.
    async fn save_profile(&self, id: Option<String>, body: Value) -> Result<ProfileView, ApiError>;
}

/// The shared handle the server provides.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend from context (the server provides it for every request).
pub fn backend() -> Result<SharedBackend, ApiError> {
    use_context::<SharedBackend>()
        .ok_or_else(|| ApiError::Internal("no backend in context".to_owned()))
}

/// Answer a server function's error with its HTTP status (422 for field
/// errors, 404, 409, ...) rather than a blanket 500, so logs and proxies
/// see user errors as user errors. The browser decodes the error either way.
pub fn with_status<T>(result: Result<T, ApiError>) -> Result<T, ApiError> {
    if let (Err(error), Some(response)) = (&result, use_context::<leptos_axum::ResponseOptions>()) {
        let status = match error {
            ApiError::Invalid(_) => http::StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotFound(_) => http::StatusCode::NOT_FOUND,
            ApiError::Stale { .. } | ApiError::InUse(_) => http::StatusCode::CONFLICT,
            ApiError::Transport(_) => http::StatusCode::BAD_REQUEST,
            ApiError::Internal(_) => http::StatusCode::INTERNAL_SERVER_ERROR,
        };
        response.set_status(status);
    }
    result
}
