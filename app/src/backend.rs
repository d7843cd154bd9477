//! What server functions call on the server: implemented by the `server`
//! crate over its services and provided as context, so the app never sees
//! the store.

use std::sync::Arc;

use api::{
    ActionRequest, ApiError, CircuitClosedView, CircuitsView, ClientKeyCreated, ClientKeyId,
    ClientKeyRequest, ClientKeyView, CloseCircuitRequest, InboxView, KeyEnvRules, OverviewView,
    PauseNotice, PauseRequest, PausesView, ProfileId, ProfileRequest, ProfileView, ProviderId,
    ProviderRequest, ProviderView, ReclassifyView, ReplayQuery, ReplayView, TaskId, TaskPage,
    TaskQuery, TaskRequest, TaskView, Timestamp,
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
    /// Tasks newest first, as `GET /api/tasks` answers them.
    async fn list_tasks(&self, query: TaskQuery) -> Result<TaskPage, ApiError>;
    /// One task with its route, attempts and turns.
    async fn get_task(&self, id: &TaskId) -> Result<TaskView, ApiError>;
    /// Start a task, with the same checks as `POST /api/tasks`.
    async fn create_task(&self, request: TaskRequest) -> Result<TaskView, ApiError>;
    /// A person's action on a route, fenced by the generation they saw.
    async fn act(&self, id: &TaskId, request: ActionRequest) -> Result<TaskView, ApiError>;
    /// Every client key, as `GET /api/client-keys` answers them.
    async fn list_client_keys(&self) -> Result<Vec<ClientKeyView>, ApiError>;
    /// Make a client key, with the same checks as `POST /api/client-keys`.
    async fn create_client_key(
        &self,
        request: ClientKeyRequest,
    ) -> Result<ClientKeyCreated, ApiError>;
    /// Revoke a client key.
    async fn revoke_client_key(&self, id: &ClientKeyId) -> Result<ClientKeyView, ApiError>;
    /// The catalogue's inbox, as `GET /api/catalogue/inbox` answers it.
    async fn catalogue_inbox(&self) -> Result<InboxView, ApiError>;
    /// Stored evidence read again, as `GET /api/catalogue/reclassify` answers.
    async fn reclassify(&self) -> Result<ReclassifyView, ApiError>;
    /// What needs a person, as `GET /api/overview` answers it.
    async fn overview(&self) -> Result<OverviewView, ApiError>;
    /// Every circuit and the last day's history, as `GET /api/circuits` answers.
    async fn circuits(&self) -> Result<CircuitsView, ApiError>;
    /// A person's "Close now", as `POST /api/circuits/close` does it.
    async fn close_circuit(
        &self,
        request: CloseCircuitRequest,
    ) -> Result<CircuitClosedView, ApiError>;
    /// What is paused, as `GET /api/pauses` answers.
    async fn pauses(&self) -> Result<PausesView, ApiError>;
    /// Pause or resume, as `POST /api/pauses` does it.
    async fn set_pause(&self, request: PauseRequest) -> Result<PausesView, ApiError>;
    /// The stored calls a dry run plays a draft against, as `GET /api/replay`.
    async fn replay(&self, query: ReplayQuery) -> Result<ReplayView, ApiError>;
    /// What the top bar says is paused (no read of the store).
    fn pause_notice(&self) -> PauseNotice;
    /// The server's clock: countdowns count to its deadlines.
    fn now(&self) -> Timestamp;
}

/// The shared handle the server provides.
pub type SharedBackend = Arc<dyn Backend>;

/// The backend from context (the server provides it for every request).
pub fn backend() -> Result<SharedBackend, ApiError> {
    use_context::<SharedBackend>().ok_or_else(ApiError::internal)
}
