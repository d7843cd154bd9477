//! The most unfinished tasks a server holds (`--max-open-tasks`): past it, a
//! new task is refused with 429 until some finish. The count is the store's
//! (every replica's tasks), read at most once a second and counted up by
//! this server's own creations in between, so a burst of creations does not
//! each scan the routes.

use std::sync::{Arc, Mutex};

use api::ApiError;
use policy::route::RouteState;

use crate::error::AppError;
use crate::store::Store;

/// How long a count of open tasks is trusted.
const RECOUNT_AFTER_MS: i64 = 1_000;

/// The limit, and the last count.
#[derive(Debug, Clone)]
pub struct OpenTasks {
    limit: u64,
    counted: Arc<Mutex<Option<(i64, u64)>>>,
}

impl OpenTasks {
    /// At most `limit` unfinished tasks; 0 for no limit.
    pub fn at_most(limit: u64) -> Self {
        Self {
            limit,
            counted: Arc::default(),
        }
    }

    /// No limit.
    pub fn unlimited() -> Self {
        Self::at_most(0)
    }

    /// Refuse a new task when the store holds the limit already.
    pub async fn check(&self, store: &dyn Store, now_ms: i64) -> Result<(), AppError> {
        if self.limit == 0 {
            return Ok(());
        }
        let cached = *self
            .counted
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let open = match cached {
            Some((at_ms, open)) if now_ms.saturating_sub(at_ms) < RECOUNT_AFTER_MS => open,
            _ => {
                let open = store
                    .count_routes()
                    .await?
                    .into_iter()
                    .filter(|(state, _)| {
                        !matches!(state, RouteState::Completed | RouteState::Stopped)
                    })
                    .map(|(_, count)| u64::try_from(count).unwrap_or(0))
                    .sum();
                *self
                    .counted
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner()) = Some((now_ms, open));
                open
            }
        };
        if open >= self.limit {
            return Err(ApiError::too_many_tasks(self.limit).into());
        }
        Ok(())
    }

    /// Count a task this server just created.
    pub fn created(&self) {
        if let Some((_, open)) = self
            .counted
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .as_mut()
        {
            *open = open.saturating_add(1);
        }
    }
}
