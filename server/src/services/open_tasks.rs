//! The most unfinished tasks a server holds (`--max-open-tasks`): past it, a
//! new task is refused with 429 until some finish. The count is the store's
//! (every replica's tasks), counted up by this server's own creations and
//! counted again at most once a second. Only the first check counts in line;
//! later ones answer from the last count while one recount at a time runs
//! beside them, so no request waits for a count (under load, a count that
//! every request began the moment the last one went stale held them all up).

use std::sync::{Arc, Mutex};

use api::ApiError;

use crate::error::AppError;
use crate::store::{Store, StoreError};

/// How long a count of open tasks is trusted.
const RECOUNT_AFTER_MS: i64 = 1_000;

/// The limit, and the last count.
#[derive(Debug, Clone)]
pub struct OpenTasks {
    limit: u64,
    counted: Arc<Mutex<Counted>>,
}

#[derive(Debug, Default)]
struct Counted {
    /// When the store was last counted, and the count since (with this
    /// server's creations added).
    last: Option<(i64, u64)>,
    /// Whether a recount is under way.
    recounting: bool,
    /// This server's creations since the recount under way began.
    created_since: u64,
}

/// The longest a recount may take before it is given up.
const RECOUNT_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Marks the recount under way as done when dropped.
struct Recounting(OpenTasks);

impl Drop for Recounting {
    fn drop(&mut self) {
        self.0.lock().recounting = false;
    }
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
    pub async fn check(&self, store: &Arc<dyn Store>, now_ms: i64) -> Result<(), AppError> {
        if self.limit == 0 {
            return Ok(());
        }
        let (last, recount) = {
            let mut counted = self.lock();
            let stale = counted
                .last
                .is_some_and(|(at_ms, _)| now_ms.saturating_sub(at_ms) >= RECOUNT_AFTER_MS);
            let recount = stale && !counted.recounting;
            counted.recounting |= recount;
            (counted.last, recount)
        };
        let open = match last {
            Some((_, open)) => {
                if recount {
                    let (this, store) = (self.clone(), store.clone());
                    tokio::spawn(async move {
                        // However the recount ends (even by a panic), the next
                        // check may start another.
                        let _done = Recounting(this.clone());
                        this.lock().created_since = 0;
                        let counted =
                            tokio::time::timeout(RECOUNT_WITHIN, count(store.as_ref())).await;
                        let mut counted_now = this.lock();
                        match counted {
                            Ok(Ok(open)) => {
                                // Creations while it counted may not be in it.
                                let open = open.saturating_add(counted_now.created_since);
                                counted_now.last = Some((now_ms, open));
                            }
                            Ok(Err(error)) => tracing::warn!(
                                error = %error,
                                "counting open tasks failed; the next check counts again"
                            ),
                            Err(_) => tracing::warn!(
                                "counting open tasks took over 10 s; the next check counts again"
                            ),
                        }
                    });
                }
                open
            }
            None => {
                let open = count(store.as_ref()).await?;
                self.lock().last.get_or_insert((now_ms, open)).1
            }
        };
        if open >= self.limit {
            return Err(ApiError::too_many_tasks(self.limit).into());
        }
        Ok(())
    }

    /// Count a task this server just created.
    pub fn created(&self) {
        let mut counted = self.lock();
        counted.created_since = counted.created_since.saturating_add(1);
        if let Some((_, open)) = counted.last.as_mut() {
            *open = open.saturating_add(1);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counted> {
        self.counted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn count(store: &dyn Store) -> Result<u64, StoreError> {
    Ok(u64::try_from(store.count_open_routes().await?).unwrap_or(0))
}
