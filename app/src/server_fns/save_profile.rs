use api::{ApiError, ProfileId, ProfileRequest, ProfileView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Create (`id` `None`) or update a profile, with the same request type and
/// checks as the JSON API.
#[server(prefix = "/fn", endpoint = "save_profile", input = Json, output = api::JsonAnswer)]
pub async fn save_profile(
    id: Option<ProfileId>,
    request: ProfileRequest,
) -> Result<ProfileView, ApiError> {
    crate::backend::backend()?.save_profile(id, request).await
}
