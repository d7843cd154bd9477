//! The app's [`Backend`], over the services: what server functions call.

use app::backend::Backend;
use app::model::{ApiError, ProfileView, ProviderView};
use serde_json::Value;

use super::views::{profile_view, provider_view};
use crate::error::AppError;
use crate::services::Services;

impl From<AppError> for ApiError {
    fn from(error: AppError) -> Self {
        match error {
            AppError::Invalid(errors) => Self::Invalid(errors),
            AppError::NotFound { .. } => Self::NotFound(error.to_string()),
            AppError::StaleRevision { current, .. } => Self::Stale {
                current_revision: current,
            },
            AppError::InUse(message) => Self::InUse(message),
            AppError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                Self::Internal("see the server log".to_owned())
            }
            other => Self::Transport(other.to_string()),
        }
    }
}

#[async_trait::async_trait]
impl Backend for Services {
    fn allowed_key_envs(&self) -> Vec<String> {
        self.allowed_key_envs.to_vec()
    }

    async fn list_providers(&self) -> Result<Vec<ProviderView>, ApiError> {
        Ok(Services::list_providers(self)
            .await?
            .into_iter()
            .map(provider_view)
            .collect())
    }

    async fn save_provider(
        &self,
        id: Option<String>,
        body: Value,
    ) -> Result<ProviderView, ApiError> {
        let provider = match id {
            Some(id) => self.update_provider(&id, &body).await?,
            None => self.create_provider(&body).await?,
        };
        Ok(provider_view(provider))
    }

    async fn list_profiles(&self) -> Result<Vec<ProfileView>, ApiError> {
        Ok(Services::list_profiles(self)
            .await?
            .into_iter()
            .map(profile_view)
            .collect())
    }

    async fn get_profile(&self, id: &str) -> Result<ProfileView, ApiError> {
        Ok(profile_view(Services::get_profile(self, id).await?))
    }

    async fn save_profile(&self, id: Option<String>, body: Value) -> Result<ProfileView, ApiError> {
        let profile = match id {
            Some(id) => self.update_profile(&id, &body).await?,
            None => self.create_profile(&body).await?,
        };
        Ok(profile_view(profile))
    }
}
