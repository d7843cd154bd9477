//! What server functions call on the server: implemented by the `server`
//! crate over its services and provided as context, so the app never sees
//! the store.

use std::sync::Arc;

use api::{
    ApiError, KeyEnvRules, ProfileId, ProfileRequest, ProfileView, ProviderId, ProviderRequest,
    ProviderView,
};
use leptos::prelude::use_context;

/// The server's operations, as the app needs them.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Which key variables providers may use (`--allow-key-env`).
    fn key_env_rules(&self) -> KeyEnvRules;
    /// Every provider, by name.
    async fn list_providers(&self) -> Result<Vec<ProviderView>, ApiError>;
    /// Create (`id` `None`) or update a provider.
    async fn save_provider(
        &self,
        id: Option<ProviderId>,
        request: ProviderRequest,
    ) -> Result<ProviderView, ApiError>;
    /// Every profile, by name.
    async fn list_profiles(&self) -> Result<Vec<ProfileView>, ApiError>;
    /// One profile.
    async fn get_profile(&self, id: &ProfileId) -> Result<ProfileView, ApiError>;
    /// Create (`id` `None`) or update a profile.
    async fn save_profile(
        &self,
        id: Option<ProfileId>,
        request: ProfileRequest,
    ) -> Result<ProfileView, ApiError>;
}

/// The shared handle the server provides.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend from context (the server provides it for every request).
pub fn backend() -> Result<SharedBackend, ApiError> {
    use_context::<SharedBackend>().ok_or_else(ApiError::internal)
}
