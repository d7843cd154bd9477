use api::{ApiError, ClientKeyCreated, ClientKeyRequest};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Make a client key, with the same request type and checks as
/// `POST /api/client-keys`. The answer holds the key: the only time it is shown.
#[server(prefix = "/fn", endpoint = "create_client_key", input = Json, output = api::JsonAnswer)]
pub async fn create_client_key(request: ClientKeyRequest) -> Result<ClientKeyCreated, ApiError> {
    crate::backend::backend()?.create_client_key(request).await
}
