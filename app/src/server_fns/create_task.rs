use api::{ApiError, TaskRequest, TaskView};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Start a task, with the same request type and checks as `POST /api/tasks`.
#[server(prefix = "/fn", endpoint = "create_task", input = Json, output = api::JsonAnswer)]
pub async fn create_task(request: TaskRequest) -> Result<TaskView, ApiError> {
    crate::backend::backend()?.create_task(request).await
}
