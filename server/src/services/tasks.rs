use api::read::Read;
use api::{
    ActionRequest, ApiError, ErrorCode, FieldError, FieldPath, TaskId, TaskPage, TaskQuery,
    TaskRequest, TaskView, TurnRequest,
};

use super::{Services, new_id};
use crate::domain::Task;
use crate::engine::views::{task_summary, task_view};
use crate::engine::{EngineError, task_write, views};
use crate::error::AppError;
use crate::store::StoreError;

/// The longest `Idempotency-Key` the server keeps, in characters.
pub const IDEMPOTENCY_KEY_MAX_CHARS: usize = 200;

impl Services {
    /// Start a task on a snapshot of its profile, or (with an `Idempotency-Key`
    /// already used) answer the first task and `false`.
    pub async fn create_task(
        &self,
        request: Read<TaskRequest>,
        idempotency_key: Option<String>,
    ) -> Result<(TaskView, bool), AppError> {
        let request = request.check(TaskRequest::check)?;
        if let Some(key) = &idempotency_key {
            if key.trim().is_empty() || key.chars().count() > IDEMPOTENCY_KEY_MAX_CHARS {
                return Err(ApiError::invalid_header(
                    "Idempotency-Key",
                    &format!("must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters"),
                )
                .into());
            }
            // A repeat answers the first task, whatever became of its profile since.
            if let Some(first) = self.store.task_by_idempotency_key(key).await? {
                return Ok((self.named(task_view(&first)).await?, false));
            }
        }
        let profile = match self.store.get_profile(&request.profile_id).await {
            Ok(profile) => profile,
            Err(StoreError::NotFound { .. }) => {
                return Err(vec![FieldError::new(
                    &FieldPath::root().field("profile_id"),
                    ErrorCode::NotFound,
                    "names no profile",
                )]
                .into());
            }
            Err(error) => return Err(error.into()),
        };
        let now = self.clock.now();
        self.open_tasks.check(&self.store, now.as_millis()).await?;
        let task = Task {
            id: TaskId::new(new_id()),
            profile_id: profile.id.clone(),
            profile_name: profile.name.clone(),
            candidates: profile.candidates,
            created_at: now,
            gateway: None,
        };
        let profile_name = task.profile_name.clone();
        let Some(write) = task_write(task, request.prompt, idempotency_key) else {
            return Err(ApiError::no_enabled_candidate(&profile_name).into());
        };
        let (detail, created) = self
            .engine
            .create_task(write)
            .await
            .map_err(|error| refused("Starting a task", error))?;
        if created {
            self.open_tasks.created();
        }
        Ok((self.named(task_view(&detail)).await?, created))
    }

    /// Tasks newest first, optionally in one state, a page at a time.
    pub async fn list_tasks(&self, query: TaskQuery) -> Result<TaskPage, AppError> {
        let (limit, cursor) = query.check()?;
        let listings = self.store.list_tasks(query.state, cursor, limit).await?;
        let next_cursor = (listings.len() == limit as usize)
            .then(|| listings.last())
            .flatten()
            .map(|last| {
                api::TaskCursor {
                    created_at_ms: last.task.created_at.as_millis(),
                    id: last.task.id.clone(),
                }
                .encode()
            });
        Ok(TaskPage {
            tasks: listings.iter().map(task_summary).collect(),
            next_cursor,
        })
    }

    /// A task's view with each candidate's provider named, and an agent CLI's
    /// time zone (a usage window's reset is shown in it).
    async fn named(&self, mut view: TaskView) -> Result<TaskView, AppError> {
        let stored = self.store.list_providers().await?;
        for candidate in &mut view.candidates {
            if let Some(provider) = stored.iter().find(|p| p.id == candidate.provider_id) {
                candidate.provider.clone_from(&provider.name);
                candidate.time_zone = provider.cli.as_ref().and_then(providers::cli::reset_zone);
            }
        }
        Ok(view)
    }

    /// One task with its route, attempts and turns.
    pub async fn get_task(&self, id: &TaskId) -> Result<TaskView, AppError> {
        self.named(task_view(&self.store.get_task(id).await?)).await
    }

    /// A follow-up turn on a completed task.
    pub async fn new_turn(
        &self,
        id: &TaskId,
        request: Read<TurnRequest>,
    ) -> Result<TaskView, AppError> {
        let request = request.check(TurnRequest::check)?;
        // A gateway call's client asked once and has its answer: a follow-up is
        // its next call, not a turn here.
        let task = self.store.get_snapshot(id).await?;
        if task.gateway.is_some() {
            let state = self.store.get_progress(id).await?.route.route.state;
            return Err(ApiError::NotAllowedNow {
                message: "A new turn is not valid on a gateway call: its client sends the \
                          whole conversation with each call. Nothing changed."
                    .to_owned(),
                state,
            }
            .into());
        }
        match self.engine.new_turn(id, request.prompt).await {
            Ok(detail) => self.named(task_view(&detail)).await,
            // A route that moved on since it was read is refused as it is now.
            Err(EngineError::Stale { current, .. }) => {
                Err(ApiError::not_allowed_now("A new turn", current.route.state).into())
            }
            Err(error) => Err(refused("A new turn", error)),
        }
    }

    /// A person's action on a route: the body (400/422), then the generation
    /// (409), then the state (422).
    pub async fn act(
        &self,
        id: &TaskId,
        request: Read<ActionRequest>,
    ) -> Result<TaskView, AppError> {
        let request = request.check(ActionRequest::check)?;
        let detail = self
            .engine
            .act(id, request.action, request.generation)
            .await
            .map_err(|error| refused(request.action.as_str(), error))?;
        self.named(task_view(&detail)).await
    }
}

/// The contract's error for what the engine refused: `what` is not allowed in the
/// route's state (422), or the route moved on since the generation sent (409, with
/// the route now).
fn refused(what: &str, error: EngineError) -> AppError {
    match error {
        EngineError::Refused { state, .. } => ApiError::not_allowed_now(what, state).into(),
        EngineError::Stale {
            sent,
            task,
            current,
        } => ApiError::stale_generation(sent, views::route_view(&task, &current)).into(),
        EngineError::Store(error) => error.into(),
    }
}
