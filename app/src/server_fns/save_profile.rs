use leptos::prelude::*;

use crate::model::{ApiError, ProfileView};

/// Create (`id` `None`) or update a profile. `body` is the API's JSON body,
/// so the browser and the API are validated by the same code.
#[server(prefix = "/fn")]
pub async fn save_profile(id: Option<String>, body: String) -> Result<ProfileView, ApiError> {
    crate::backend::with_status(
        async move {
            let body = serde_json::from_str(&body)
                .map_err(|error| ApiError::Transport(error.to_string()))?;
            crate::backend::backend()?.save_profile(id, body).await
        }
        .await,
    )
}
