//! The restart pass (SPEC 5): what a previous run (or a replica that went away)
//! left is taken up once, a batch of routes at a time: routes with nothing sent
//! are dispatched, and routes whose attempt was started and never finished are
//! held as interrupted, their attempts finished as interrupted, in one commit a
//! batch (a read a state, two reads and one write for a batch of 2,048, not a
//! read and a transaction a route; a batch is taken up while the next batches
//! are listed, four at most at once). Passed deadlines fire from the
//! scheduler's first pass, and future ones stay armed (they are in the database).

use std::collections::HashMap;

use api::{AttemptId, TaskId};
use policy::route::{OnRestart, RouteEvent, RouteState, on_restart};

use super::commit::Changes;
use super::wake::Lane;
use super::{Engine, EngineError};
use crate::domain::{AttemptEnd, AttemptOutcome, RouteRecord, Task};
use crate::store::StoreError;

/// The states of a route some process must move: queued or retrying (to be
/// dispatched) and running (a call in flight).
pub(super) const UNMOVED: [RouteState; 3] = [
    RouteState::Queued,
    RouteState::Retrying,
    RouteState::Running,
];

/// Routes read, and taken up, at a time.
pub(super) const TAKE_UP_BATCH: u32 = 2_048;

/// Pages taken up at once (each page's tasks read, then its holds committed)
/// while the next page's routes are read: on PostgreSQL a page's reads and
/// commit take longer than listing the next, and pages (of routes no other
/// page has) go side by side.
const PAGES_IN_FLIGHT: usize = 4;

/// The pages being taken up and not yet awaited, oldest first.
type Committing = std::collections::VecDeque<tokio::task::JoinHandle<Result<usize, StoreError>>>;

/// A page of routes taken up, read and not yet committed: how many were
/// dispatched, and the running ones to hold, each with its task and its
/// unfinished attempt.
struct Holds {
    dispatched: usize,
    running: Vec<(Task, RouteRecord, Option<AttemptId>)>,
}

impl Engine {
    /// SPEC 5, restart: `queued` and `retrying` routes (no attempt started) are
    /// dispatched; a `running` route's attempt was started and never finished, so it
    /// is ambiguous: the route is held (`interrupted`) and the attempt finished as
    /// interrupted, in one commit. Probe claims are released: no attempt survives a
    /// restart. Pages are taken up side by side while the next are listed.
    /// Answers how many routes it dispatched or held.
    pub(super) async fn reconcile(&self) -> Result<usize, StoreError> {
        self.inner.store.release_probes().await?;
        let mut touched = 0;
        let mut committing = Committing::new();
        let read = self.take_up_pages(&mut touched, &mut committing).await;
        // The last pages' holds, whatever became of the reading: a commit is
        // never left running on its own.
        let mut failed = None;
        for previous in committing {
            match joined(previous.await) {
                Ok(held) => touched += held,
                Err(error) => failed = Some(error),
            }
        }
        if let Some(error) = failed {
            return Err(error);
        }
        read?;
        tracing::info!(routes = touched, "restart reconciliation done");
        Ok(touched)
    }

    /// Every page of unmoved routes, in task id order: each page taken up (in
    /// `committing`: its tasks read, its holds committed) while the next pages
    /// are listed, at most [`PAGES_IN_FLIGHT`] at once, the oldest awaited
    /// first. Counts what was dispatched or held in `touched`.
    async fn take_up_pages(
        &self,
        touched: &mut usize,
        committing: &mut Committing,
    ) -> Result<(), StoreError> {
        let mut after: Option<TaskId> = None;
        loop {
            let routes = self
                .inner
                .store
                .routes_in(&UNMOVED, TAKE_UP_BATCH, after.clone())
                .await?;
            let Some(last) = routes.last() else {
                return Ok(());
            };
            after = Some(last.task_id.clone());
            if committing.len() >= PAGES_IN_FLIGHT
                && let Some(oldest) = committing.pop_front()
            {
                *touched += joined(oldest.await)?;
            }
            let engine = self.clone();
            committing.push_back(tokio::spawn(async move { engine.take_up(&routes).await }));
        }
    }

    /// Routes that no process is moving (a restart's, or a replica's that went
    /// away): dispatched if nothing was sent, held as interrupted if their attempt
    /// was started and never finished. A route that moved on since it was read
    /// (another replica took it, or its owner was alive after all) is left alone:
    /// the hold is fenced by the generation it was read at. Answers how many it
    /// dispatched or held.
    pub(super) async fn take_up(&self, routes: &[RouteRecord]) -> Result<usize, StoreError> {
        let holds = self.read_holds(routes).await?;
        Ok(holds.dispatched + self.hold(holds.running).await?)
    }

    /// The first half of taking routes up: those with nothing sent are
    /// dispatched now; for the running ones, their tasks and unfinished
    /// attempts are read (two reads for the page).
    async fn read_holds(&self, routes: &[RouteRecord]) -> Result<Holds, StoreError> {
        let now = self.now();
        let mut dispatched = 0;
        let mut running = Vec::new();
        for record in routes {
            match on_restart(&record.route, now.as_millis()) {
                OnRestart::Enqueue => {
                    self.enqueue(record.task_id.clone(), Lane::of(record.route.state));
                    dispatched += 1;
                }
                OnRestart::Interrupt => running.push(record),
                OnRestart::Fire | OnRestart::Rearm | OnRestart::Nothing => {}
            }
        }
        if running.is_empty() {
            return Ok(Holds {
                dispatched,
                running: Vec::new(),
            });
        }
        let ids: Vec<TaskId> = running
            .iter()
            .map(|record| record.task_id.clone())
            .collect();
        let mut tasks: HashMap<TaskId, Task> = self
            .inner
            .store
            .get_snapshots(&ids)
            .await?
            .into_iter()
            .map(|task| (task.id.clone(), task))
            .collect();
        let mut unfinished: HashMap<TaskId, AttemptId> = self
            .inner
            .store
            .unfinished_attempts(&ids)
            .await?
            .into_iter()
            .collect();
        let running = running
            .into_iter()
            .filter_map(|record| {
                let task = tasks.remove(&record.task_id)?;
                let attempt = unfinished.remove(&record.task_id);
                Some((task, record.clone(), attempt))
            })
            .collect();
        Ok(Holds {
            dispatched,
            running,
        })
    }

    /// The second half: each running route held as interrupted and its attempt
    /// finished as interrupted (a gateway call's stopped, its client gone, and its
    /// attempt cancelled), every hold in one commit, each fenced on its own.
    /// Answers how many were held.
    async fn hold(
        &self,
        running: Vec<(Task, RouteRecord, Option<AttemptId>)>,
    ) -> Result<usize, StoreError> {
        if running.is_empty() {
            return Ok(0);
        }
        let now = self.now();
        let batch = running
            .iter()
            .map(|(task, record, attempt)| {
                // A gateway call's client waited on the process that went away:
                // nobody is left to decide about it, or to read its answer.
                let (event, outcome) = if task.gateway.is_some() {
                    (RouteEvent::ClientCancelled, AttemptOutcome::Cancelled)
                } else {
                    (RouteEvent::Interrupted, AttemptOutcome::Interrupted)
                };
                let finish_attempt = attempt
                    .clone()
                    .map(|attempt| (attempt, AttemptEnd::bare(outcome, now)));
                (
                    task,
                    record,
                    event,
                    Changes {
                        finish_attempt,
                        ..Changes::default()
                    },
                )
            })
            .collect();
        self.apply_all(batch)
            .await
            .map_err(EngineError::into_store_error)
    }
}

/// A spawned commit's answer; one that panicked is a failed write.
fn joined(
    answer: Result<Result<usize, StoreError>, tokio::task::JoinError>,
) -> Result<usize, StoreError> {
    answer.unwrap_or_else(|_| Err(StoreError::Write("a restart commit panicked".to_owned())))
}
