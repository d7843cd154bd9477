use api::{ApiError, PauseRequest, PausesView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Pause or resume automatic recovery, everywhere or on one provider.
#[server(prefix = "/fn", endpoint = "set_pause", input = Json, output = api::JsonAnswer)]
pub async fn set_pause(request: PauseRequest) -> Result<PausesView, ApiError> {
    crate::backend::backend()?.set_pause(request).await
}
