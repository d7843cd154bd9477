use api::{ApiError, TaskId, TaskView, Timestamp};
use leptos::prelude::*;

/// One task with its route, attempts and turns, and the server's clock when it
/// was read (what the countdown counts from).
#[server(prefix = "/fn", endpoint = "load_task", output = api::JsonAnswer)]
pub async fn load_task(id: TaskId) -> Result<(TaskView, Timestamp), ApiError> {
    let backend = crate::backend::backend()?;
    Ok((backend.get_task(&id).await?, backend.now()))
}
