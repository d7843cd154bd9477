use policy::{normalize_provider, normalize_provider_update, ProviderDraft};
use serde_json::Value;

use super::{new_id, Services};
use crate::domain::{Provider, ProviderWrite};
use crate::error::AppError;

impl Services {
    /// Every provider, by name.
    pub async fn list_providers(&self) -> Result<Vec<Provider>, AppError> {
        Ok(self.store.list_providers().await?)
    }

    /// One provider.
    pub async fn get_provider(&self, id: &str) -> Result<Provider, AppError> {
        Ok(self.store.get_provider(id).await?)
    }

    /// Create a provider from a request body.
    pub async fn create_provider(&self, body: &Value) -> Result<Provider, AppError> {
        let draft = normalize_provider(body, &self.allowed_key_envs).map_err(AppError::Invalid)?;
        let write = self.provider_write(new_id(), draft);
        Ok(self.store.create_provider(write).await?)
    }

    /// Replace a provider from a request body carrying the revision it was read at.
    pub async fn update_provider(&self, id: &str, body: &Value) -> Result<Provider, AppError> {
        let draft =
            normalize_provider_update(body, &self.allowed_key_envs).map_err(AppError::Invalid)?;
        let revision = revision_of(draft.revision);
        let write = self.provider_write(id.to_owned(), draft);
        Ok(self.store.update_provider(write, revision).await?)
    }

    /// Delete a provider that no profile uses.
    pub async fn delete_provider(&self, id: &str) -> Result<(), AppError> {
        Ok(self.store.delete_provider(id).await?)
    }

    fn provider_write(&self, id: String, draft: ProviderDraft) -> ProviderWrite {
        ProviderWrite {
            id,
            name: draft.name,
            kind: draft.kind,
            family: draft.family,
            base_url: draft.base_url,
            api_key_env: draft.api_key_env,
            now_ms: self.clock.now_ms(),
        }
    }
}

/// Validated revisions are at least 1 and fit an `i64`.
pub(super) fn revision_of(revision: Option<u64>) -> i64 {
    revision
        .and_then(|revision| i64::try_from(revision).ok())
        .unwrap_or(0)
}
