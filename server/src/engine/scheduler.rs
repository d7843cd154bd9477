//! Deadlines live in the database. One loop sleeps (through the [`Clock`]) until
//! the earliest, starts firing every route due by then, and sleeps again; an
//! armed deadline wakes it early. Firings run on their own (a bounded number at
//! once, their commits sharing the task writer's batches), so a deadline that
//! comes while others are being written is fired when it comes, not after them.
//!
//! [`Clock`]: crate::clock::Clock

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use api::{TaskId, Timestamp};
use futures_util::StreamExt;
use policy::route::RouteEvent;
use tokio::sync::{Notify, Semaphore};

use super::commit::Changes;
use super::{Engine, EngineError};
use crate::domain::RouteRecord;
use crate::store::StoreError;

/// Routes fired per database round trip.
const BATCH: u32 = 512;

/// Due routes fired at once (or waiting, read ahead, for their deadline).
const FIRING: usize = 128;

/// How long before a deadline the scheduler reads it: the read is out of the
/// way when the deadline comes.
const LEAD_MS: i64 = 25;

/// The routes being fired, each with whether a read found it due again meanwhile
/// (and so left it alone).
struct Firings {
    set: Mutex<HashMap<TaskId, bool>>,
    wake: Arc<Notify>,
}

impl Firings {
    fn new(wake: Arc<Notify>) -> Arc<Self> {
        Arc::new(Self {
            set: Mutex::default(),
            wake,
        })
    }

    /// Mark a due route as being fired, or answer `None` when it already is (a
    /// read skips it, and is told to look again once that firing ends).
    fn begin(self: &Arc<Self>, id: &TaskId) -> Option<Firing> {
        let mut set = self
            .set
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(skipped) = set.get_mut(id) {
            *skipped = true;
            return None;
        }
        set.insert(id.clone(), false);
        Some(Firing {
            firings: self.clone(),
            id: id.clone(),
        })
    }
}

/// A route being fired; unmarked when dropped, however the firing ends. A read
/// that met it while it was being fired skipped it, yet its route may have a new
/// deadline by now (the firing's commit runs its effects, which can commit the
/// next transition before the firing itself resumes): the scheduler looks again.
struct Firing {
    firings: Arc<Firings>,
    id: TaskId,
}

impl Drop for Firing {
    fn drop(&mut self) {
        let skipped = self
            .firings
            .set
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .remove(&self.id)
            .unwrap_or(false);
        if skipped {
            self.firings.wake.notify_one();
        }
    }
}

impl Engine {
    /// Fire due deadlines forever. The scheduler wakes [`LEAD_MS`] before the
    /// earliest deadline and reads the routes due by then, so the read is done
    /// when the deadline comes; each firing waits for its own deadline (never
    /// firing early) and commits. Between wakes it reads nothing: a deadline armed
    /// later than the one it sleeps toward does not wake it.
    pub(super) async fn run_scheduler(self) {
        use std::sync::atomic::Ordering::SeqCst;
        // Routes being fired: still due in the database until their commit lands.
        let firings = Firings::new(self.inner.alarm.wake.clone());
        let permits = Arc::new(Semaphore::new(FIRING));
        loop {
            self.inner.alarm.sleeping_until_ms.store(i64::MIN, SeqCst);
            self.inner.alarm.earliest_armed_ms.store(i64::MAX, SeqCst);
            let horizon_ms = self.now().as_millis() + LEAD_MS;
            let due = match self.inner.store.due_routes(horizon_ms, BATCH).await {
                Ok(due) => due,
                // A stop closes the store under it: no failure, and nothing to retry.
                Err(_) if self.is_stopping() => return,
                Err(error) => {
                    // Do not spin on a failing database: the due routes stay due.
                    tracing::error!(error = %crate::error::chain(&error), "reading due deadlines failed; trying again in a second");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            let backlog = due.len() == BATCH as usize;
            for record in due {
                let Some(marked) = firings.begin(&record.task_id) else {
                    continue;
                };
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return;
                };
                let engine = self.clone();
                tokio::spawn(async move {
                    if let Some(deadline_ms) = record.route.deadline_ms {
                        let clock = engine.inner.clock.clone();
                        clock.sleep_until(Timestamp::from_millis(deadline_ms)).await;
                    }
                    let fired = engine.fire(record).await;
                    // No longer firing (even on a panic: `Firing` unmarks it when dropped).
                    let id = marked.id.clone();
                    drop(marked);
                    drop(permit);
                    match fired {
                        Ok(Fired::Committed) => {}
                        // Claimed by another replica's transaction, which moves it
                        // (if that one fails, the next upkeep looks again).
                        Ok(Fired::Claimed) if engine.inner.store.is_shared() => {}
                        // On a database of its own, a refusal at the same
                        // generation means the clock stepped back between the
                        // sleep and the commit: the deadline is still ahead, and
                        // no upkeep would look again.
                        Ok(Fired::Claimed) => engine.inner.alarm.wake.notify_one(),
                        // The route had moved on: it may have a new deadline that
                        // a read skipped while this firing held it.
                        Ok(Fired::MovedOn) => engine.inner.alarm.wake.notify_one(),
                        Err(_) if engine.is_stopping() => {}
                        Err(error) => {
                            // Still due: look again in a second, rather than spin on
                            // a failing database.
                            tracing::error!(task_id = %id, error = %crate::error::chain(&error), "firing a deadline failed; trying again in a second");
                            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                            engine.inner.alarm.wake.notify_one();
                        }
                    }
                });
            }
            if backlog {
                tokio::task::yield_now().await;
                continue;
            }
            // The next deadline after the ones just handed over, or one armed
            // since the read began, whichever is earlier.
            let next = match self.inner.store.next_deadline(horizon_ms).await {
                Ok(next) => next,
                Err(_) if self.is_stopping() => return,
                Err(error) => {
                    tracing::error!(error = %error, "reading the next deadline failed");
                    // Try again in a second rather than never.
                    Some(horizon_ms + 1_000)
                }
            };
            let mut until_ms = next.unwrap_or(i64::MAX);
            self.inner.alarm.sleeping_until_ms.store(until_ms, SeqCst);
            until_ms = until_ms.min(self.inner.alarm.earliest_armed_ms.load(SeqCst));
            let clock = self.inner.clock.clone();
            if until_ms == i64::MAX {
                self.inner.alarm.wake.notified().await;
            } else {
                tokio::select! {
                    () = self.inner.alarm.wake.notified() => {}
                    () = clock.sleep_until(Timestamp::from_millis(until_ms.saturating_sub(LEAD_MS))) => {}
                }
            }
        }
    }

    /// Fire every route due now, and wait for them: each `DeadlineReached` is fenced
    /// by the generation it was read at, so a route a person acted on meanwhile is
    /// left alone. For whoever must know nothing is due (a test, the restart
    /// bench): firing twice fires once, and a route another transaction held
    /// (skipped, not waited for) is read again until it has moved or is no longer
    /// this replica's. Answers how many routes it fired.
    pub async fn fire_due(&self) -> Result<usize, StoreError> {
        let mut fired = 0;
        loop {
            let now_ms = self.now().as_millis();
            let due = self.inner.store.due_routes(now_ms, BATCH).await?;
            let count = due.len();
            let mut claimed = 0;
            // Earliest first, many at once.
            let mut firing = futures_util::stream::iter(due)
                .map(|record| self.fire(record))
                .buffer_unordered(FIRING);
            // Every started firing runs to its end, even after one fails: a commit
            // sent to the writer is acted on.
            let mut failed = None;
            while let Some(outcome) = firing.next().await {
                match outcome {
                    Ok(Fired::Committed) => fired += 1,
                    Ok(Fired::MovedOn) => {}
                    Ok(Fired::Claimed) => claimed += 1,
                    Err(error) => {
                        failed.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = failed {
                return Err(error);
            }
            if claimed > 0 {
                // Let the transaction that holds them end (a moment of real
                // time: it is another's commit, not a deadline), then read again.
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            } else if count < BATCH as usize {
                return Ok(fired);
            }
        }
    }

    /// Fire one due route as it was read.
    async fn fire(&self, record: RouteRecord) -> Result<Fired, StoreError> {
        let task = match self.snapshot(&record.task_id).await {
            Ok(task) => task,
            Err(StoreError::NotFound { .. }) => return Ok(Fired::MovedOn),
            Err(error) => return Err(error),
        };
        // Its lateness is measured once it is durable (`Engine::carry_out`).
        match self
            .apply(
                &task,
                &record,
                RouteEvent::DeadlineReached,
                Changes::default(),
            )
            .await
        {
            Ok(_) => Ok(Fired::Committed),
            // Refused at the generation it was read at: its claim is another's.
            Err(EngineError::Stale { current, .. })
                if current.route.generation == record.route.generation =>
            {
                self.inner
                    .stepped_aside
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                metrics::counter!("switchback_firings_stepped_aside_total").increment(1);
                Ok(Fired::Claimed)
            }
            Err(EngineError::Stale { .. }) => Ok(Fired::MovedOn),
            Err(error) => Err(error.into_store_error()),
        }
    }
}

/// What became of one firing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fired {
    /// The deadline's transition is committed.
    Committed,
    /// The route had moved on since it was read (or its task is gone).
    MovedOn,
    /// Another replica's transaction held the route (its claim, or a person's
    /// action there): that one moves it.
    Claimed,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn woken(wake: &Notify) -> bool {
        use std::future::Future;
        let notified = std::pin::pin!(wake.notified());
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        notified.poll(&mut context).is_ready()
    }

    #[test]
    fn a_route_met_while_it_is_fired_is_looked_at_again_when_the_firing_ends() {
        let wake = Arc::new(Notify::new());
        let firings = Firings::new(wake.clone());
        let id = TaskId::new("a");
        let first = firings.begin(&id).expect("not being fired yet");
        assert!(firings.begin(&id).is_none(), "fired once at a time");
        assert!(!woken(&wake), "nothing to look at while it is fired");
        drop(first);
        assert!(woken(&wake), "the skipped read is made again");
        assert!(
            firings.begin(&id).is_some(),
            "unmarked once its firing ended"
        );
    }

    #[test]
    fn a_firing_nobody_met_ends_without_a_wake() {
        let wake = Arc::new(Notify::new());
        let firings = Firings::new(wake.clone());
        drop(firings.begin(&TaskId::new("a")));
        assert!(!woken(&wake));
    }
}
