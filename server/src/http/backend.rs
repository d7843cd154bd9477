//! The app's [`Backend`], over the services: what server functions call.

use api::read::Read;
use api::{
    ActionRequest, ApiError, ClientKeyCreated, ClientKeyId, ClientKeyRequest, ClientKeyView,
    KeyEnvRules, ProfileId, ProfileRequest, ProfileView, ProviderId, ProviderRequest, ProviderView,
    TaskId, TaskPage, TaskQuery, TaskRequest, TaskView, Timestamp,
};
use app::backend::Backend;

use crate::error::AppError;
use crate::services::Services;

#[async_trait::async_trait]
impl Backend for Services {
    fn key_env_rules(&self) -> KeyEnvRules {
        self.key_envs.clone()
    }

    async fn list_providers(&self) -> Result<Vec<ProviderView>, ApiError> {
        Services::list_providers(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn save_provider(
        &self,
        id: Option<ProviderId>,
        request: ProviderRequest,
    ) -> Result<ProviderView, ApiError> {
        let request = Read::clean(&request);
        match id {
            Some(id) => self.update_provider(&id, request).await,
            None => self.create_provider(request).await,
        }
        .map_err(AppError::into_api_error)
    }

    async fn list_profiles(&self) -> Result<Vec<ProfileView>, ApiError> {
        Services::list_profiles(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn get_profile(&self, id: &ProfileId) -> Result<ProfileView, ApiError> {
        Services::get_profile(self, id)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn save_profile(
        &self,
        id: Option<ProfileId>,
        request: ProfileRequest,
    ) -> Result<ProfileView, ApiError> {
        let request = Read::clean(&request);
        match id {
            Some(id) => self.update_profile(&id, request).await,
            None => self.create_profile(request).await,
        }
        .map_err(AppError::into_api_error)
    }

    async fn list_tasks(&self, query: TaskQuery) -> Result<TaskPage, ApiError> {
        Services::list_tasks(self, query)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn get_task(&self, id: &TaskId) -> Result<TaskView, ApiError> {
        Services::get_task(self, id)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn create_task(&self, request: TaskRequest) -> Result<TaskView, ApiError> {
        Services::create_task(self, Read::clean(&request), None)
            .await
            .map(|(task, _)| task)
            .map_err(AppError::into_api_error)
    }

    async fn act(&self, id: &TaskId, request: ActionRequest) -> Result<TaskView, ApiError> {
        Services::act(self, id, Read::clean(&request))
            .await
            .map_err(AppError::into_api_error)
    }

    async fn catalogue_inbox(&self) -> Result<api::InboxView, ApiError> {
        Services::catalogue_inbox(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn overview(&self) -> Result<api::OverviewView, ApiError> {
        Services::overview(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn circuits(&self) -> Result<api::CircuitsView, ApiError> {
        Services::circuits(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn close_circuit(
        &self,
        request: api::CloseCircuitRequest,
    ) -> Result<api::CircuitClosedView, ApiError> {
        Services::close_circuit(self, Read::clean(&request))
            .await
            .map_err(AppError::into_api_error)
    }

    async fn pauses(&self) -> Result<api::PausesView, ApiError> {
        Services::pauses(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn set_pause(&self, request: api::PauseRequest) -> Result<api::PausesView, ApiError> {
        Services::set_pause(self, Read::clean(&request))
            .await
            .map_err(AppError::into_api_error)
    }

    async fn replay(&self, query: api::ReplayQuery) -> Result<api::ReplayView, ApiError> {
        Services::replay_calls(self, query)
            .await
            .map_err(AppError::into_api_error)
    }

    fn pause_notice(&self) -> api::PauseNotice {
        Services::pause_notice(self)
    }

    async fn reclassify(&self) -> Result<api::ReclassifyView, ApiError> {
        Services::reclassify(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn list_client_keys(&self) -> Result<Vec<ClientKeyView>, ApiError> {
        Services::list_client_keys(self)
            .await
            .map_err(AppError::into_api_error)
    }

    async fn create_client_key(
        &self,
        request: ClientKeyRequest,
    ) -> Result<ClientKeyCreated, ApiError> {
        Services::create_client_key(self, Read::clean(&request))
            .await
            .map_err(AppError::into_api_error)
    }

    async fn revoke_client_key(&self, id: &ClientKeyId) -> Result<ClientKeyView, ApiError> {
        Services::revoke_client_key(self, id)
            .await
            .map_err(AppError::into_api_error)
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }
}
