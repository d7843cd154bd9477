use api::{ApiError, ClientKeyView};
use leptos::prelude::*;

use serde::{Deserialize, Serialize};

use super::ProfileChoice;

/// The client keys page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientKeysData {
    /// Every client key, revoked ones too, oldest first.
    pub keys: Vec<ClientKeyView>,
    /// Every profile's id and name: what a key may be limited to.
    pub profiles: Vec<ProfileChoice>,
}

/// Every client key (never the key itself: only its first characters), and the
/// profiles a new one may use.
#[server(prefix = "/fn", endpoint = "list_client_keys", output = api::JsonAnswer)]
pub async fn list_client_keys() -> Result<ClientKeysData, ApiError> {
    let backend = crate::backend::backend()?;
    Ok(ClientKeysData {
        keys: backend.list_client_keys().await?,
        profiles: backend
            .list_profiles()
            .await?
            .into_iter()
            .map(|profile| ProfileChoice {
                id: profile.id,
                name: profile.name,
            })
            .collect(),
    })
}
