use api::{ApiError, CircuitsView, PausesView};
use leptos::prelude::*;

/// Every open or half-open circuit and the last day's history, and what is
/// paused: the circuits page's data.
#[server(prefix = "/fn", endpoint = "load_circuits", output = api::JsonAnswer)]
pub async fn load_circuits() -> Result<(CircuitsView, PausesView), ApiError> {
    let backend = crate::backend::backend()?;
    Ok((backend.circuits().await?, backend.pauses().await?))
}
