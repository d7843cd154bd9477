use api::{ApiError, ProfileId};
use leptos::prelude::*;

use serde::{Deserialize, Serialize};

/// A profile as **New task** offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileChoice {
    /// Its id, which the task request names.
    pub id: ProfileId,
    /// Its name, which the choice shows.
    pub name: String,
}

/// Every profile's id and name, in the store's order: what **New task**
/// chooses from. Only these two, so the task list neither sends nor reads
/// whole profiles and their policies.
#[server(prefix = "/fn", endpoint = "list_profile_choices", output = api::JsonAnswer)]
pub async fn list_profile_choices() -> Result<Vec<ProfileChoice>, ApiError> {
    let profiles = crate::backend::backend()?.list_profiles().await?;
    Ok(profiles
        .into_iter()
        .map(|profile| ProfileChoice {
            id: profile.id,
            name: profile.name,
        })
        .collect())
}
