use api::{ApiError, ProviderId, ProviderRequest, ProviderView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Create (`id` `None`) or update a provider, with the same request type and
/// checks as the JSON API.
#[server(prefix = "/fn", endpoint = "save_provider", input = Json, output = api::JsonAnswer)]
pub async fn save_provider(
    id: Option<ProviderId>,
    request: ProviderRequest,
) -> Result<ProviderView, ApiError> {
    crate::backend::backend()?.save_provider(id, request).await
}
