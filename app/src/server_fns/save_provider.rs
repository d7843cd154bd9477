use leptos::prelude::*;

use crate::model::{ApiError, ProviderView};

/// Create (`id` `None`) or update a provider from the API's JSON body.
#[server(prefix = "/fn")]
pub async fn save_provider(id: Option<String>, body: String) -> Result<ProviderView, ApiError> {
    crate::backend::with_status(
        async move {
            let body = serde_json::from_str(&body)
                .map_err(|error| ApiError::Transport(error.to_string()))?;
            crate::backend::backend()?.save_provider(id, body).await
        }
        .await,
    )
}
