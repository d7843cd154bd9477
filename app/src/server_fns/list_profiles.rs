use api::{ApiError, ProfileView, ProviderView};
use leptos::prelude::*;

/// Every profile and every provider (to name each candidate's provider).
#[server(prefix = "/fn", endpoint = "list_profiles", output = api::JsonAnswer)]
pub async fn list_profiles() -> Result<(Vec<ProfileView>, Vec<ProviderView>), ApiError> {
    let backend = crate::backend::backend()?;
    Ok((
        backend.list_profiles().await?,
        backend.list_providers().await?,
    ))
}
