use api::{ApiError, ClientKeyId, ClientKeyView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Revoke a client key, as `DELETE /api/client-keys/{id}` does: the gateway
/// refuses it from then on, and it stays listed as revoked.
#[server(prefix = "/fn", endpoint = "revoke_client_key", input = Json, output = api::JsonAnswer)]
pub async fn revoke_client_key(id: ClientKeyId) -> Result<ClientKeyView, ApiError> {
    crate::backend::backend()?.revoke_client_key(&id).await
}
