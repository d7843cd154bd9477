//! Wake-ups: the scheduler told of a deadline earlier than the one it sleeps
//! toward, routes handed to the dispatcher in two lanes, and routes parked behind
//! another route's probe handed back when a probe finishes.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering::SeqCst};

use api::TaskId;
use policy::route::RouteState;
use tokio::sync::{Notify, mpsc};

use super::Engine;

/// What wakes the scheduler, and what it sleeps toward.
pub(super) struct Alarm {
    /// Wakes the scheduler: a deadline earlier than the one it sleeps toward was
    /// armed (or a firing left its route due).
    pub(super) wake: std::sync::Arc<Notify>,
    /// The deadline the scheduler sleeps toward (`i64::MIN` while it is awake): a
    /// deadline armed later than this one needs no wake, and no read.
    pub(super) sleeping_until_ms: AtomicI64,
    /// The earliest deadline armed since the scheduler last woke: what its read
    /// may have missed.
    pub(super) earliest_armed_ms: AtomicI64,
}

impl Alarm {
    pub(super) fn new() -> Self {
        Self {
            wake: std::sync::Arc::new(Notify::new()),
            sleeping_until_ms: AtomicI64::new(i64::MIN),
            earliest_armed_ms: AtomicI64::new(i64::MAX),
        }
    }

    /// A deadline at `deadline_ms` is in the database: the scheduler is told
    /// without a wake while it is awake (it looks at `earliest_armed_ms` before it
    /// sleeps), woken if it sleeps toward a later one, and left alone otherwise.
    /// Both sides write, then read the other's atomic (sequentially consistent),
    /// so at least one of them sees the other: no deadline is missed.
    pub(super) fn arm(&self, deadline_ms: i64) {
        self.earliest_armed_ms.fetch_min(deadline_ms, SeqCst);
        if deadline_ms < self.sleeping_until_ms.load(SeqCst) {
            self.wake.notify_one();
        }
    }
}

/// Which of the dispatcher's queues a route waits in. A route whose deadline came
/// (or that was already on its way) goes before new work, so a backlog of new
/// tasks does not make promised deadlines late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    /// Retrying, parked, or dispatched before: first.
    Due,
    /// New tasks, new turns, the next candidate: after.
    Fresh,
}

impl Lane {
    /// The lane of a route in `state` handed to the dispatcher.
    pub(super) fn of(state: RouteState) -> Self {
        if state == RouteState::Retrying {
            Self::Due
        } else {
            Self::Fresh
        }
    }
}

/// The dispatcher's sending ends, by lane.
pub(super) struct Senders {
    due: mpsc::UnboundedSender<TaskId>,
    fresh: mpsc::UnboundedSender<TaskId>,
}

/// The dispatcher's receiving ends.
pub(super) struct Lanes {
    pub(super) due: mpsc::UnboundedReceiver<TaskId>,
    pub(super) fresh: mpsc::UnboundedReceiver<TaskId>,
}

/// A pair of lanes.
pub(super) fn lanes() -> (Senders, Lanes) {
    let (due, due_receiver) = mpsc::unbounded_channel();
    let (fresh, fresh_receiver) = mpsc::unbounded_channel();
    (
        Senders { due, fresh },
        Lanes {
            due: due_receiver,
            fresh: fresh_receiver,
        },
    )
}

/// Routes that wait for a half-open circuit's probe, by nothing more than id:
/// handed to the dispatcher again when a probe finishes.
#[derive(Default)]
pub(super) struct Parked(Mutex<HashSet<TaskId>>);

impl Parked {
    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<TaskId>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn park(&self, id: &TaskId) {
        self.set().insert(id.clone());
    }

    /// Take `id` back out; answers whether it was parked.
    pub(super) fn unpark_one(&self, id: &TaskId) -> bool {
        self.set().remove(id)
    }

    fn drain(&self) -> Vec<TaskId> {
        self.set().drain().collect()
    }
}

impl Engine {
    /// Hand a route to the dispatcher.
    pub(super) fn enqueue(&self, id: TaskId, lane: Lane) {
        let senders = &self.inner.senders;
        let _ = match lane {
            Lane::Due => senders.due.send(id),
            Lane::Fresh => senders.fresh.send(id),
        };
    }

    /// Hand every parked route to the dispatcher again (a probe finished).
    pub(super) fn unpark(&self) {
        for id in self.inner.parked.drain() {
            self.enqueue(id, Lane::Due);
        }
    }
}
