use api::{ApiError, KeyEnvRules, ProviderView};
use leptos::prelude::*;

use serde::{Deserialize, Serialize};

/// The providers page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvidersData {
    /// Every provider, by name.
    pub providers: Vec<ProviderView>,
    /// Which key variables the server lets providers use.
    pub key_envs: KeyEnvRules,
}

/// Every provider, and which key variables the server allows.
#[server(prefix = "/fn", endpoint = "list_providers", output = api::JsonAnswer)]
pub async fn list_providers() -> Result<ProvidersData, ApiError> {
    let backend = crate::backend::backend()?;
    Ok(ProvidersData {
        providers: backend.list_providers().await?,
        key_envs: backend.key_env_rules(),
    })
}
