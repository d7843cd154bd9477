//! The restart pass (SPEC 5): what a previous run (or a replica that went away)
//! left is taken up once: routes with nothing sent are dispatched, a route whose
//! attempt was started and never finished is held as interrupted, passed deadlines
//! fire from the scheduler's first pass and future ones stay armed (they are in the
//! database).

use api::TaskId;
use futures_util::StreamExt;
use policy::route::{OnRestart, RouteEvent, RouteState, on_restart};

use super::commit::Changes;
use super::scheduler::{BATCH, FIRING};
use super::wake::Lane;
use super::{Engine, EngineError};
use crate::domain::{AttemptOutcome, RouteRecord};
use crate::store::StoreError;

/// The states of a route some process must move: queued or retrying (to be
/// dispatched) and running (a call in flight).
pub(super) const UNMOVED: [RouteState; 3] = [
    RouteState::Queued,
    RouteState::Retrying,
    RouteState::Running,
];

impl Engine {
    /// SPEC 5, restart: `queued` and `retrying` routes (no attempt started) are
    /// dispatched; a `running` route's attempt was started and never finished, so it
    /// is ambiguous: the route is held (`interrupted`) and the attempt finished as
    /// interrupted, in one commit. Passed deadlines fire from the scheduler's first
    /// pass; future ones are already armed (they are in the database). Probe claims
    /// are released: no attempt survives a restart. Answers how many routes it
    /// touched.
    pub(super) async fn reconcile(&self) -> Result<usize, StoreError> {
        self.inner.store.release_probes().await?;
        let mut touched = 0;
        let mut after: Option<TaskId> = None;
        loop {
            let routes = self
                .inner
                .store
                .routes_in(&UNMOVED, BATCH, after.clone())
                .await?;
            let Some(last) = routes.last() else {
                break;
            };
            after = Some(last.task_id.clone());
            // Many at once: their commits share the writer's batches (SQLite) or
            // the pool's connections (PostgreSQL), rather than one round trip,
            // and one fsync, after another.
            let mut reconciling = futures_util::stream::iter(&routes)
                .map(|record| async move { (&record.task_id, self.reconcile_route(record).await) })
                .buffer_unordered(FIRING);
            // Every one runs to its end, and every failure is told; the first
            // is the answer.
            let mut failed = None;
            while let Some((task_id, outcome)) = reconciling.next().await {
                match outcome {
                    Ok(()) => touched += 1,
                    Err(error) => {
                        tracing::warn!(task_id = %task_id, error = %crate::error::chain(&error), "reconciling a route after the restart failed");
                        failed.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = failed {
                return Err(error);
            }
        }
        tracing::info!(routes = touched, "restart reconciliation done");
        Ok(touched)
    }

    /// A route that no process is moving (a restart's, or a replica's that went
    /// away): dispatched if nothing was sent, held as interrupted if its attempt
    /// was started and never finished.
    pub(super) async fn reconcile_route(&self, record: &RouteRecord) -> Result<(), StoreError> {
        let now = self.now();
        match on_restart(&record.route, now.as_millis()) {
            OnRestart::Enqueue => {
                self.enqueue(record.task_id.clone(), Lane::of(record.route.state));
            }
            OnRestart::Interrupt => {
                let detail = self.inner.store.get_task(&record.task_id).await?;
                // Moved on since it was read (another replica took it, or its
                // owner was alive after all): not this pass's to interrupt.
                if detail.route.route.generation != record.route.generation {
                    return Ok(());
                }
                let dangling = detail.end_unfinished(AttemptOutcome::Interrupted, now);
                let task = std::sync::Arc::new(detail.task);
                match self
                    .apply(
                        &task,
                        &detail.route,
                        RouteEvent::Interrupted,
                        Changes {
                            finish_attempt: dangling,
                            ..Changes::default()
                        },
                    )
                    .await
                {
                    // Moved on meanwhile: not this pass's either.
                    Ok(_) | Err(EngineError::Stale { .. }) => {}
                    Err(error) => return Err(error.into_store_error()),
                }
            }
            OnRestart::Fire | OnRestart::Rearm | OnRestart::Nothing => {}
        }
        Ok(())
    }
}
