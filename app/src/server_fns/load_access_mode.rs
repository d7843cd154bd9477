use api::ApiError;
use leptos::prelude::*;

use crate::layout::AccessMode;

/// Whether an admin token guards the server (a person using the pages has a
/// session to end) or it is open on loopback.
#[server(prefix = "/fn", endpoint = "load_access_mode", output = api::JsonAnswer)]
pub async fn load_access_mode() -> Result<AccessMode, ApiError> {
    Ok(use_context::<AccessMode>().unwrap_or_default())
}
