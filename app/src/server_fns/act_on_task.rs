use api::{ActionRequest, ApiError, TaskId, TaskView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// A person's action on a route, fenced by the generation on their screen: a
/// stale one is refused (409) with the route as it is now.
#[server(prefix = "/fn", endpoint = "act_on_task", input = Json, output = api::JsonAnswer)]
pub async fn act_on_task(id: TaskId, request: ActionRequest) -> Result<TaskView, ApiError> {
    crate::backend::backend()?.act(&id, request).await
}
