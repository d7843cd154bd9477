use api::{ApiError, CircuitClosedView, CloseCircuitRequest};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// A person's "Close now", fenced by the reset on their screen: a circuit that
/// changed since is left alone (409).
#[server(prefix = "/fn", endpoint = "close_circuit", input = Json, output = api::JsonAnswer)]
pub async fn close_circuit(request: CloseCircuitRequest) -> Result<CircuitClosedView, ApiError> {
    crate::backend::backend()?.close_circuit(request).await
}
