//! A person's pause of automatic recovery, everywhere or on one provider.
//!
//! The pauses live in the store, so they survive a restart and every replica
//! reads the same ones. The scheduler's reads leave a paused route out (in
//! SQL), so no deadline on what is paused fires, and the route keeps its state
//! and deadline. The dispatcher keeps what the store says is paused and holds
//! back a route due to send on it; a resume hands those over again, in the
//! order they were held back, and wakes the scheduler, which fires what came
//! due meanwhile earliest first. A replica hears of a pause or resume made on
//! another at its next upkeep (every second).

use std::sync::Mutex;

use api::{ProviderId, TaskId};

use super::Engine;
use super::wake::Lane;
use crate::domain::Pause;
use crate::store::StoreError;

/// What is paused, as last read, and the routes held back meanwhile: one lock,
/// so a route is never held back after the resume that would release it.
#[derive(Default)]
struct Held {
    current: Vec<Pause>,
    held_back: Vec<TaskId>,
}

/// The engine's pauses.
#[derive(Default)]
pub(super) struct Pauses {
    held: Mutex<Held>,
    /// Taken across a read of the store and its use, so two reads (a person's
    /// change and an upkeep) never apply out of order.
    reading: tokio::sync::Mutex<()>,
}

impl Pauses {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Engine {
    /// What is paused now: everything and each provider, oldest first.
    pub fn pauses(&self) -> Vec<Pause> {
        self.inner.pauses.held().current.clone()
    }

    /// The routes this engine holds back for a pause, in the order it met them.
    pub fn held_back(&self) -> Vec<TaskId> {
        self.inner.pauses.held().held_back.clone()
    }

    /// Hold `id` back when automatic recovery is paused on `provider_id` (or
    /// everywhere): it is handed to the dispatcher again on resume. Answers
    /// whether it was held back.
    pub(super) fn hold_back_if_paused(&self, id: &TaskId, provider_id: &ProviderId) -> bool {
        let mut held = self.inner.pauses.held();
        let paused = held.current.iter().any(|pause| {
            pause
                .provider_id
                .as_ref()
                .is_none_or(|id| id == provider_id)
        });
        if paused && !held.held_back.contains(id) {
            held.held_back.push(id.clone());
        }
        paused
    }

    /// Whether automatic recovery is paused on `provider_id` (or everywhere).
    pub(super) fn is_paused(&self, provider_id: &ProviderId) -> bool {
        self.inner.pauses.held().current.iter().any(|pause| {
            pause
                .provider_id
                .as_ref()
                .is_none_or(|id| id == provider_id)
        })
    }

    /// Read what is paused again; after a resume, hand the routes held back to
    /// the dispatcher (each is held back again if still paused) and let the
    /// scheduler read the deadlines that came due.
    pub(super) async fn reload_pauses(&self) -> Result<(), StoreError> {
        let _reading = self.inner.pauses.reading.lock().await;
        let now = self.inner.store.list_pauses().await?;
        let released = {
            let mut held = self.inner.pauses.held();
            let resumed = held.current.iter().any(|pause| !now.contains(pause));
            held.current = now;
            if resumed {
                Some(std::mem::take(&mut held.held_back))
            } else {
                None
            }
        };
        if let Some(released) = released {
            for id in released {
                self.enqueue(id, Lane::Due);
            }
            self.inner.alarm.wake.notify_one();
        }
        Ok(())
    }

    /// A person pauses (`paused`) or resumes automatic recovery on
    /// `provider_id` (`None`: everywhere). Answers whether it changed anything.
    pub async fn set_pause(
        &self,
        provider_id: Option<&ProviderId>,
        paused: bool,
    ) -> Result<bool, StoreError> {
        let now_ms = self.now().as_millis();
        let changed = self
            .inner
            .store
            .set_pause(provider_id, paused, now_ms)
            .await?;
        if changed {
            tracing::info!(
                provider_id = provider_id.map_or("(everywhere)", ProviderId::as_str),
                paused,
                "a person {} automatic recovery",
                if paused { "paused" } else { "resumed" }
            );
        }
        self.reload_pauses().await?;
        Ok(changed)
    }
}
