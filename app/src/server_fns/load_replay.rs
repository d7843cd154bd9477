use api::{ApiError, ReplayQuery, ReplayView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// The stored calls the editor's dry run plays a draft policy against.
#[server(prefix = "/fn", endpoint = "load_replay", input = Json, output = api::JsonAnswer)]
pub async fn load_replay(query: ReplayQuery) -> Result<ReplayView, ApiError> {
    crate::backend::backend()?.replay(query).await
}
