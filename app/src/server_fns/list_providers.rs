use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::model::{ApiError, ProviderView};

/// The providers page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvidersData {
    /// Every provider, by name.
    pub providers: Vec<ProviderView>,
    /// Variable names the server allows for keys beyond `*_API_KEY`.
    pub allowed_key_envs: Vec<String>,
}

/// Every provider, and which key variables the server allows.
#[server(prefix = "/fn")]
pub async fn list_providers() -> Result<ProvidersData, ApiError> {
    crate::backend::with_status(
        async move {
            let backend = crate::backend::backend()?;
            Ok(ProvidersData {
                providers: backend.list_providers().await?,
                allowed_key_envs: backend.allowed_key_envs(),
            })
        }
        .await,
    )
}
