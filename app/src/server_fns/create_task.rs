use api::{ApiError, TaskId, TaskRequest};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;

/// Start a task, with the same request type and checks as `POST /api/tasks`.
/// The page only goes on to the new task's route view, so the answer is its
/// id, not the whole `TaskView` (whose reader would be in the list's chunk).
#[server(prefix = "/fn", endpoint = "create_task", input = Json, output = api::JsonAnswer)]
pub async fn create_task(request: TaskRequest) -> Result<TaskId, ApiError> {
    Ok(crate::backend::backend()?.create_task(request).await?.id)
}
