use api::{ApiError, OverviewView};
use leptos::prelude::*;

/// What needs a person: the home page's data.
#[server(prefix = "/fn", endpoint = "load_overview", output = api::JsonAnswer)]
pub async fn load_overview() -> Result<OverviewView, ApiError> {
    crate::backend::backend()?.overview().await
}
