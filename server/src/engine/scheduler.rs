//! Deadlines live in the database. One loop sleeps (through the [`Clock`]) until
//! the earliest, fires every route due by then, and sleeps again; an armed
//! deadline wakes it early. On start, the restart pass of SPEC 5.
//!
//! [`Clock`]: crate::clock::Clock

use api::{TaskId, Timestamp};
use futures_util::StreamExt;
use policy::route::{OnRestart, RouteEvent, RouteState, on_restart};

use super::{Applied, Changes, Engine, Lane};
use crate::domain::AttemptOutcome;
use crate::store::StoreError;

/// Routes fired (or reconciled) per database round trip.
const BATCH: u32 = 512;

/// Due routes fired at once: their commits share the task writer's batches.
const FIRING: usize = 128;

impl Engine {
    /// Fire due deadlines forever.
    pub(super) async fn run_scheduler(self) {
        loop {
            if let Err(error) = self.fire_due().await {
                // Do not spin on a failing database: the due routes stay due.
                tracing::error!(error = %crate::error::chain(&error), "firing deadlines failed; trying again in a second");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            let next = match self.inner.store.next_deadline().await {
                Ok(next) => next,
                Err(error) => {
                    tracing::error!(error = %error, "reading the next deadline failed");
                    // Try again in a second rather than never.
                    Some(self.now().as_millis() + 1_000)
                }
            };
            let clock = self.inner.clock.clone();
            match next {
                Some(deadline_ms) => {
                    tokio::select! {
                        () = self.inner.wake.notified() => {}
                        () = clock.sleep_until(Timestamp::from_millis(deadline_ms)) => {}
                    }
                }
                None => self.inner.wake.notified().await,
            }
        }
    }

    /// Keep the route event log bounded, once a minute (of real time: it is upkeep,
    /// not a deadline).
    pub(super) async fn run_pruner(self) {
        let mut every_minute = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            every_minute.tick().await;
            if let Err(error) = self
                .inner
                .store
                .prune_events(self.inner.settings.events_kept)
                .await
            {
                tracing::warn!(error = %error, "pruning route events failed");
            }
        }
    }

    /// Fire every route due now: each `DeadlineReached` is fenced by the generation
    /// read with it, so a route a person acted on meanwhile is left alone. The
    /// scheduler calls this; so may anyone (a test making sure nothing is due):
    /// firing twice fires once. Answers how many routes it fired.
    pub async fn fire_due(&self) -> Result<usize, StoreError> {
        let mut fired = 0;
        loop {
            let now_ms = self.now().as_millis();
            let due = self.inner.store.due_routes(now_ms, BATCH).await?;
            let count = due.len();
            // Earliest first, many at once.
            let mut firing = futures_util::stream::iter(due)
                .map(|(id, generation)| async move { self.fire(&id, generation, now_ms).await })
                .buffer_unordered(FIRING);
            // Every started firing runs to its end, even after one fails: a commit
            // sent to the writer is acted on.
            let mut failed = None;
            while let Some(outcome) = firing.next().await {
                match outcome {
                    Ok(true) => fired += 1,
                    Ok(false) => {}
                    Err(error) => {
                        failed.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = failed {
                return Err(error);
            }
            if count < BATCH as usize {
                return Ok(fired);
            }
        }
    }

    async fn fire(&self, id: &TaskId, generation: i64, now_ms: i64) -> Result<bool, StoreError> {
        let record = match self.inner.store.get_route(id).await {
            Ok(record) => record,
            Err(StoreError::NotFound { .. }) => return Ok(false),
            Err(error) => return Err(error),
        };
        if record.route.generation != generation {
            return Ok(false);
        }
        let task = self.snapshot(id).await?;
        let deadline_ms = record.route.deadline_ms.unwrap_or(now_ms);
        let applied = self
            .settle(
                &task,
                &record,
                RouteEvent::DeadlineReached,
                Changes::default(),
            )
            .await?;
        let fired = matches!(applied, Applied::Committed(_));
        if fired {
            #[allow(clippy::cast_precision_loss)]
            let lateness_s = (now_ms - deadline_ms).max(0) as f64 / 1_000.0;
            metrics::histogram!("switchback_deadline_lateness_seconds").record(lateness_s);
        }
        Ok(fired)
    }

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
                .routes_in(
                    &[
                        RouteState::Queued,
                        RouteState::Retrying,
                        RouteState::Running,
                    ],
                    BATCH,
                    after.clone(),
                )
                .await?;
            let Some(last) = routes.last() else {
                break;
            };
            after = Some(last.task_id.clone());
            let now = self.now();
            for record in routes {
                touched += 1;
                match on_restart(&record.route, now.as_millis()) {
                    OnRestart::Enqueue => {
                        self.enqueue(record.task_id.clone(), Lane::of(record.route.state));
                    }
                    OnRestart::Apply(RouteEvent::Interrupted) => {
                        let detail = self.inner.store.get_task(&record.task_id).await?;
                        let dangling = detail.end_unfinished(AttemptOutcome::Interrupted, now);
                        self.settle(
                            &detail.task,
                            &detail.route,
                            RouteEvent::Interrupted,
                            Changes {
                                finish_attempt: dangling,
                                ..Changes::default()
                            },
                        )
                        .await?;
                    }
                    OnRestart::Apply(_) | OnRestart::Rearm | OnRestart::Nothing => {}
                }
            }
        }
        tracing::info!(routes = touched, "restart reconciliation done");
        Ok(touched)
    }
}
