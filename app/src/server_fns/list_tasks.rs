use api::{ApiError, TaskPage, Timestamp};
use leptos::prelude::*;

use leptos::server_fn::codec::Json;
use policy::route::RouteState;
use serde::{Deserialize, Serialize};

/// The task list's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TasksData {
    /// The newest tasks, in the state asked for.
    pub page: TaskPage,
    /// The server's clock when this was read: what countdowns count from.
    pub now: Timestamp,
}

/// The newest tasks (optionally in one state), and the server's clock.
#[server(prefix = "/fn", endpoint = "list_tasks", input = Json, output = api::JsonAnswer)]
pub async fn list_tasks(state: Option<RouteState>) -> Result<TasksData, ApiError> {
    let backend = crate::backend::backend()?;
    let page = backend
        .list_tasks(api::TaskQuery {
            state,
            limit: Some(api::TASK_PAGE_DEFAULT),
            cursor: None,
        })
        .await?;
    Ok(TasksData {
        page,
        now: backend.now(),
    })
}
