//! Upkeep: the route event log and the circuits' history kept bounded, and, on a database other replicas
//! share, what they did or left looked at now and then.

use super::Engine;
use super::restart::{TAKE_UP_BATCH, UNMOVED};

/// How often a replica looks at what the others did or left.
const UPKEEP: std::time::Duration = std::time::Duration::from_secs(1);

/// The most route events one pruning write drops. At 1,000 gateway calls a
/// second a minute leaves some 200,000 to drop: in one write that held the
/// SQLite task writer (and every call waiting on it) for about 100 ms; in
/// steps of this size each adds some tenths of a millisecond to the batch it
/// joins.
const PRUNE_STEP: i64 = 500;

/// How long the circuits' history is kept: a week.
const CIRCUIT_HISTORY_KEPT_MS: i64 = 7 * 24 * 60 * 60 * 1000;

impl Engine {
    /// Keep the route event log and the circuits' history bounded, once a minute (of real time: it is upkeep,
    /// not a deadline), in steps of [`PRUNE_STEP`] events.
    pub(super) async fn run_pruner(self) {
        let mut every_minute = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            every_minute.tick().await;
            loop {
                match self
                    .inner
                    .store
                    .prune_events(self.inner.settings.events_kept, PRUNE_STEP)
                    .await
                {
                    Ok(dropped) if dropped < PRUNE_STEP.unsigned_abs() => break,
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(error = %error, "pruning route events failed");
                        break;
                    }
                }
            }
            let before_ms = self.now().as_millis() - CIRCUIT_HISTORY_KEPT_MS;
            if let Err(error) = self.inner.store.prune_circuit_history(before_ms).await {
                tracing::warn!(error = %error, "pruning the circuits' history failed");
            }
        }
    }

    /// On a database other replicas share, every [`UPKEEP`] of real time: take
    /// over the routes of a replica that went away, let parked routes look again
    /// at circuits another replica's probe may have closed, and let the scheduler
    /// read deadlines another replica armed (it hears only of its own).
    pub(super) async fn run_upkeep(self) {
        let mut every = tokio::time::interval(UPKEEP);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if self.is_stopping() {
                return;
            }
            // A pause or a resume made on another replica.
            if let Err(error) = self.reload_pauses().await {
                tracing::warn!(error = %error, "reading the pauses failed");
            }
            match self
                .inner
                .store
                .adopt_orphans(&UNMOVED, TAKE_UP_BATCH)
                .await
            {
                Ok(orphans) if orphans.is_empty() => {}
                Ok(orphans) => {
                    tracing::info!(
                        routes = orphans.len(),
                        "routes of a replica that went away taken over"
                    );
                    if let Err(error) = self.take_up(&orphans).await {
                        tracing::warn!(error = %crate::error::chain(&error), "taking over routes failed; this replica takes them up when it restarts");
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %crate::error::chain(&error), "looking for routes of replicas that went away failed")
                }
            }
            self.unpark();
            self.inner.alarm.wake.notify_one();
        }
    }
}
